"""The zmq manager over ipc and tcp loopback, with local and remote workers, matches the serial manager.

The conformance suite runs against the ``zmq`` kind (ipc, one env per worker) unchanged; these tests
add tcp, several envs per worker, remote workers started with ``ding -m worker``, keys and config.
"""

from __future__ import annotations

import multiprocessing
import os
import stat
import time
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from gymnasium import spaces

from ding.entry.cli import main as cli_main
from ding.envs import BaseEnv, BaseEnvTimestep, EnvSpaces
from ding.envs.env_manager import ZmqEnvManager, create_env_manager
from ding.envs.env_manager.channels.zmq.keys import generate_keys, load_manager_keys, load_worker_keys
from ding.errors import ConfigError, WorkerTimeoutError
from dizoo.classic_control.cartpole.envs import CartPoleEnv
from tests.ding_cli import run_ding
from tests.envs.env_manager.conftest import MakeManager, make_manager
from tests.envs.env_manager.envs import DictObsEnv, Trajectories, assert_same_trajectories, play, table_policy
from tests.envs.env_manager.zmq_support import (
    ROOT,
    RemoteWorkers,
    alive,
    free_port,
    keys_dir,
    remote_workers,
)

__all__ = ["keys_dir", "remote_workers"]  # fixtures
CARTPOLE = partial(CartPoleEnv, cfg={})
DICT_OBS = partial(DictObsEnv, cfg={})
FAST = {"heartbeat_interval": 0.1, "heartbeat_timeout": 1.0}


def reference(env_fn: Callable[[], Any], n: int, seed: int, episodes: int) -> Trajectories:
    """Trajectories of the serial manager, the reference every zmq run must reproduce."""
    with make_manager("base", [env_fn] * n, episode_num=episodes) as manager:
        manager.seed(seed)
        manager.launch()
        return play(manager, table_policy(3 if env_fn is DICT_OBS else 2))


@pytest.mark.parametrize("kind", ["zmq-tcp", "zmq-2"])
@pytest.mark.parametrize("env", ["cartpole", "dict_obs"])
def test_tcp_and_several_envs_per_worker_match_the_serial_manager(
    kind: str, env: str, new_manager: MakeManager
) -> None:
    env_fn = CARTPOLE if env == "cartpole" else DICT_OBS
    expected = reference(env_fn, 4, seed=5, episodes=2)
    private = {"shared_memory": False} if kind == "zmq-tcp" else {}  # tcp: data in the messages, as for remote workers
    manager = new_manager(kind, [env_fn] * 4, episode_num=2, **private)
    manager.seed(5)
    manager.launch()
    assert isinstance(manager, ZmqEnvManager)
    assert manager.endpoint is not None and manager.endpoint.startswith(
        "tcp://127.0.0.1:" if kind == "zmq-tcp" else "ipc://"
    )
    pids = manager.worker_pids
    assert len(pids) == (4 if kind == "zmq-tcp" else 2) and all(alive(p) for p in pids)
    assert bool(manager.shared_memory_names) == (kind == "zmq-2")
    assert manager.worker_hosts == [os.uname().nodename] * len(pids)
    assert_same_trajectories(play(manager, table_policy(3 if env == "dict_obs" else 2)), expected)
    manager.close()
    assert not any(alive(p) for p in pids)


def test_step_batch_matches_step(new_manager: MakeManager) -> None:
    a = new_manager("zmq-2", [CARTPOLE] * 4)
    b = new_manager("base", [CARTPOLE] * 4)
    for manager in (a, b):
        manager.seed(1)
        manager.launch()
    for k in range(60):
        actions = [(k + i) % 2 for i in range(4)]
        x, y = a.step_batch(actions), b.step_batch(actions)
        assert (x.obs == y.obs).all() and (x.reward == y.reward).all() and (x.done == y.done).all()
        assert sorted(x.final_obs) == sorted(y.final_obs)


class PacedEnv(BaseEnv):
    """Observation ``[t, delay]``; each step takes ``delay`` seconds; episodes of ``episode_len`` steps."""

    config: ClassVar[dict[str, Any]] = {"delay": 0.0, "episode_len": 4}

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        return EnvSpaces(spaces.Box(0.0, 100.0, (2,), np.float32), spaces.Discrete(2))

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg)
        self.t = 0

    def _obs(self) -> np.ndarray:
        return np.array([self.t, self._cfg.delay], np.float32)

    def reset(self) -> np.ndarray:
        self.t = 0
        return self._obs()

    def step(self, action: Any) -> BaseEnvTimestep:
        time.sleep(self._cfg.delay)
        self.t += 1
        return BaseEnvTimestep(self._obs(), np.array([float(action)], np.float32), self.t >= self._cfg.episode_len, {})

    def close(self) -> None:
        pass


