"""DI-engine's V2 managers: stacked ready observations, actions in ``ready_obs_id`` order, a list of timesteps."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from ding.envs.env_manager import (
    BaseEnvManagerV2,
    EnvState,
    SubprocessEnvManagerV2,
    create_env_manager,
    get_env_manager_cls,
)
from ding.envs.env_manager.base_env_manager import BaseEnvManagerV2 as BaseV2FromDIEngineModule
from ding.envs.env_manager.subprocess_env_manager import SubprocessEnvManagerV2 as SubV2FromDIEngineModule
from dizoo.classic_control.cartpole.envs import CartPoleEnv
from tests.envs.env_manager.di_engine_envs import PlainEnv
from tests.envs.env_manager.envs import DictObsEnv

V2_TYPES = ["base_v2", "subprocess_v2"]


def test_registry_names_and_di_engine_modules_give_the_v2_classes() -> None:
    assert get_env_manager_cls({"type": "base_v2"}) is BaseEnvManagerV2 is BaseV2FromDIEngineModule
    assert get_env_manager_cls({"type": "subprocess_v2"}) is SubprocessEnvManagerV2 is SubV2FromDIEngineModule
    assert SubprocessEnvManagerV2.default_config().shared_memory is True  # the subprocess manager's defaults
    assert SubprocessEnvManagerV2.default_config().cfg_type == "SubprocessEnvManagerV2Dict"


@pytest.mark.parametrize("manager_type", V2_TYPES)
def test_ready_obs_is_stacked_and_steps_take_actions_in_ready_order(manager_type: str) -> None:
    with create_env_manager({"type": manager_type, "episode_num": 1}, [partial(CartPoleEnv, cfg={})] * 3) as manager:
        manager.seed(0)
        manager.launch()
        obs = manager.ready_obs
        assert isinstance(obs, np.ndarray) and obs.shape == (3, 4)
        timesteps = manager.step([0, 1, 0])
        assert [t.env_id.item() for t in timesteps] == [0, 1, 2]
        assert all(isinstance(t.env_id, np.ndarray) and t.env_id.dtype == np.int64 for t in timesteps)
        assert timesteps[1].obs.shape == (4,) and timesteps[1].reward.shape == (1,) and not timesteps[1].done
        timesteps = manager.step(np.array([1, 1, 1]))  # an array: one row per ready env
        assert len(timesteps) == 3
        timesteps = manager.step({2: 0})  # a dict names the envs to step
        assert [t.env_id.item() for t in timesteps] == [2]
        with pytest.raises(ValueError, match=r"step\(\) got 2 actions for the 3 ready envs \[0, 1, 2\]"):
            manager.step([0, 1])
        while not manager.done:
            for t in manager.step([0] * len(manager.ready_obs_id)):
                if t.done:
                    assert t.info.eval_episode_return == t.info["eval_episode_return"]
        assert manager.ready_obs.shape == (0, 4)
        assert manager.env_states == {i: EnvState.DONE for i in range(3)}


@pytest.mark.parametrize("manager_type", V2_TYPES)
def test_dict_observations_are_stacked_per_key(manager_type: str) -> None:
    with create_env_manager({"type": manager_type}, [partial(DictObsEnv, cfg={})] * 2) as manager:
        manager.launch()
        obs = manager.ready_obs
        assert obs["image"].shape == (2, 5, 7, 3) and obs["state"]["pos"].shape == (2, 2)


@pytest.mark.parametrize("manager_type", V2_TYPES)
def test_info_reads_as_attributes_and_abnormal_steps_show_it(manager_type: str) -> None:
    cfg = {"type": manager_type, "shared_memory": False}
    with create_env_manager(cfg, [partial(PlainEnv, cfg={"name": f"n{i}"}) for i in range(3)]) as manager:
        manager.launch(reset_param={i: {"stat": "stat_test"} for i in range(3)})
        timesteps = manager.step(["catched_error", np.zeros(1), np.zeros(1)])
        assert timesteps[0].info.abnormal and all("abnormal" not in t.info for t in timesteps[1:])
        assert timesteps[1].info.name == "n1"
        with pytest.raises(AttributeError, match=r"info has no key 'nope'; keys: \['name', 't'\]"):
            _ = timesteps[1].info.nope
        assert manager.ready_obs.shape == (3, 3)  # env 0 was reset


def test_a_closed_v2_manager_refuses_steps_as_di_engine_asserts() -> None:
    manager = BaseEnvManagerV2([partial(CartPoleEnv, cfg={})], BaseEnvManagerV2.default_config())
    manager.launch()
    manager.close()
    with pytest.raises(AssertionError):
        manager.step([])
    with pytest.raises(AssertionError):
        manager.reset([])  # type: ignore[arg-type]
