"""Faults are detected by the parent: env exceptions, dead and hung workers, stalled resets.

Fault envs fail deterministically at a chosen step; timeouts in these tests are a fraction of a
second, so the suite runs in seconds.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from ding.envs.env_manager import BaseEnvManager, EnvState, create_env_manager
from ding.errors import EnvStepError, WorkerDiedError, WorkerTimeoutError
from tests.envs.env_manager.fault_envs import FaultyEnv

SUBPROCESS_KINDS = [("subprocess", 1), ("subprocess", 2), ("subprocess-private", 2)]
ALL_KINDS = [("base", 1), *SUBPROCESS_KINDS]


def make(kind: tuple[str, int], env_cfgs: list[dict[str, Any]], **cfg: Any) -> BaseEnvManager:
    manager_type, per_worker = kind
    if manager_type == "subprocess-private":
        manager_type = "subprocess"
        cfg.setdefault("shared_memory", False)
    if manager_type != "base":
        cfg.setdefault("envs_per_worker", per_worker)
        cfg.setdefault("step_timeout", 5.0)
        cfg.setdefault("reset_timeout", 5.0)
    return create_env_manager({"type": manager_type, **cfg}, [partial(FaultyEnv, cfg=c) for c in env_cfgs])


def step_all(manager: BaseEnvManager) -> dict[int, Any]:
    return manager.step({i: 0 for i in manager.ready_obs_id})


def wait_until(condition: Callable[[], bool], limit: float = 10.0) -> bool:
    """Poll ``condition`` until it holds or ``limit`` seconds pass (returns whether it held)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie counts as gone
        return stat.read().split()[2] != "Z"


def assert_clean(manager: BaseEnvManager) -> None:
    assert manager.closed
    for pid in getattr(manager, "worker_pids", []):
        assert not alive(pid)
    for name in getattr(manager, "shared_memory_names", []):
        assert not Path("/dev/shm", name).exists()


@pytest.mark.parametrize("kind", ALL_KINDS, ids=str)
def test_exception_without_retry_raises_and_the_manager_stays_open(kind: tuple[str, int]) -> None:
    manager = make(kind, [{}, {"fault": "raise", "at_step": 2}], max_retry=1)
    manager.launch()
    pids = list(getattr(manager, "worker_pids", []))
    step_all(manager)
    with pytest.raises(EnvStepError, match=r"env 1 raised InjectedFault in step: injected failure at step 2") as info:
        step_all(manager)
    assert "in explode" in info.value.traceback_text and "fault_envs.py" in info.value.traceback_text
    assert (info.value.env_id, info.value.exc_type) == (1, "InjectedFault")
    assert not manager.closed and manager.env_states == {0: EnvState.RUN, 1: EnvState.ERROR}
    assert manager.ready_obs_id == [0] and manager.ready_obs[0][0] == 2  # env 0 kept its steps
    assert step_all(manager)[0].obs[0] == 3
    manager.reset({1: {}})  # revives the failed env
    assert manager.env_states[1] is EnvState.RUN and manager.ready_obs[1][0] == 0
    assert sorted(step_all(manager)) == [0, 1]
    manager.close()
    assert_clean(manager)
    for pid in pids:
        assert not alive(pid)


@pytest.mark.parametrize("kind", ALL_KINDS, ids=str)
def test_exception_with_reset_retry_ends_episode_abnormally(kind: tuple[str, int]) -> None:
    with make(kind, [{}, {"fault": "raise", "at_step": 2}], max_retry=2, retry_type="reset") as manager:
        manager.launch()
        step_all(manager)
        timesteps = step_all(manager)
        assert timesteps[1].done and timesteps[1].info["abnormal"] is True
        assert "InjectedFault" in timesteps[1].info["error"] and "explode" in timesteps[1].info["traceback"]
        assert not timesteps[0].done and timesteps[0].obs[0] == 2  # the other env kept its steps
        assert manager.ready_obs[1][0] == 0  # env 1 was reset and is ready again
        instance = manager.ready_obs[1][1]
        for _ in range(3):
            step_all(manager)
        assert manager.ready_obs[1][1] == instance  # reset, not rebuilt


