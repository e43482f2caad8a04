"""``ding -m keygen`` and ``ding -m worker``: keys for remote workers, and a worker serving a real zmq manager."""

from __future__ import annotations

import logging
import socket
import threading
from functools import partial
from pathlib import Path

import pytest

from ding.entry.env_worker import run_keygen, run_worker
from ding.envs.env_manager import ZmqEnvManager, create_env_manager
from ding.envs.env_manager.channels.zmq.worker import EXIT_CLOSED
from ding.errors import ConfigError
from dizoo.classic_control.cartpole.envs import CartPoleEnv


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
