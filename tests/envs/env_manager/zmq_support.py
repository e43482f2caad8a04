"""Helpers of the zmq manager tests: remote workers as real processes, free ports, a TCP relay that can cut a link."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ding.envs.env_manager.channels.zmq.keys import generate_keys

ROOT = Path(__file__).resolve().parents[3]


def wait_until(condition: Callable[[], bool], limit: float = 10.0) -> bool:
    """Poll ``condition`` until it holds or ``limit`` seconds pass (returns whether it held)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:  # a zombie counts as gone
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class RemoteWorkers:
    """``ding -m worker`` processes, each in its own process group (as if started on another host)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(
        self, endpoint: str, keys: Path, name: str = "worker", *extra: str, prefix: tuple[str, ...] = ()
    ) -> subprocess.Popen[bytes]:
        log = open(self.tmp / f"worker{len(self.processes)}.log", "wb")  # noqa: SIM115 - closed by the child's exit
        command = [*prefix, sys.executable, "-m", "ding.entry.cli", "-m", "worker", "--connect", endpoint]
        command += ["--keys", str(keys), "--name", name, *extra]
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        log.close()
        self.processes.append(process)
        return process

    def log(self, index: int) -> str:
        return (self.tmp / f"worker{index}.log").read_text()

    def stop_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture
def remote_workers(tmp_path: Path) -> Iterator[RemoteWorkers]:
    workers = RemoteWorkers(tmp_path)
    yield workers
    workers.stop_all()


@pytest.fixture
def keys_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "keys"
    generate_keys(directory)
    return directory


class Relay:
    """A TCP relay to ``target`` that can cut every connection (and refuse new ones) until restored."""

    def __init__(self, target_port: int) -> None:
        self.target = ("127.0.0.1", target_port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.cut = threading.Event()
        self.refused = 0
        self.accepted = 0
        self.links: list[tuple[socket.socket, socket.socket]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            sockets = [self.listener] + [s for pair in self.links for s in pair]
            readable, _, _ = select.select(sockets, [], [], 0.05)
            for sock in readable:
                if sock is self.listener:
                    client, _ = self.listener.accept()
                    if self.cut.is_set():
                        client.close()
                        self.refused += 1
                        continue
                    self.accepted += 1
                    self.links.append((client, socket.create_connection(self.target)))
                    continue
                pair = next((p for p in self.links if sock in p), None)
                if pair is None:
                    continue
                other = pair[1] if sock is pair[0] else pair[0]
                try:
                    data = sock.recv(65536)
                    if data:
                        other.sendall(data)
                        continue
                except OSError:
                    pass
                self._close(pair)

    def _close(self, pair: tuple[socket.socket, socket.socket]) -> None:
        for sock in pair:
            with contextlib.suppress(OSError):
                sock.close()
        with contextlib.suppress(ValueError):
            self.links.remove(pair)

    def cut_links(self) -> None:
        """Close every relayed connection and refuse new ones (a network failure)."""
        self.cut.set()
        for pair in list(self.links):
            with contextlib.suppress(OSError):
                pair[0].shutdown(socket.SHUT_RDWR)

    def restore(self) -> None:
        self.cut.clear()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        for pair in list(self.links):
            self._close(pair)
        self.listener.close()