@pytest.mark.parametrize(
    ("kind", "cfg"),
    [
        ("zmq", {"wait_num": 1}),
        ("zmq-2", {"wait_num": 1}),
        ("zmq-tcp", {"wait_num": 2, "step_wait_timeout": 0.0001, "shared_memory": False}),
    ],
    ids=["wait_num=1", "wait_num=1-two_per_worker", "wait_num=2-short_wait-tcp"],
)
def test_finite_wait_num_keeps_every_env_trajectory(kind: str, cfg: dict[str, Any], new_manager: MakeManager) -> None:
    expected = reference(DICT_OBS, 5, seed=3, episodes=2)
    manager = new_manager(kind, [DICT_OBS] * 5, episode_num=2, **cfg)
    manager.seed(3)
    manager.launch()
    assert_same_trajectories(play(manager, table_policy(3)), expected)


def test_wait_num_1_returns_partial_batches_and_delivers_each_step_once(new_manager: MakeManager) -> None:
    fns = [partial(PacedEnv, cfg={"delay": delay}) for delay in (0.0, 0.0, 0.25)]
    manager = new_manager("zmq", fns, episode_num=2, wait_num=1)
    manager.launch()
    steps: dict[int, list[float]] = {i: [] for i in range(3)}
    calls = 0
    while not manager.done:
        timesteps = manager.step({i: 1 for i in manager.ready_obs_id})
        if calls == 0:  # env 2 is still stepping: a partial batch, and env 2 is not ready to act on
            assert timesteps and 2 not in timesteps
            assert 2 in manager.in_flight_env_ids and 2 not in manager.ready_obs_id  # type: ignore[attr-defined]
        for env_id, ts in timesteps.items():
            steps[env_id].append(float(ts.obs[0]))
        calls += 1
    assert steps == {i: [1.0, 2.0, 3.0, 4.0] * 2 for i in range(3)}  # every step of every env, in order, once
    assert calls > 8  # the fast envs did not wait for the slow one: whole batches would take 8 calls


def test_close_leaves_no_process_or_socket_file() -> None:
    before = {p.pid for p in multiprocessing.active_children()}
    tmp_before = set(os.listdir("/tmp"))
    manager = create_env_manager({"type": "zmq", "envs_per_worker": 2}, [CARTPOLE] * 4)
    manager.launch()
    assert isinstance(manager, ZmqEnvManager) and manager.endpoint is not None
    assert manager.endpoint.startswith("ipc://@ding-zmq-")  # abstract socket: no file to leave behind
    assert [w["env_ids"] for w in manager.workers] in ([[0, 1], [2, 3]], [[2, 3], [0, 1]])
    pids, names = manager.worker_pids, manager.shared_memory_names
    assert names and all(Path("/dev/shm", name).exists() for name in names)  # local workers only: shared memory
    manager.close()
    assert not any(alive(p) for p in pids)
    assert not any(Path("/dev/shm", name).exists() for name in names)
    assert {p.pid for p in multiprocessing.active_children()} <= before
    assert not [name for name in set(os.listdir("/tmp")) - tmp_before if name.startswith("ding-zmq")]
    assert manager.workers == []


def test_remote_workers_register_and_run_the_envs(keys_dir: Path, remote_workers: RemoteWorkers) -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    workers = [remote_workers.start(endpoint, keys_dir) for _ in range(2)]
    cfg = {"type": "zmq", "endpoint": endpoint, "keys_dir": str(keys_dir), "remote_workers": 2, **FAST}
    expected = reference(CARTPOLE, 4, seed=2, episodes=2)
    with create_env_manager({**cfg, "envs_per_worker": 2, "episode_num": 2}, [CARTPOLE] * 4) as manager:
        manager.seed(2)
        manager.launch()
        assert sorted(manager.worker_pids) == sorted(w.pid for w in workers)  # type: ignore[type-var]
        assert_same_trajectories(play(manager, table_policy(2)), expected)
    assert all(w.wait(10) == 0 for w in workers), "workers did not exit when the manager closed them"
    assert "registered with the manager" in remote_workers.log(0)


def test_local_and_remote_workers_share_the_envs(keys_dir: Path, remote_workers: RemoteWorkers) -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    remote = remote_workers.start(endpoint, keys_dir)
    cfg = {"type": "zmq", "endpoint": endpoint, "keys_dir": str(keys_dir), "remote_workers": 1, "local_workers": 1}
    with create_env_manager({**cfg, **FAST, "envs_per_worker": 1, "episode_num": 1}, [CARTPOLE] * 2) as manager:
        manager.seed(0)
        manager.launch()
        assert remote.pid in manager.worker_pids and os.getpid() not in manager.worker_pids
        assert_same_trajectories(play(manager, table_policy(2)), reference(CARTPOLE, 2, seed=0, episodes=1))


