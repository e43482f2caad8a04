"""Time limits for envs in the calling process: per-env threads in the base manager, and ``timeout_wrapper``.

The fault envs here block for an hour; an overrun call is abandoned with its daemon thread.
"""

from __future__ import annotations

import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from ding.envs.env_manager import EnvState, create_env_manager
from ding.envs.env_manager.base_env_manager import timeout_wrapper
from ding.envs.env_manager.env_thread import CallTimeout, EnvThread
from ding.errors import WorkerTimeoutError
from tests.envs.env_manager.fault_envs import FaultyEnv


def faulty(cfgs: list[dict[str, Any]]) -> list[Any]:
    return [partial(FaultyEnv, cfg=c) for c in cfgs]


def env_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("ding-env-")]


def test_env_thread_returns_raises_and_abandons_an_overrun_call() -> None:
    thread = EnvThread("ding-env-test")
    assert thread.call(lambda: 41 + 1, timeout=1.0) == 42
    with pytest.raises(KeyError, match="inside"):
        thread.call(lambda: {}["inside"], timeout=1.0)
    release = threading.Event()
    with pytest.raises(CallTimeout, match=r"did not finish within 0\.1 s"):
        thread.call(release.wait, timeout=0.1)
    release.set()  # the abandoned call ends; the thread then stops
    deadline = time.monotonic() + 5
    while any(t.name == "ding-env-test" for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(t.name == "ding-env-test" for t in threading.enumerate())


def test_timeout_wrapper_raises_timeout_error_past_its_limit() -> None:
    @timeout_wrapper(timeout=0.2)
    def sleepy(seconds: float) -> str:
        time.sleep(seconds)
        return "awake"

    assert sleepy(0.0) == "awake"
    with pytest.raises(TimeoutError):
        sleepy(2.0)
    assert timeout_wrapper(sleepy.__wrapped__) is sleepy.__wrapped__  # no timeout: the function itself


def test_without_timeouts_the_base_manager_calls_envs_directly() -> None:
    before = len(env_threads())
    with create_env_manager({"type": "base"}, faulty([{}, {}])) as manager:
        manager.launch()
        for _ in range(3):
            manager.step({0: 0, 1: 1})
        assert len(env_threads()) == before


def test_a_hung_step_is_abandoned_after_step_timeout_and_the_env_rebuilt(tmp_path: Path) -> None:
    cfgs = [{}, {"fault": "hang", "at_step": 2, "once_path": str(tmp_path / "fired")}]
    with create_env_manager({"type": "base", "step_timeout": 0.3}, faulty(cfgs)) as manager:
        manager.launch()
        before = manager.instance
        manager.step({0: 0, 1: 0})
        start = time.monotonic()
        timesteps = manager.step({0: 0, 1: 0})
        assert 0.3 <= time.monotonic() - start < 3.0
        assert timesteps[1].info["abnormal"] and "env 1 did not finish step within 0.3 s" in timesteps[1].info["error"]
        assert not timesteps[0].done and timesteps[0].obs[0] == 2  # the other env kept its steps
        after = manager.instance
        assert after[0] == before[0] and after[1] != before[1]  # rebuilt although retry_type is 'reset'
        assert manager.ready_obs[1][0] == 0 and not manager.step({0: 0, 1: 0})[1].done


def test_a_hung_reset_is_retried_after_reset_timeout(tmp_path: Path) -> None:
    FaultyEnv.instances = 0
    cfgs = [{"fault": "slow_reset", "at_step": 1, "once_path": str(tmp_path / "fired")}, {}]
    with create_env_manager({"type": "base", "reset_timeout": 0.3}, faulty(cfgs)) as manager:
        manager.launch()
        assert manager.env_states == {0: EnvState.RUN, 1: EnvState.RUN}
    assert (tmp_path / "fired").exists()


def test_a_hang_past_max_retry_raises_and_reset_revives_the_env() -> None:
    cfgs = [{"fault": "hang", "at_step": 2}, {}]
    with create_env_manager({"type": "base", "step_timeout": 0.3, "max_retry": 1}, faulty(cfgs)) as manager:
        manager.launch()
        manager.step({0: 0, 1: 0})
        with pytest.raises(WorkerTimeoutError, match=r"env 0 did not finish step within 0\.3 s") as info:
            manager.step({0: 0, 1: 0})
        assert isinstance(info.value, TimeoutError)
        assert manager.env_states == {0: EnvState.ERROR, 1: EnvState.RUN} and manager.ready_obs_id == [1]
        stuck = manager.instance[0]
        manager.reset({0: {}})  # the stuck env is left to its thread; a new one is built
        assert manager.env_states[0] is EnvState.RUN and manager.instance[0] != stuck
        assert not manager.step({0: 0, 1: 0})[0].info.get("abnormal")
