"""Liveness of the zmq manager with real processes: killed, hung, cut off and restarted workers, a killed manager.

Remote workers run ``ding -m worker`` in their own process group; heartbeats and timeouts are a
fraction of a second, and every wait is for an event (a marker file, a registration, a process exit).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from ding.envs.env_manager import BaseEnvManager, ZmqEnvManager, create_env_manager
from ding.envs.env_manager.channels.zmq.worker import EXIT_MANAGER_GONE
from ding.errors import WorkerDiedError
from tests.envs.env_manager.fault_envs import FaultyEnv
from tests.envs.env_manager.zmq_support import (
    ROOT,
    Relay,
    RemoteWorkers,
    alive,
    free_port,
    keys_dir,
    remote_workers,
    wait_until,
)

__all__ = ["keys_dir", "remote_workers"]  # fixtures
FAST = {"heartbeat_interval": 0.1, "heartbeat_timeout": 0.5}


def faulty(cfgs: list[dict[str, Any]]) -> list[Any]:
    return [partial(FaultyEnv, cfg=c) for c in cfgs]


def step_all(manager: BaseEnvManager) -> dict[int, Any]:
    return manager.step({i: 0 for i in manager.ready_obs_id})


def remote_manager(
    keys: Path, workers: RemoteWorkers, n_workers: int, cfgs: list[dict[str, Any]], **cfg: Any
) -> tuple[ZmqEnvManager, list[subprocess.Popen[bytes]]]:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    started = [workers.start(endpoint, keys) for _ in range(n_workers)]
    full = {"type": "zmq", "endpoint": endpoint, "keys_dir": str(keys), "remote_workers": n_workers, **FAST, **cfg}
    manager = create_env_manager(full, faulty(cfgs))
    assert isinstance(manager, ZmqEnvManager)
    manager.launch()
    return manager, started


def kill_when(path: Path, pid_of: Any, group: bool) -> threading.Thread:
    """SIGKILL a worker as soon as ``path`` appears (its env has started the step that hangs)."""

    def run() -> None:
        assert wait_until(path.exists, 20.0)
        pid = pid_of()
        os.killpg(pid, signal.SIGKILL) if group else os.kill(pid, signal.SIGKILL)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_local_worker_sigkilled_mid_batch_is_replaced(tmp_path: Path) -> None:
    fired = tmp_path / "fired"
    cfgs = [{}, {"fault": "hang", "at_step": 2, "once_path": str(fired)}, {}]
    cfg = {"type": "zmq", "envs_per_worker": 1, "step_timeout": 30.0, **FAST}
    with create_env_manager(cfg, faulty(cfgs)) as manager:
        manager.launch()
        step_all(manager)
        victim = manager.worker_pids[1]
        killer = kill_when(fired, lambda: victim, group=False)
        start = time.monotonic()
        timesteps = step_all(manager)
        killer.join()
        assert time.monotonic() - start < 10.0  # the process sentinel fires; step_timeout (30 s) is not waited out
        assert timesteps[1].info["abnormal"] and "died (exit code -9)" in timesteps[1].info["error"]
        assert not timesteps[0].done and not timesteps[2].done and timesteps[0].obs[0] == 2
        assert manager.worker_pids[1] != victim and not alive(victim)
        assert step_all(manager)[1].obs[0] == 1  # env 1 runs again on the fresh worker


def test_remote_worker_sigkilled_mid_batch_moves_its_envs_to_a_spare(
    keys_dir: Path, remote_workers: RemoteWorkers, tmp_path: Path
) -> None:
    fired = tmp_path / "fired"
    cfgs = [{}, {"fault": "hang", "at_step": 2, "once_path": str(fired)}]
    manager, started = remote_manager(keys_dir, remote_workers, 3, cfgs, step_timeout=30.0)
    with manager:
        step_all(manager)
        victim = manager.worker_pids[1]
        assert victim is not None
        spare = ({p.pid for p in started} - set(manager.worker_pids)).pop()
        killer = kill_when(fired, lambda: victim, group=True)
        timesteps = step_all(manager)
        killer.join()
        assert timesteps[1].info["abnormal"]
        assert (
            "sent nothing for" in timesteps[1].info["error"] and "heartbeat_timeout 0.5 s" in timesteps[1].info["error"]
        )
        assert not timesteps[0].done and timesteps[0].obs[0] == 2
        assert manager.worker_pids[1] == spare
        for _ in range(6):  # the moved env plays on, through an episode end
            assert not any(ts.info.get("abnormal") for ts in step_all(manager).values())


def test_hung_remote_worker_is_dropped_and_exits_on_its_own(
    keys_dir: Path, remote_workers: RemoteWorkers, tmp_path: Path
) -> None:
    cfgs = [{"fault": "hang", "at_step": 2, "once_path": str(tmp_path / "fired")}]
    manager, started = remote_manager(keys_dir, remote_workers, 2, cfgs, step_timeout=0.5)
    with manager:
        step_all(manager)
        hung = manager.worker_pids[0]
        timesteps = step_all(manager)
        assert timesteps[0].info["abnormal"] and "did not answer within 0.5 s" in timesteps[0].info["error"]
        assert manager.worker_pids[0] != hung
        step_all(manager)
        process = next(p for p in started if p.pid == hung)
        # the manager no longer pings it: once silent for its timeout, the worker ends itself (stuck in env code)
        assert process.wait(20) == EXIT_MANAGER_GONE


def test_no_worker_left_raises_a_clear_error(keys_dir: Path, remote_workers: RemoteWorkers) -> None:
    manager, started = remote_manager(keys_dir, remote_workers, 1, [{}, {}], envs_per_worker=2, max_retry=2)
    step_all(manager)
    os.killpg(started[0].pid, signal.SIGKILL)
    assert wait_until(lambda: manager.worker_pids == [None], 10.0)  # dropped after heartbeat_timeout
    with pytest.raises(WorkerDiedError, match=r"no worker left to run envs \[0, 1\].*ding -m worker --connect tcp://"):
        step_all(manager)
    assert manager.closed


def test_restarted_worker_takes_over(keys_dir: Path, remote_workers: RemoteWorkers) -> None:
    manager, started = remote_manager(keys_dir, remote_workers, 1, [{}, {}], envs_per_worker=2)
    with manager:
        step_all(manager)
        os.killpg(started[0].pid, signal.SIGKILL)
        assert wait_until(lambda: manager.worker_pids == [None], 10.0)
        restarted = remote_workers.start(str(manager.endpoint), keys_dir)
        assert wait_until(lambda: [w["pid"] for w in manager.workers] == [restarted.pid], 20.0)
        timesteps = step_all(manager)
        assert all(ts.info["abnormal"] for ts in timesteps.values())
        assert manager.worker_pids == [restarted.pid]
        assert [ts.obs[0] for ts in step_all(manager).values()] == [1, 1]


def test_worker_rides_out_a_transient_network_cut(keys_dir: Path, remote_workers: RemoteWorkers) -> None:
    port = free_port()
    relay = Relay(port)
    try:
        worker = remote_workers.start(f"tcp://127.0.0.1:{relay.port}", keys_dir, "worker", "--manager-timeout", "5")
        cfg = {"type": "zmq", "endpoint": f"tcp://127.0.0.1:{port}", "keys_dir": str(keys_dir), "remote_workers": 1}
        with create_env_manager({**cfg, "heartbeat_interval": 0.1, "heartbeat_timeout": 3.0}, faulty([{}])) as manager:
            manager.launch()
            step_all(manager)
            relay.cut_links()
            assert wait_until(lambda: relay.refused >= 2, 10.0)  # the worker noticed and keeps reconnecting
            relay.restore()
            timesteps = step_all(manager)  # sent as soon as the worker is back
            assert not timesteps[0].info.get("abnormal") and timesteps[0].obs[0] == 2
            assert manager.worker_pids == [worker.pid]
        assert worker.wait(10) == 0
    finally:
        relay.close()


def test_worker_cut_off_too_long_is_replaced_then_rejoins_as_a_spare(
    keys_dir: Path, remote_workers: RemoteWorkers
) -> None:
    port = free_port()
    relay = Relay(port)
    try:
        endpoint = f"tcp://127.0.0.1:{port}"
        far = remote_workers.start(f"tcp://127.0.0.1:{relay.port}", keys_dir, "worker", "--manager-timeout", "10")
        cfg = {"type": "zmq", "endpoint": endpoint, "keys_dir": str(keys_dir), "remote_workers": 1, **FAST}
        with create_env_manager({**cfg, "max_retry": 3}, faulty([{}])) as manager:
            assert isinstance(manager, ZmqEnvManager)
            manager.launch()
            near = remote_workers.start(endpoint, keys_dir)
            assert wait_until(lambda: len(manager.workers) == 2, 20.0)
            assert manager.worker_pids == [far.pid]
            relay.cut_links()
            assert wait_until(lambda: manager.worker_pids == [None], 10.0)  # dropped after heartbeat_timeout
            timesteps = step_all(manager)
            assert timesteps[0].info["abnormal"] and manager.worker_pids == [near.pid]
            relay.restore()  # the far worker reconnects, is told to forget its envs, and registers afresh
            assert wait_until(lambda: {w["pid"] for w in manager.workers} == {far.pid, near.pid}, 20.0)
            os.killpg(near.pid, signal.SIGKILL)
            assert wait_until(lambda: manager.worker_pids == [None], 10.0)
            assert step_all(manager)[0].info["abnormal"] and manager.worker_pids == [far.pid]
            assert step_all(manager)[0].obs[0] == 1
        assert far.wait(10) == 0
    finally:
        relay.close()


MANAGER_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from functools import partial
    from ding.envs.env_manager import create_env_manager
    from dizoo.classic_control.cartpole.envs import CartPoleEnv
    cfg = {"type": "zmq", "endpoint": sys.argv[1], "keys_dir": sys.argv[2], "remote_workers": 1, "local_workers": 1,
           "heartbeat_interval": 0.1, "heartbeat_timeout": 0.5}
    manager = create_env_manager(cfg, [partial(CartPoleEnv, cfg={})] * 2)
    manager.launch()
    print(" ".join(str(w["pid"]) + ("L" if w["local"] else "R") for w in manager.workers), flush=True)
    time.sleep(600)
    """
)


def test_workers_exit_when_the_manager_is_killed(keys_dir: Path, remote_workers: RemoteWorkers) -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    remote = remote_workers.start(endpoint, keys_dir)
    parent = subprocess.Popen(
        [sys.executable, "-c", MANAGER_SCRIPT, endpoint, str(keys_dir)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert parent.stdout is not None
        pids = dict((int(item[:-1]), item[-1]) for item in parent.stdout.readline().split())
        assert sorted(pids.values()) == ["L", "R"] and remote.pid in pids
        local = next(pid for pid, kind in pids.items() if kind == "L")
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        assert wait_until(lambda: not alive(local), 10.0), "the local worker outlived its manager"
        assert remote.wait(20) == EXIT_MANAGER_GONE
        assert "the manager has been silent" in remote_workers.log(0)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