def test_launch_without_enough_workers_times_out_naming_the_endpoint(keys_dir: Path) -> None:
    cfg = {"type": "zmq", "endpoint": "tcp", "keys_dir": str(keys_dir), "remote_workers": 1, "worker_wait_timeout": 0.3}
    manager = create_env_manager(cfg, [CARTPOLE])
    with pytest.raises(WorkerTimeoutError, match=r"1 workers registering did not happen within 0\.3 s.*tcp://127"):
        manager.launch()
    assert manager.closed


@pytest.mark.parametrize(
    ("cfg", "match"),
    [
        ({"endpoint": "udp://x"}, r"endpoint must be 'ipc', 'tcp', .* got 'udp://x'"),
        ({"shared_memory": True, "keys_dir": "/k"}, "shared_memory=True needs every worker on this host"),
        ({"shared_memory": "yes"}, r"shared_memory must be None \(auto\), True or False, got 'yes'"),
        ({"heartbeat_timeout": 0.1, "heartbeat_interval": 0.5}, r"heartbeat_timeout \(0\.1\) must exceed"),
        ({"heartbeat_interval": -1}, r"heartbeat_interval must be a positive number of seconds, got -1"),
        ({"remote_workers": 2}, "remote_workers is 2, but keys_dir is None"),
        ({"local_workers": 0}, "local_workers and remote_workers are both 0"),
        (
            {"local_workers": "2"},
            r"local_workers must be an int in \[0, 1024\] or None \(worker processes .*\), got '2'",
        ),
        ({"max_message_bytes": 10}, r"max_message_bytes must be an int >= 1024, got 10"),
        ({"wait_num": 0}, r"wait_num must be a positive int or inf or None .*, got 0"),
        ({"heartbeat_intervall": 1.0}, "heartbeat_interval"),
    ],
)
def test_bad_config_is_rejected_naming_the_key(cfg: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        create_env_manager({"type": "zmq", **cfg}, [CARTPOLE])


def test_keygen_writes_private_keys_that_load(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    directory = tmp_path / "keys"
    assert cli_main(["-m", "keygen", str(directory)]) == 0
    assert "server.key_secret" in capsys.readouterr().out
    assert cli_main(["-m", "keygen", str(directory), "--name", "host-b"]) == 0
    manager = load_manager_keys(directory)
    assert len(manager.allowed) == 2
    for name in ("worker", "host-b"):
        worker = load_worker_keys(directory, name)
        assert worker.public in manager.allowed and worker.server_public == manager.public
        assert stat.S_IMODE((directory / f"{name}.key_secret").stat().st_mode) == 0o600
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    with pytest.raises(FileExistsError, match="worker key 'worker' exists already"):
        generate_keys(directory)
    with pytest.raises(ValueError, match="worker key name must be"):
        generate_keys(directory, "../evil")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-m", "worker", "--keys", "k"], "-m worker needs --connect tcp://HOST:PORT and --keys DIR"),
        (["-m", "keygen"], "-m keygen needs DIR"),
        (["-m", "worker", "-c", "x.py", "--connect", "tcp://h:1", "--keys", "k"], "-c is not used by -m worker"),
        (["-m", "serial", "--connect", "tcp://h:1", "-c", "x.py"], "--connect is not used by -m serial"),
        (["-m", "spec"], "-m spec needs -c CONFIG"),
    ],
)
def test_cli_rejects_worker_and_keygen_misuse(argv: list[str], message: str) -> None:
    result = run_ding(*argv, cwd=ROOT, timeout=60)
    assert result.returncode == 2 and message in result.stderr


def test_worker_with_missing_keys_fails_clearly(tmp_path: Path) -> None:
    result = run_ding("-m", "worker", "--connect", "tcp://127.0.0.1:1", "--keys", str(tmp_path), cwd=ROOT, timeout=60)
    assert result.returncode == 2 and "worker.key_secret does not exist" in result.stderr
    assert "ding -m keygen DIR" in result.stderr


def test_worker_without_manager_gives_up_after_connect_timeout(keys_dir: Path) -> None:
    from ding.entry.env_worker import run_worker
    from ding.envs.env_manager.channels.zmq.worker import EXIT_NO_MANAGER

    status = run_worker(f"tcp://127.0.0.1:{free_port()}", str(keys_dir), connect_timeout=0.3)
    assert status == EXIT_NO_MANAGER
