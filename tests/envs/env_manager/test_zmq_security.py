"""Only peers holding the keys get in; garbage is dropped and logged; the manager never crashes or stalls.

Every hostile peer here is a real socket: a worker with an unlisted key, one with the wrong server
key, a plaintext zmq client, a raw TCP client, and a client with valid keys sending malformed,
unregistered and oversized messages. Pickled payloads carry a marker that would create a file if
they were ever unpickled.
"""

from __future__ import annotations

import logging
import os
import pickle
import socket
import subprocess
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import zmq

from ding.envs.env_manager import ZmqEnvManager, create_env_manager
from ding.envs.env_manager.channels.zmq.keys import generate_keys, load_worker_keys
from ding.envs.env_manager.channels.zmq.protocol import HEADER, HELLO, MAGIC, REPLY, VERSION, encode
from dizoo.classic_control.cartpole.envs import CartPoleEnv
from tests.envs.env_manager.envs import assert_same_trajectories, play, table_policy
from tests.envs.env_manager.zmq_support import RemoteWorkers, free_port, keys_dir, remote_workers, wait_until

__all__ = ["keys_dir", "remote_workers"]  # fixtures
CARTPOLE = partial(CartPoleEnv, cfg={})


class Bomb:
    """Unpickling this creates ``path``: proof that a payload was (or was not) unpickled."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.path), "w"))


def logged(caplog: pytest.LogCaptureFixture, text: str) -> bool:
    return any(text in record.getMessage() for record in caplog.records)


@pytest.fixture
def manager(keys_dir: Path, remote_workers: RemoteWorkers) -> Any:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    remote_workers.start(endpoint, keys_dir)
    cfg = {"type": "zmq", "endpoint": endpoint, "keys_dir": str(keys_dir), "remote_workers": 1, "local_workers": 1}
    cfg.update(heartbeat_interval=0.1, heartbeat_timeout=1.0, max_message_bytes=64 * 1024, episode_num=2)
    manager = create_env_manager(cfg, [CARTPOLE] * 2)
    manager.seed(0)
    manager.launch()
    yield manager
    manager.close()


def reference() -> Any:
    with create_env_manager({"type": "base", "episode_num": 2}, [CARTPOLE] * 2) as base:
        base.seed(0)
        base.launch()
        return play(base, table_policy(2))


def client(context: zmq.Context[zmq.Socket[bytes]], endpoint: str, keys: Any | None) -> zmq.Socket[bytes]:
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    if keys is not None:
        sock.curve_secretkey, sock.curve_publickey, sock.curve_serverkey = keys.secret, keys.public, keys.server_public
    sock.connect(endpoint)
    return sock


def test_worker_with_an_unlisted_key_is_refused_and_logged(
    manager: ZmqEnvManager,
    keys_dir: Path,
    remote_workers: RemoteWorkers,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "ding.zmq")
    intruder_keys = tmp_path / "intruder"
    generate_keys(intruder_keys)
    (intruder_keys / "server.key").write_bytes((keys_dir / "server.key").read_bytes())  # knows the server's key
    intruder = remote_workers.start(str(manager.endpoint), intruder_keys)
    assert wait_until(lambda: logged(caplog, "refused a worker connection from 127.0.0.1: its CURVE public key"), 20.0)
    assert intruder.pid not in [w["pid"] for w in manager.workers]
    assert_same_trajectories(play(manager, table_policy(2)), reference())


def test_worker_with_the_wrong_server_key_fails_the_handshake(
    manager: ZmqEnvManager, remote_workers: RemoteWorkers, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "ding.zmq")
    other = tmp_path / "other"
    generate_keys(other)  # a whole other key set: the server key does not match
    stranger = remote_workers.start(str(manager.endpoint), other)
    assert wait_until(lambda: logged(caplog, "security handshake failed"), 20.0)
    assert stranger.pid not in [w["pid"] for w in manager.workers]
    assert_same_trajectories(play(manager, table_policy(2)), reference())


def test_unauthenticated_clients_are_refused_and_nothing_is_unpickled(
    manager: ZmqEnvManager, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "ding.zmq")
    marker = tmp_path / "unpickled"
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    try:
        plain = client(context, str(manager.endpoint), None)  # no CURVE at all
        plain.send(encode(REPLY, pickle.dumps(Bomb(marker)), 0, 1))
        assert wait_until(lambda: logged(caplog, "security handshake failed"), 20.0)
        plain.close()
    finally:
        context.term()
    host, port = str(manager.endpoint)[len("tcp://") :].rsplit(":", 1)
    with socket.create_connection((host, int(port))) as raw:  # not even ZMTP
        raw.sendall(os.urandom(4096) + pickle.dumps(Bomb(marker)))
    assert_same_trajectories(play(manager, table_policy(2)), reference())
    assert not marker.exists()


def test_garbage_from_a_key_holder_is_dropped_counted_and_logged_a_few_lines_at_a_time(
    manager: ZmqEnvManager, keys_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "ding.zmq")
    marker = tmp_path / "unpickled"
    bomb = pickle.dumps(Bomb(marker))
    keys = load_worker_keys(keys_dir)
    garbage = [
        [b"two", b"frames"],
        [b"short"],
        [b"XX" + bytes(14)],
        [HEADER.pack(MAGIC, 99, REPLY, 0, 1) + bomb],
        [HEADER.pack(MAGIC, VERSION, 200, 0, 1) + bomb],
        [encode(HELLO, b"{not json")],
        [encode(HELLO, b'{"host": "x"}')],
        [encode(HELLO, b'{"host": "x", "pid": "abc", "version": 2}')],
        [encode(HELLO, b'{"host": "x", "pid": 7, "version": 1}')],
        [encode(REPLY, bomb, 0, 1)],  # a reply from a peer that never registered
    ]
    reasons = [
        "expected 1 frame, got 2",
        "shorter than the 16-byte header",
        "bad magic",
        "protocol version 99",
        "message kind 200 is not accepted",
        "dropped a malformed HELLO",
        "with keys ['host', 'pid', 'version']",
        "host must be a string and pid an int",
        "worker speaks protocol version 1",
        "which never registered",
    ]
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    sock = client(context, str(manager.endpoint), keys)
    try:
        for frames in garbage:
            sock.send_multipart(frames)
        assert wait_until(
            lambda: manager.refusals.get("malformed_message") == 9 and manager.refusals.get("unregistered_peer") == 1,
            20.0,
        ), manager.refusals
        sock.send(encode(REPLY, bytes(200 * 1024), 0, 1))  # over max_message_bytes (64 KiB)
        assert wait_until(
            lambda: logged(caplog, "closed (a worker exiting, a network failure, or a message over"), 20.0
        )
    finally:
        sock.close(0)
        context.term()
    assert_same_trajectories(play(manager, table_policy(2)), reference())
    assert not marker.exists()
    assert len(manager.workers) == 2
    refused = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert 1 <= len(refused) <= 3  # the first lines of the interval; the rest are counted
    assert all(any(reason in line for reason in reasons) for line in refused), refused
    manager.close()
    summary = [r.getMessage() for r in caplog.records if r.getMessage().startswith("refused connections and")]
    assert summary[-1].startswith("refused connections and messages: 10 in all - malformed_message x9 ("), summary
    assert "unregistered_peer x1" in summary[-1]


def test_the_manager_binds_to_loopback_by_default() -> None:
    with create_env_manager({"type": "zmq", "endpoint": "tcp"}, [CARTPOLE]) as manager:
        manager.launch()
        assert isinstance(manager, ZmqEnvManager) and str(manager.endpoint).startswith("tcp://127.0.0.1:")
        port = int(str(manager.endpoint).rsplit(":", 1)[1])
        listening = subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True).stdout
        assert [line.split()[3] for line in listening.splitlines()] == [f"127.0.0.1:{port}"]
