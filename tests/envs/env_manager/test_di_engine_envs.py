"""Envs written DI-engine's way run in every manager kind.

Their spaces are not declared, so a process manager probes them in a child process before launch
(the base manager reads them from ``env_ref``); the envs check their own actions, which travel
pickled, and without shared memory their observations and rewards travel as the envs return them.
"""

from __future__ import annotations

import os
from functools import partial
from typing import Any

import numpy as np
import pytest

from ding.envs.env_manager import EnvState
from dizoo.classic_control.cartpole.envs import CartPoleEnv
from tests.envs.env_manager.conftest import MakeManager
from tests.envs.env_manager.di_engine_envs import (
    ACTION_SPACE,
    EPISODE_LEN,
    OBS_SPACE,
    REWARD_SPACE,
    PlainEnv,
    PropertySpacesEnv,
)

PROCESS_PID = os.getpid()


def plain_fns(n: int) -> list[Any]:
    return [partial(PlainEnv, cfg={"name": f"name{i}"}) for i in range(n)]


def test_plain_env_runs_with_its_own_actions_and_attributes(manager_kind: str, new_manager: MakeManager) -> None:
    # a ray transport fixes shared_memory; every other kind runs both layouts
    layouts = [manager_kind == "ray-shm"] if manager_kind.startswith("ray") else [True, False]
    for shared_memory in layouts:
        _run_plain_env(shared_memory, manager_kind, new_manager)


def _run_plain_env(shared_memory: bool, manager_kind: str, new_manager: MakeManager) -> None:
    manager = new_manager(manager_kind, plain_fns(2), shared_memory=shared_memory, episode_num=2)
    assert (manager.observation_space, manager.action_space, manager.reward_space) == (
        OBS_SPACE,
        ACTION_SPACE,
        REWARD_SPACE,
    )
    manager.seed([314, 315])
    manager.launch(reset_param={0: {"stat": "stat_test"}, 1: {"stat": "other"}})
    assert manager._seed == [314, 315] and manager._stat == ["stat_test", "other"]  # env attributes, fanned out
    assert manager.name == ["name0", "name1"] and manager._name == ["name0", "name1"]
    with pytest.raises(RuntimeError, match=r"'where' is an env method, and only the methods in method_name_list"):
        manager.where()
    with pytest.raises(AttributeError, match="has no attribute 'xxx'"):
        _ = manager.xxx
    # actions of any form reach the env unchecked, as DI-engine's envs expect (a wrong shape included)
    timesteps = manager.step({0: np.random.randn(4), 1: [0.0]})
    in_shared_memory = shared_memory and manager_kind != "base"  # rewards through the float32 buffer
    assert timesteps[0].reward.dtype == (np.float32 if in_shared_memory else np.int64)
    np.testing.assert_array_equal(timesteps[0].obs, np.full(3, 0.1, np.float32))
    assert timesteps[1].info == {"name": "name1", "t": 1}
    steps = 1
    while not manager.done:
        ready = manager.ready_obs
        manager.step({i: np.zeros(1, np.float32) for i in ready})
        steps += 1
    assert steps == 2 * EPISODE_LEN
    assert sum(manager._data_count) == 2 * 2 * EPISODE_LEN
    assert manager.env_states == {0: EnvState.DONE, 1: EnvState.DONE}


def test_the_env_reports_its_own_abnormal_step(manager_kind: str, new_manager: MakeManager) -> None:
    manager = new_manager(manager_kind, plain_fns(2), shared_memory=manager_kind == "ray-shm")
    manager.launch()
    if manager_kind != "ray-shm":  # pickled observations and rewards: whatever the env returns, None included
        timesteps = manager.step({0: "catched_error", 1: "none_obs"})
        assert timesteps[0].info == {"abnormal": True} and timesteps[0].obs is None and timesteps[0].reward is None
        assert timesteps[1].obs is None and not timesteps[1].done
        assert manager.env_states == {0: EnvState.RUN, 1: EnvState.RUN}  # env 0 was reset
    timesteps = manager.step({0: "error", 1: np.zeros(1)})  # an exception: the episode ends abnormally
    assert timesteps[0].info["abnormal"] and "asked to fail" in timesteps[0].info["error"]
    assert sorted(manager.ready_obs) == [0, 1]


def test_property_spaces_env_matches_across_managers(manager_kind: str, new_manager: MakeManager) -> None:
    fns = [partial(PropertySpacesEnv, cfg={})] * 3
    manager = new_manager(manager_kind, fns, episode_num=2)
    assert manager.observation_space == OBS_SPACE and manager.action_space.n == 2  # type: ignore[attr-defined]
    manager.seed(3)
    manager.launch()
    np.testing.assert_array_equal(manager.ready_obs[1], np.full(3, 0.4, np.float32))  # seed 4 % 5 / 10
    total = 0
    while not manager.done:
        for timestep in manager.step({i: 1 for i in manager.ready_obs_id}).values():
            total += int(timestep.done)
            assert timestep.reward.shape == (1,) and float(timestep.reward[0]) == 1.0
    assert total == 6


@pytest.mark.parametrize("kind", ["subprocess-1", "async", "zmq"])
def test_process_managers_never_build_an_undeclared_env_here(kind: str, new_manager: MakeManager) -> None:
    def guarded() -> PlainEnv:
        if os.getpid() == PROCESS_PID:
            raise RuntimeError("a DI-engine-style env was built in the manager's process")
        return PlainEnv({"name": "far"})

    manager = new_manager(kind, [guarded] * 2)
    assert manager.observation_space == OBS_SPACE  # probed in a child process
    manager.launch()
    assert manager.name == ["far", "far"]


def test_env_ref_is_built_here_on_request_and_closed_with_the_manager(new_manager: MakeManager) -> None:
    manager = new_manager("subprocess-1", plain_fns(2))
    reference = manager._env_ref  # DI-engine's attribute: an env in this process, built on request
    assert isinstance(reference, PlainEnv) and manager.env_ref is reference
    manager.launch()
    manager.close()
    assert reference.closed


def test_per_env_calls_and_random_actions(manager_kind: str, new_manager: MakeManager) -> None:
    manager = new_manager(manager_kind, plain_fns(2))
    manager.launch()
    assert manager.reward_shaping(1, [{"reward": 1}]) == [{"reward": 1, "shaped_by": "name1"}]
    actions = manager.random_action()
    assert sorted(actions) == [0, 1] and all(ACTION_SPACE.contains(a) for a in actions.values())


def test_a_lambda_constructor_of_a_declaring_env_is_probed(new_manager: MakeManager) -> None:
    manager = new_manager("subprocess-2", [lambda: CartPoleEnv({})] * 2)
    manager.launch()
    assert manager.step({0: np.array([1]), 1: 0})[0].obs.shape == (4,)
