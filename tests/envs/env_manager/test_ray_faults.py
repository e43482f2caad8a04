"""Faults of the ray manager: env exceptions, actors killed mid-batch or while idle, hung envs, spent budgets.

Envs 0 and 1 share actor 0; where a test needs to show that other actors keep their steps, envs 2 (and 3)
are on actor 1. Actor deaths are Ray's to notice (about 1-2 s); hung envs are caught after ``step_timeout``.
The tests at the end run the ``"zmq"`` and ``"shm"`` transports, where the manager sees a dead actor's
connection close (or its process end) at once and Ray's restart supplies the new worker.
"""

from __future__ import annotations

import gc
import os
import re
import signal
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from ding.envs.env_manager import BaseEnvManager, EnvState, create_env_manager
from ding.errors import EnvManagerError, EnvStepError, WorkerDiedError
from tests.envs.env_manager.conftest import exit_grace, ray_placement
from tests.envs.env_manager.envs import pid_alive, processes_ended
from tests.envs.env_manager.fault_envs import FaultyEnv

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.usefixtures("ray_cluster")


def make(env_cfgs: list[dict[str, Any]], **cfg: Any) -> BaseEnvManager:
    cfg = {"type": "ray", "envs_per_worker": 2, "step_timeout": 30.0, "reset_timeout": 30.0, **ray_placement(), **cfg}
    return create_env_manager(cfg, [partial(FaultyEnv, cfg=c) for c in env_cfgs])


def step_all(manager: BaseEnvManager) -> dict[int, Any]:
    return manager.step({i: 0 for i in manager.ready_obs_id})


def assert_clean(manager: BaseEnvManager, pids: list[int]) -> None:
    assert manager.closed and manager.worker_pids == [None] * len(pids)  # type: ignore[attr-defined]
    assert processes_ended(pids, exit_grace())


def test_exception_without_retry_raises_and_the_manager_stays_open() -> None:
    manager = make([{}, {"fault": "raise", "at_step": 2}], max_retry=1)
    manager.launch()
    pids = list(manager.worker_pids)  # type: ignore[attr-defined]
    assert len(pids) == 1 and pid_alive(pids[0])
    step_all(manager)
    with pytest.raises(EnvStepError, match=r"env 1 raised InjectedFault in step: injected failure at step 2") as info:
        step_all(manager)
    assert "in explode" in info.value.traceback_text
    assert manager.env_states == {0: EnvState.RUN, 1: EnvState.ERROR} and manager.worker_pids == pids  # type: ignore
    assert step_all(manager)[0].obs[0] == 3
    manager.reset({1: {}})
    assert sorted(step_all(manager)) == [0, 1]
    manager.close()
    assert_clean(manager, pids)
    with pytest.raises(EnvManagerError, match="RayEnvManager is closed"):
        step_all(manager)


@pytest.mark.parametrize("retry_type", ["reset", "renew"])
def test_exception_ends_the_episode_abnormally_and_the_env_is_reset_or_renewed(retry_type: str) -> None:
    with make([{}, {"fault": "raise", "at_step": 2}], max_retry=2, retry_type=retry_type) as manager:
        manager.launch()
        instance = manager.ready_obs[1][1]
        step_all(manager)
        timesteps = step_all(manager)
        assert timesteps[1].done and timesteps[1].info["abnormal"] is True
        assert "InjectedFault" in timesteps[1].info["error"] and "explode" in timesteps[1].info["traceback"]
        assert not timesteps[0].done and timesteps[0].obs[0] == 2  # the actor's other env kept its steps
        assert manager.ready_obs[1][0] == 0  # a new episode
        assert (manager.ready_obs[1][1] == instance) == (retry_type == "reset")
        assert manager.ready_obs[1][2] == manager.worker_pids[0]  # type: ignore[attr-defined]


def kill_later(how: str, manager: BaseEnvManager, delay: float) -> threading.Timer:
    pid = manager.worker_pids[0]  # type: ignore[attr-defined]
    actor = manager.worker_actors[0]  # type: ignore[attr-defined]

    def kill() -> None:
        if how == "os.kill":
            os.kill(pid, signal.SIGKILL)
        else:
            ray.kill(actor, no_restart=False)

    timer = threading.Timer(delay, kill)
    timer.start()
    return timer