@pytest.mark.parametrize("kind", ALL_KINDS, ids=str)
def test_renew_rebuilds_the_env(kind: tuple[str, int], tmp_path: Path) -> None:
    cfgs = [{}, {"fault": "raise", "at_step": 2, "once_path": str(tmp_path / "fired")}]
    with make(kind, cfgs, max_retry=2, retry_type="renew") as manager:
        manager.launch()
        before = manager.instance
        step_all(manager)
        assert step_all(manager)[1].info["abnormal"]
        after = manager.instance
        assert after[0] == before[0] and after[1] != before[1]
        assert manager.ready_obs[1][0] == 0


@pytest.mark.parametrize("kind", SUBPROCESS_KINDS, ids=str)
def test_worker_exit_is_detected_and_restarted(kind: tuple[str, int], tmp_path: Path) -> None:
    cfgs = [{}, {}, {}, {"fault": "exit", "at_step": 2, "once_path": str(tmp_path / "fired")}]
    with make(kind, cfgs, max_retry=2) as manager:
        manager.launch()
        old_pids = list(manager.worker_pids)  # type: ignore[attr-defined]
        step_all(manager)
        timesteps = step_all(manager)
        assert timesteps[3].info["abnormal"] and "died (exit code 3)" in timesteps[3].info["error"]
        assert not timesteps[0].done and timesteps[0].obs[0] == 2
        new_pids = manager.worker_pids  # type: ignore[attr-defined]
        assert new_pids[-1] != old_pids[-1] and new_pids[0] == old_pids[0]
        assert not alive(old_pids[-1])
        assert sorted(manager.ready_obs) == [0, 1, 2, 3] and manager.ready_obs[3][0] == 0


@pytest.mark.parametrize("kind", SUBPROCESS_KINDS, ids=str)
def test_sigkilled_worker_is_detected_at_once(kind: tuple[str, int]) -> None:
    with make(kind, [{}, {}, {}, {}], max_retry=2, step_timeout=30.0) as manager:
        manager.launch()
        step_all(manager)
        victim = manager.worker_pids[0]  # type: ignore[attr-defined]
        os.kill(victim, signal.SIGKILL)
        start = time.monotonic()
        timesteps = step_all(manager)
        assert time.monotonic() - start < 5.0  # the sentinel fires; step_timeout (30 s) is not waited out
        per_worker = kind[1]
        for env_id in range(4):
            assert bool(timesteps[env_id].info.get("abnormal")) == (env_id < per_worker)
        assert "died" in timesteps[0].info["error"]
        assert timesteps[per_worker].obs[0] == 2


@pytest.mark.parametrize("kind", SUBPROCESS_KINDS, ids=str)
def test_hung_worker_is_killed_after_step_timeout(kind: tuple[str, int], tmp_path: Path) -> None:
    cfgs = [{}, {"fault": "hang", "at_step": 2, "once_path": str(tmp_path / "fired")}]
    with make(kind, cfgs, max_retry=2, step_timeout=0.3) as manager:
        manager.launch()
        hung = manager.worker_pids[-1]  # type: ignore[attr-defined]
        step_all(manager)
        start = time.monotonic()
        timesteps = step_all(manager)
        assert 0.3 <= time.monotonic() - start < 3.0
        assert timesteps[1].info["abnormal"] and "did not answer within 0.3 s" in timesteps[1].info["error"]
        assert not alive(hung)
        assert timesteps[1].done and sorted(manager.ready_obs) == [0, 1]
        step_all(manager)


@pytest.mark.parametrize("kind", SUBPROCESS_KINDS, ids=str)
def test_stalled_reset_is_retried_after_reset_timeout(kind: tuple[str, int], tmp_path: Path) -> None:
    cfgs = [{}, {"fault": "slow_reset", "at_step": 1, "once_path": str(tmp_path / "fired")}]
    with make(kind, cfgs, max_retry=2, reset_timeout=0.3) as manager:
        manager.launch()
        assert sorted(manager.ready_obs) == [0, 1]
        assert manager.env_states[1] == EnvState.RUN


@pytest.mark.parametrize("kind", ALL_KINDS, ids=str)
def test_reset_exception_is_retried(kind: tuple[str, int], tmp_path: Path) -> None:
    cfgs = [{"fault": "raise_reset", "at_step": 1, "once_path": str(tmp_path / "fired")}, {}]
    with make(kind, cfgs, max_retry=2, retry_type="renew") as manager:
        manager.launch()
        assert sorted(manager.ready_obs) == [0, 1]


