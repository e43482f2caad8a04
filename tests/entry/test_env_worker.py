"""``ding -m keygen`` and ``ding -m worker``: keys for remote workers, and a worker serving a real zmq manager."""

from __future__ import annotations

import logging
import os
import re
import socket
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path

import pytest

from ding.entry.env_worker import REGISTERED, WAIT_REPORT_EVERY, run_keygen, run_worker
from ding.envs.env_manager import ZmqEnvManager, create_env_manager
from ding.envs.env_manager.channels.zmq.worker import EXIT_CLOSED, EXIT_NO_MANAGER
from ding.errors import ConfigError
from dizoo.classic_control.cartpole.envs import CartPoleEnv

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_keygen_lists_what_it_made_and_refuses_a_name_twice(tmp_path: Path) -> None:
    summary = run_keygen(str(tmp_path / "keys"), "host-a")
    assert "created" in summary and "host-a.key_secret" in summary and "server.key_secret" in summary
    assert "env.manager.keys_dir" in summary
    with pytest.raises(ConfigError, match="worker key 'host-a' exists already"):
        run_keygen(str(tmp_path / "keys"), "host-a")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"connect": "udp://h:1"}, r"--connect must be tcp://HOST:PORT or ipc:///path, got 'udp://h:1'"),
        ({"manager_timeout": 0.0}, r"--manager-timeout must be a positive number of seconds, got 0\.0"),
        ({"connect_timeout": -1.0}, r"--connect-timeout must be a positive number of seconds, got -1\.0"),
    ],
)
def test_worker_refuses_bad_arguments(kwargs: dict[str, object], match: str, tmp_path: Path) -> None:
    args: dict[str, object] = {"connect": "tcp://127.0.0.1:1", "keys_dir": str(tmp_path), **kwargs}
    with pytest.raises(ConfigError, match=match):
        run_worker(**args)  # type: ignore[arg-type]


def test_worker_serves_a_manager_until_it_closes_the_worker(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    run_keygen(str(keys))
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    status: list[int] = []
    worker = threading.Thread(target=lambda: status.append(run_worker(endpoint, str(keys))), daemon=True)
    worker.start()
    cfg = {"type": "zmq", "endpoint": endpoint, "keys_dir": str(keys), "remote_workers": 1, "envs_per_worker": 2}
    with create_env_manager({**cfg, "episode_num": 1}, [partial(CartPoleEnv, cfg={})] * 2) as manager:
        assert isinstance(manager, ZmqEnvManager)
        manager.launch()
        assert [w["local"] for w in manager.workers] == [False] and manager.endpoint == endpoint
        while not manager.done:
            manager.step({i: 0 for i in manager.ready_obs_id})
    worker.join(20)
    assert status == [EXIT_CLOSED]
    assert not [h for h in logging.getLogger("ding.zmq").handlers if isinstance(h, logging.StreamHandler)]


def test_a_worker_nobody_answers_says_it_waits_then_exits_4(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    run_keygen(str(keys))
    endpoint = f"tcp://127.0.0.1:{free_port()}"  # nobody listens there
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "ding.entry.cli", "-m", "worker", "--connect", endpoint, "--keys", str(keys)]
    started = time.monotonic()
    done = subprocess.run([*command, "--manager-timeout", "2"], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == EXIT_NO_MANAGER == 4
    assert 2.0 <= time.monotonic() - started < 30
    waiting = re.findall(
        rf"INFO waiting for a manager at {endpoint}: ([\d.]+) s so far, giving up after 2\.0 s$", done.stderr, re.M
    )
    assert len(waiting) >= 2, done.stderr
    assert [float(s) for s in waiting] == sorted(float(s) for s in waiting) and float(waiting[-1]) < 2.0
    last = done.stderr.strip().splitlines()[-1]
    assert last.endswith(f"ERROR no manager answered at {endpoint} within 2.0 s; exiting")


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_a_worker_stops_saying_it_waits_once_a_manager_welcomes_it(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    run_keygen(str(keys))
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    records = Records()
    logging.getLogger("ding.zmq.worker").addHandler(records)
    status: list[int] = []
    try:
        worker = threading.Thread(
            target=lambda: status.append(run_worker(endpoint, str(keys), connect_timeout=20.0)), daemon=True
        )
        worker.start()
        time.sleep(WAIT_REPORT_EVERY + 1.0)  # the worker waits and says so, once
        cfg = {"type": "zmq", "endpoint": endpoint, "keys_dir": str(keys), "remote_workers": 1, "envs_per_worker": 2}
        with create_env_manager({**cfg, "episode_num": 1}, [partial(CartPoleEnv, cfg={})] * 2) as manager:
            manager.launch()
            time.sleep(WAIT_REPORT_EVERY + 1.0)  # long enough for another "waiting" line, were it still reporting
            while not manager.done:
                manager.step({i: 0 for i in manager.ready_obs_id})
        worker.join(20)
    finally:
        logging.getLogger("ding.zmq.worker").removeHandler(records)
    assert status == [EXIT_CLOSED]
    registered = next(i for i, m in enumerate(records.messages) if m.startswith(REGISTERED))
    waiting = [i for i, m in enumerate(records.messages) if m.startswith("waiting for a manager")]
    assert waiting and max(waiting) < registered