@pytest.mark.parametrize("how", ["os.kill", "ray.kill"])
def test_actor_killed_mid_batch_renews_its_envs_and_no_other_env_loses_a_step(how: str, tmp_path: Path) -> None:
    # env 1 stalls in its 2nd step, so actor 0 is inside that batch when it is killed
    cfgs = [{}, {"fault": "hang", "at_step": 2, "once_path": str(tmp_path / "fired")}, {}, {}]
    with make(cfgs, max_retry=2) as manager:
        manager.launch()
        old = manager.worker_pids[0]  # type: ignore[attr-defined]
        step_all(manager)
        timer = kill_later(how, manager, 0.3)
        start = time.monotonic()
        timesteps = step_all(manager)
        timer.join()
        assert time.monotonic() - start < 15.0  # Ray reports the death; step_timeout (30 s) is not waited out
        for env_id in (0, 1):
            assert timesteps[env_id].done and timesteps[env_id].info["abnormal"] is True
            assert "actor 0" in timesteps[env_id].info["error"] and "died" in timesteps[env_id].info["error"]
        for env_id in (2, 3):
            assert not timesteps[env_id].done and timesteps[env_id].obs[0] == 2
        new = manager.worker_pids[0]  # type: ignore[attr-defined]
        assert new != old and not pid_alive(old)
        ready = manager.ready_obs
        assert sorted(ready) == [0, 1, 2, 3]
        assert [ready[i][0] for i in range(4)] == [0, 0, 2, 2]  # renewed envs start new episodes
        assert ready[0][2] == ready[1][2] == new  # ... in the restarted actor
        timesteps = step_all(manager)
        assert not any(ts.done for ts in timesteps.values()) and timesteps[2].obs[0] == 3


def test_actor_killed_between_steps_is_noticed_at_the_next_step() -> None:
    with make([{}, {}, {}], max_retry=2) as manager:
        manager.launch()
        step_all(manager)
        old = manager.worker_pids[0]  # type: ignore[attr-defined]
        os.kill(old, signal.SIGKILL)
        timesteps = step_all(manager)
        assert [bool(timesteps[i].info.get("abnormal")) for i in range(3)] == [True, True, False]
        assert "died" in timesteps[0].info["error"] and timesteps[2].obs[0] == 2
        assert manager.worker_pids[0] != old  # type: ignore[attr-defined]
        assert [manager.ready_obs[i][0] for i in range(3)] == [0, 0, 2]


def test_hung_env_is_killed_after_step_timeout_and_renewed(tmp_path: Path) -> None:
    cfgs = [{}, {"fault": "hang", "at_step": 2, "once_path": str(tmp_path / "fired")}, {}]
    with make(cfgs, max_retry=2, step_timeout=0.5) as manager:
        manager.launch()
        hung = manager.worker_pids[0]  # type: ignore[attr-defined]
        step_all(manager)
        start = time.monotonic()
        timesteps = step_all(manager)
        assert time.monotonic() - start >= 0.5
        assert timesteps[1].info["abnormal"] and "did not answer within 0.5 s" in timesteps[1].info["error"]
        assert timesteps[0].info["abnormal"] and not timesteps[2].done and timesteps[2].obs[0] == 2
        assert not pid_alive(hung) and manager.worker_pids[0] != hung  # type: ignore[attr-defined]
        assert sorted(manager.ready_obs) == [0, 1, 2]
        assert not any(ts.done for ts in step_all(manager).values())


def test_process_exit_past_max_retry_raises_and_cleans_up() -> None:
    manager = make([{}, {"fault": "exit", "at_step": 2}], max_retry=1)
    manager.launch()
    pids = list(manager.worker_pids)  # type: ignore[attr-defined]
    step_all(manager)
    with pytest.raises(WorkerDiedError, match=r"actor 0 \(pid \d+, envs \[0, 1\]\) died"):
        step_all(manager)
    assert not manager.closed and manager.env_states == {0: EnvState.ERROR, 1: EnvState.ERROR}
    manager.close()
    assert_clean(manager, pids)


def test_actor_ray_may_not_restart_ends_the_manager() -> None:
    manager = make([{}, {}], max_retry=2, max_restarts=0)
    manager.launch()
    pids = list(manager.worker_pids)  # type: ignore[attr-defined]
    os.kill(pids[0], signal.SIGKILL)
    with pytest.raises(WorkerDiedError, match=r"Ray did not bring the actor back \(max_restarts=0\)"):
        step_all(manager)
    assert_clean(manager, pids)


# ----- the zmq and shm transports: Ray runs the processes, zmq or a local socket and shared memory carry the steps ---
LOST = {
    "zmq": r"worker ray-\S+-0-\d+ \(pid \d+ on \S+\) lost its connection",
    "shm": r"actor 0 \(pid \d+, envs \[0, 1\]\) died",
}
"""The fault of actor 0's envs when its process dies: the manager saw its connection close or its process end."""
TRANSPORTS = pytest.mark.parametrize("transport", ["zmq", "shm"])


def kill_actor_later(how: str, manager: BaseEnvManager, delay: float) -> threading.Timer:
    """Kill actor 0 after ``delay`` s: SIGKILL its process, or ``ray.kill`` it with or without a restart."""
    pid = manager.worker_pids[0]  # type: ignore[attr-defined]
    actor = manager.worker_actors[0]  # type: ignore[attr-defined]

    def kill() -> None:
        if how == "os.kill":
            os.kill(pid, signal.SIGKILL)
        else:
            ray.kill(actor, no_restart=how == "ray.kill-no-restart")

    timer = threading.Timer(delay, kill)
    timer.start()
    return timer