@pytest.mark.parametrize("kind", SUBPROCESS_KINDS, ids=str)
def test_dead_worker_past_max_retry_raises_and_reset_revives_its_envs(kind: tuple[str, int], tmp_path: Path) -> None:
    cfgs = [{}, {"fault": "exit", "at_step": 2, "once_path": str(tmp_path / "fired")}]
    manager = make(kind, cfgs, max_retry=1)
    manager.launch()
    dead = manager.worker_pids[-1]  # type: ignore[attr-defined]
    step_all(manager)
    with pytest.raises(WorkerDiedError, match=r"worker \d \(pid \d+, envs \[.*1\]\) died \(exit code 3\)"):
        step_all(manager)
    assert not manager.closed and manager.env_states[1] is EnvState.ERROR and 1 not in manager.ready_obs_id
    assert not alive(dead) and manager.worker_pids[-1] != dead  # type: ignore[attr-defined]
    manager.reset()
    assert manager.env_states == {0: EnvState.RUN, 1: EnvState.RUN}
    assert not any(ts.info.get("abnormal") for ts in step_all(manager).values())
    manager.close()
    assert_clean(manager)


def test_hang_past_max_retry_raises_timeout() -> None:
    manager = make(("subprocess", 1), [{"fault": "hang", "at_step": 1}], max_retry=1, step_timeout=0.2)
    manager.launch()
    hung = manager.worker_pids[0]  # type: ignore[attr-defined]
    with pytest.raises(WorkerTimeoutError, match=r"did not answer within 0\.2 s") as info:
        step_all(manager)
    assert isinstance(info.value, TimeoutError) and isinstance(info.value, RuntimeError)
    assert manager.env_states[0] is EnvState.ERROR and not alive(hung)
    manager.close()
    assert_clean(manager)


@pytest.mark.parametrize("kind", ALL_KINDS, ids=str)
@pytest.mark.parametrize("max_retry", [2, 3])
def test_max_retry_counts_consecutive_failed_attempts(kind: tuple[str, int], max_retry: int) -> None:
    manager = make(kind, [{"fault": "raise_every", "at_step": 2}, {}], max_retry=max_retry)
    manager.launch()
    step_all(manager)
    for _ in range(max_retry - 1):  # each failure is followed by a good reset, but no good step: they add up
        assert step_all(manager)[0].info["abnormal"]
    with pytest.raises(EnvStepError, match="env 0 raised InjectedFault in step"):
        step_all(manager)
    assert manager.env_states[0] is EnvState.ERROR and manager.env_states[1] is EnvState.RUN
    manager.close()


@pytest.mark.parametrize("kind", ALL_KINDS, ids=str)
def test_a_good_step_clears_the_failure_count(kind: tuple[str, int]) -> None:
    cfgs = [{"fault": "raise", "at_step": 2, "episode_len": 3}, {}]
    with make(kind, cfgs, max_retry=2, retry_type="renew") as manager:
        manager.launch()
        for _ in range(12):  # every renewed instance fails at its second step, after one good one
            step_all(manager)
        assert manager.env_states[0] is EnvState.RUN


def test_failing_constructor_reports_its_traceback() -> None:
    def broken() -> FaultyEnv:
        raise InterruptedError("cannot build")

    manager = create_env_manager({"type": "subprocess"}, [broken])
    with pytest.raises(EnvStepError, match="raised InterruptedError in build: cannot build"):
        manager.launch()
    assert_clean(manager)


PARENT = textwrap.dedent(
    """
    import sys, time
    from functools import partial
    from ding.envs.env_manager import create_env_manager
    from dizoo.classic_control.cartpole.envs import CartPoleEnv
    manager = create_env_manager({"type": "subprocess", "envs_per_worker": 2}, [partial(CartPoleEnv, cfg={})] * 4)
    manager.launch()
    print(" ".join(map(str, manager.worker_pids)))
    print(" ".join(manager.shared_memory_names), flush=True)
    time.sleep(600)
    """
)


def test_sigkill_of_the_parent_leaves_nothing_behind() -> None:
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root)}
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True, env=env)
    assert parent.stdout is not None
    pids = [int(p) for p in parent.stdout.readline().split()]
    names = parent.stdout.readline().split()
    assert len(pids) == 2 and names and all(Path("/dev/shm", n).exists() for n in names)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    assert wait_until(lambda: not any(alive(pid) for pid in pids)), "workers outlived their killed parent"
    assert wait_until(lambda: not any(Path("/dev/shm", n).exists() for n in names)), "shared memory left behind"
