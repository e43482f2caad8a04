"""``cpu_affinity``: each worker process of ``subprocess`` / ``async_subprocess`` runs on one core.

Pinned workers give the same results as unpinned ones, a replaced worker is pinned as the one it replaces was, the
calling process is never pinned, and a value that is not a setting (or names a core this process may not use) is
refused with one line when the manager is made.
"""

from __future__ import annotations

import copy
import os
import signal
from functools import partial
from typing import Any

import numpy as np
import pytest

from ding.config import compile_config
from ding.envs.env_manager import BaseEnvManager, create_env_manager
from ding.errors import ConfigError, UnknownConfigKeyError
from dizoo.classic_control.cartpole.envs import CartPoleEnv

CORES = sorted(os.sched_getaffinity(0))


def cartpoles(n: int, manager_type: str = "subprocess", **cfg: Any) -> BaseEnvManager:
    return create_env_manager({"type": manager_type, **cfg}, [partial(CartPoleEnv, cfg={}) for _ in range(n)])


def worker_cores(manager: BaseEnvManager) -> list[set[int] | None]:
    return [None if pid is None else os.sched_getaffinity(pid) for pid in manager.worker_pids]  # type: ignore[attr-defined]


def rollout(manager: BaseEnvManager, steps: int) -> np.ndarray:
    rng = np.random.default_rng(5)
    manager.seed(11)
    with manager:
        manager.launch()
        rows = []
        for _ in range(steps):
            batch = manager.step_batch(rng.integers(0, 2, manager.env_num))
            rows.append(np.concatenate([batch.obs.ravel(), batch.reward.ravel(), batch.done.astype(np.float32)]))
    return np.stack(rows)


def test_auto_pins_worker_w_to_the_usable_cores_in_turn_and_leaves_the_caller_alone() -> None:
    callers_cores = os.sched_getaffinity(0)
    manager = cartpoles(4, cpu_affinity="auto")
    with manager:
        manager.launch()
        assert worker_cores(manager) == [{CORES[w % len(CORES)]} for w in range(4)]
        assert os.sched_getaffinity(0) == callers_cores


def test_a_list_of_cores_is_used_in_turn_and_with_step_in_caller_group_zero_has_no_worker_to_pin() -> None:
    last = CORES[-1]
    manager = cartpoles(6, envs_per_worker=2, step_in_caller=True, cpu_affinity=[last])
    with manager:
        manager.launch()
        assert worker_cores(manager) == [None, {last}, {last}]


def test_pinned_workers_give_the_batches_unpinned_ones_give() -> None:
    plain = rollout(cartpoles(4, envs_per_worker=2), 200)
    pinned = rollout(cartpoles(4, envs_per_worker=2, cpu_affinity="auto"), 200)
    np.testing.assert_array_equal(plain, pinned)


def test_a_replaced_worker_runs_on_the_core_of_the_one_it_replaces() -> None:
    manager = cartpoles(4, envs_per_worker=2, cpu_affinity=[CORES[-1], CORES[0]], max_retry=2, step_timeout=30.0)
    with manager:
        manager.launch()
        before = worker_cores(manager)
        victim = manager.worker_pids[1]  # type: ignore[attr-defined]
        os.kill(victim, signal.SIGKILL)
        timesteps = manager.step({i: 0 for i in manager.ready_obs_id})
        assert timesteps[2].info["abnormal"] and not timesteps[0].info.get("abnormal")
        assert manager.worker_pids[1] != victim  # type: ignore[attr-defined]
        assert worker_cores(manager) == before == [{CORES[-1]}, {CORES[0]}]


def test_the_async_manager_pins_its_workers_too() -> None:
    manager = cartpoles(2, "async_subprocess", cpu_affinity=[CORES[0]])
    with manager:
        manager.launch()
        assert worker_cores(manager) == [{CORES[0]}, {CORES[0]}]


@pytest.mark.parametrize("value", ["all", [], [-1], [True], [0.5], 1, {"0": 1}])
def test_a_value_that_is_not_a_setting_is_refused_naming_it_and_what_is_accepted(value: Any) -> None:
    with pytest.raises(ConfigError, match=r"env\.manager\.cpu_affinity must be None .*'auto'.*list of core ids"):
        cartpoles(2, cpu_affinity=value)


def test_a_core_this_process_may_not_use_is_refused_when_the_manager_is_made() -> None:
    missing = max(CORES) + 1
    with pytest.raises(ConfigError, match=rf"cpu_affinity=\[{missing}\] names cores \[{missing}\] .* may use cores"):
        cartpoles(2, cpu_affinity=[missing])


@pytest.mark.parametrize("manager_type", ["base", "thread"])
def test_managers_without_worker_processes_refuse_the_key(manager_type: str) -> None:
    with pytest.raises(UnknownConfigKeyError, match="cpu_affinity"):
        cartpoles(2, manager_type, cpu_affinity="auto")


def test_a_config_file_with_the_key_compiles_for_subprocess_and_is_refused_for_base() -> None:
    from dizoo.classic_control.cartpole.config.cartpole_dqn_config import create_config, main_config

    main, create = copy.deepcopy(main_config), copy.deepcopy(create_config)
    main.env.manager = {"cpu_affinity": "auto"}
    create.env_manager = {"type": "subprocess"}
    assert compile_config(main, create).env.manager.cpu_affinity == "auto"
    create.env_manager = {"type": "base"}
    with pytest.raises(ConfigError, match="cpu_affinity"):
        compile_config(main, create)