def shm_segments_exist(manager: BaseEnvManager) -> bool:
    return all(os.path.exists(f"/dev/shm/{name}") for name in manager.shared_memory_names)


@TRANSPORTS
@pytest.mark.parametrize("how", ["os.kill", "ray.kill", "ray.kill-no-restart"])
def test_transport_actor_killed_mid_batch_renews_its_envs_and_others_keep_their_steps(
    transport: str, how: str, tmp_path: Path
) -> None:
    cfgs = [{}, {"fault": "hang", "at_step": 2, "once_path": str(tmp_path / "fired")}, {}, {}]
    with make(cfgs, transport=transport, max_retry=2) as manager:
        manager.launch()
        old = manager.worker_pids[0]  # type: ignore[attr-defined]
        old_actor = manager.worker_actors[0]  # type: ignore[attr-defined]
        step_all(manager)
        timer = kill_actor_later(how, manager, 0.3)
        start = time.monotonic()
        timesteps = step_all(manager)
        timer.join()
        assert time.monotonic() - start < 10.0  # the death is seen at once; step_timeout is 30 s
        for env_id in (0, 1):
            assert timesteps[env_id].done and timesteps[env_id].info["abnormal"] is True
            assert re.search(LOST[transport], timesteps[env_id].info["error"])
            assert "exit code None" not in timesteps[env_id].info["error"]
        for env_id in (2, 3):
            assert not timesteps[env_id].done and timesteps[env_id].obs[0] == 2
        new = manager.worker_pids[0]  # type: ignore[attr-defined]
        assert new != old and not pid_alive(old)
        # Ray restarted the actor, or (killed for good) the manager started another one in its place
        assert (manager.worker_actors[0] is old_actor) == (how != "ray.kill-no-restart")  # type: ignore[attr-defined]
        ready = manager.ready_obs
        assert [ready[i][0] for i in range(4)] == [0, 0, 2, 2]
        assert ready[0][2] == ready[1][2] == new
        timesteps = step_all(manager)
        assert not any(ts.done for ts in timesteps.values()) and timesteps[2].obs[0] == 3
        assert shm_segments_exist(manager)  # the dead actor took none of the manager's shared memory with it


@TRANSPORTS
def test_transport_hung_actor_is_killed_after_step_timeout_and_restarted_by_ray(transport: str, tmp_path: Path) -> None:
    cfgs = [{}, {"fault": "hang", "at_step": 2, "once_path": str(tmp_path / "fired")}, {}]
    with make(cfgs, transport=transport, max_retry=2, step_timeout=0.5) as manager:
        manager.launch()
        hung = manager.worker_pids[0]  # type: ignore[attr-defined]
        actor = manager.worker_actors[0]  # type: ignore[attr-defined]
        step_all(manager)
        timesteps = step_all(manager)
        assert timesteps[1].info["abnormal"] and "did not answer within 0.5 s" in timesteps[1].info["error"]
        assert timesteps[0].info["abnormal"] and not timesteps[2].done and timesteps[2].obs[0] == 2
        assert manager.worker_pids[0] != hung and manager.worker_actors[0] is actor  # type: ignore[attr-defined]
        assert not any(ts.done for ts in step_all(manager).values())
        deadline = time.monotonic() + 5.0
        while pid_alive(hung) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not pid_alive(hung)


@TRANSPORTS
def test_transport_process_exit_past_max_retry_raises_and_cleans_up(transport: str) -> None:
    manager = make([{}, {"fault": "exit", "at_step": 2}, {}], transport=transport, max_retry=1)
    manager.launch()
    pids = list(manager.worker_pids)  # type: ignore[attr-defined]
    segments = list(manager.shared_memory_names)
    assert bool(segments) == (transport == "shm")
    step_all(manager)
    with pytest.raises(WorkerDiedError, match=LOST[transport]):
        step_all(manager)
    assert not manager.closed and manager.env_states[2] is EnvState.RUN and 2 in manager.ready_obs_id
    manager.close()
    assert_clean(manager, pids)
    assert manager.worker_actors == [None, None]  # type: ignore[attr-defined]
    assert not any(os.path.exists(f"/dev/shm/{name}") for name in segments)


@TRANSPORTS
def test_transport_actors_exit_when_the_manager_is_dropped_without_close(transport: str) -> None:
    manager = make([{}, {}, {}], transport=transport)
    manager.launch()
    pids = list(manager.worker_pids)  # type: ignore[attr-defined]
    segments = list(manager.shared_memory_names)
    assert all(pid_alive(pid) for pid in pids)
    del manager
    gc.collect()
    deadline = time.monotonic() + 10.0
    while any(pid_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(pid_alive(pid) for pid in pids)
    assert not any(os.path.exists(f"/dev/shm/{name}") for name in segments)
