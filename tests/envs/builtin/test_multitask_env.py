"""The ``multitask`` env over dizoo and gymnasium envs: its spec from the tasks' configs, proven against the built env
and its values, in the base and subprocess managers, with and without a curriculum."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

import numpy as np
import pytest

from ding.envs import ENV_REGISTRY, env_class
from ding.envs.builtin.multitask_env import MultitaskDingEnv, task_names
from ding.envs.checks.env_checker import check_ding_env
from ding.envs.env_manager import BaseEnvManager, SyncSubprocessEnvManager
from ding.errors import ConfigError, EnvSpecError, ShapeRuleError
from tests.envs.env_manager.di_engine_envs import PropertySpacesEnv
from tests.envs.env_wrappers.checks import assert_matches_space, assert_reward_matches, assert_same_space

CLASSIC = "dizoo.classic_control"
PENDULUM_AND_CAR = {
    "tasks": [
        {"type": "pendulum", "import_names": [f"{CLASSIC}.pendulum.envs"]},
        # pendulum's act_scale clips an action to [-1, 1]; the car's chain clips too, so both take the same actions
        {
            "type": "mountain_car",
            "import_names": [f"{CLASSIC}.mountain_car.envs"],
            "continuous": True,
            "env_wrapper": ["continuous_action_clip"],
        },
    ],
    "task_names": ["pendulum", "car"],
    "pad_observation": True,
}
CARTPOLES = {
    "tasks": [
        {"type": "cartpole", "import_names": [f"{CLASSIC}.cartpole.envs"], "max_episode_steps": 10},
        {"type": "cartpole", "import_names": [f"{CLASSIC}.cartpole.envs"], "max_episode_steps": 25},
        "CartPole-v1",
    ],
}
GYM_DISCRETE = {"tasks": ["Acrobot-v1", "MountainCar-v0"], "pad_observation": True}


@pytest.mark.parametrize("encoding", ["one_hot", "index", "dict"])
@pytest.mark.parametrize("cfg", [PENDULUM_AND_CAR, CARTPOLES, GYM_DISCRETE], ids=["continuous", "cartpoles", "gym"])
def test_the_declared_spec_is_the_built_env_and_holds_its_values(cfg: dict[str, Any], encoding: str) -> None:
    cfg = {**cfg, "task_id_encoding": encoding}
    declared = MultitaskDingEnv.spaces_from_config(cfg)
    env = MultitaskDingEnv(cfg)
    assert_same_space(env.observation_space, declared.observation, "observation")
    assert_same_space(env.action_space, declared.action, "action")
    assert_same_space(env.reward_space, declared.reward, "reward")
    env.seed(0)
    tasks = set()
    for _ in range(6):
        assert_matches_space(env.reset(), declared.observation, "obs after reset")
        for _ in range(30):
            timestep = env.step(env.random_action())
            assert_matches_space(timestep.obs, declared.observation, "obs")
            assert_reward_matches(timestep.reward, declared.reward, "reward")
            tasks.add(timestep.info["task_id"])
            if timestep.done:
                break
    assert tasks == set(range(len(cfg["tasks"])))
    env.close()


def test_it_passes_the_conformance_checks() -> None:
    check_ding_env(MultitaskDingEnv, GYM_DISCRETE, steps=300)
    check_ding_env(MultitaskDingEnv, {**CARTPOLES, "task_id_encoding": "dict"}, steps=60)


def test_tasks_are_named_and_registered_by_name() -> None:
    assert env_class({"type": "multitask"}) is MultitaskDingEnv
    assert task_names(CARTPOLES) == ["cartpole#0", "cartpole#1", "CartPole-v1"]
    env = MultitaskDingEnv({**CARTPOLES, "task_names": ["short", "medium", "long"]})
    env.seed(1)
    env.reset()
    assert env.step(0).info["task_name"] in ("short", "medium", "long")


def test_evaluators_take_the_tasks_in_turn() -> None:
    env = MultitaskDingEnv({**CARTPOLES, "is_train": False})
    env.seed(7, dynamic_seed=False)
    seen = []
    for _ in range(6):
        first = env.reset()
        timestep = env.step(0)
        seen.append(timestep.info["task_id"])
        assert first[4 + timestep.info["task_id"]] == 1.0  # the one-hot task after the 4 CartPole values
    assert seen == [1, 2, 0, 1, 2, 0]  # from the seed 7 % 3


def run(manager: BaseEnvManager) -> Iterator[tuple[int, Any]]:
    """Step every env with random actions until each has played its episodes; yield (env id, timestep)."""
    manager.seed(0)
    manager.launch()
    action_space = manager.action_space
    action_space.seed(0)
    while not manager.done:
        actions = {i: np.asarray(action_space.sample()) for i in manager.ready_obs_id}
        yield from manager.step(actions).items()


@pytest.mark.parametrize("kind", ["base", "subprocess"])
def test_managers_run_it_with_its_declared_layout(kind: str) -> None:
    cfg = {**PENDULUM_AND_CAR, "env_wrapper": [("time_limit", {"max_episode_steps": 20})]}
    fns = [partial(MultitaskDingEnv, cfg=cfg)] * 3
    manager_cls = BaseEnvManager if kind == "base" else SyncSubprocessEnvManager
    declared = MultitaskDingEnv.spaces_from_config(cfg)
    extra = {"shared_memory": True} if kind == "subprocess" else {}
    with manager_cls(fns, {"episode_num": 4, **extra}) as manager:
        assert manager.observation_space == declared.observation
        ends = []
        for _, timestep in run(manager):
            assert_matches_space(timestep.obs, declared.observation, "obs")
            task = timestep.info["task_id"]
            assert timestep.obs[3 + task] == 1.0 and timestep.obs[3 + 1 - task] == 0.0
            if timestep.done:
                ends.append(timestep.info)
    assert len(ends) == 12 and all("eval_episode_return" in info for info in ends)
    assert {info["task_name"] for info in ends} == {"pendulum", "car"}


def test_a_curriculum_reports_its_statistics_through_a_subprocess_manager() -> None:
    curriculum = {"progress_favor": 4.0, "warmup_period": 2}
    cfg = {**CARTPOLES, "curriculum": curriculum}
    assert [step[0] for step in MultitaskDingEnv.spec_trace(cfg)][1:3] == [
        "curriculum(progress_favor=4.0, current_score_update_rate=0.001, past_score_update_rate=0.0005, "
        "warmup_period=2)",
        "task_id(num_tasks=3, encoding='one_hot', key='task_id')",
    ]
    assert "curriculum" not in str(MultitaskDingEnv.spec_trace({**cfg, "is_train": False}))  # evaluators take turns
    fns = [partial(MultitaskDingEnv, cfg=cfg)] * 2
    with SyncSubprocessEnvManager(fns, {"episode_num": 6, "shared_memory": True}) as manager:
        ends = [(env_id, ts.info) for env_id, ts in run(manager) if ts.done]
    assert len(ends) == 12
    for env_id in (0, 1):
        infos = [info for i, info in ends if i == env_id]
        assert [int(info["curriculum"]["episodes"].sum()) for info in infos] == [1, 2, 3, 4, 5, 6]  # each env counts
        last = infos[-1]["curriculum"]
        assert last["probabilities"].shape == (3,) and last["probabilities"].sum() == pytest.approx(1.0)
        assert last["task_id"] == infos[-1]["task_id"] and 1.0 <= last["favor"] <= 4.0


def test_bad_configs_are_refused_before_anything_is_built() -> None:
    with pytest.raises(ConfigError, match=r"env\.tasks must be a non-empty list"):
        MultitaskDingEnv.spaces_from_config({})
    with pytest.raises(ConfigError, match=r"env.tasks.1 must be an env config with a 'type' or a gymnasium id"):
        MultitaskDingEnv.spaces_from_config({"tasks": ["CartPole-v1", {"env_id": "CartPole-v1"}]})
    with pytest.raises(ShapeRuleError, match=r"task 1 \('Acrobot-v1'\) has action space Discrete\(3\)"):
        MultitaskDingEnv.spaces_from_config({"tasks": ["CartPole-v1", "Acrobot-v1"], "pad_observation": True})
    with pytest.raises(ShapeRuleError, match="set pad_observation=True"):
        MultitaskDingEnv.spaces_from_config({"tasks": ["Acrobot-v1", "MountainCar-v0"]})
    with pytest.raises(ConfigError, match="task_id_encoding must be one of 'one_hot', 'index', 'dict', got 'bits'"):
        MultitaskDingEnv.spaces_from_config({**GYM_DISCRETE, "task_id_encoding": "bits"})
    with pytest.raises(ConfigError, match=r"task_order must be one of 'random', 'cycle' or None \(.*\), got 'sorted'"):
        MultitaskDingEnv({**GYM_DISCRETE, "task_order": "sorted"})
    with pytest.raises(ConfigError, match="task_names must be 2 different names"):
        MultitaskDingEnv.spaces_from_config({**GYM_DISCRETE, "task_names": ["a", "a"]})
    with pytest.raises(ConfigError, match=r"unknown config key 'env\.pad_observations'"):
        MultitaskDingEnv({**GYM_DISCRETE, "pad_observations": True})
    ENV_REGISTRY.register("test_multitask_plain")(PropertySpacesEnv)
    try:
        with pytest.raises(
            EnvSpecError, match=r"tasks.0 \('test_multitask_plain', PropertySpacesEnv\) does not declare"
        ):
            MultitaskDingEnv.spaces_from_config({"tasks": [{"type": "test_multitask_plain"}]})
    finally:
        ENV_REGISTRY.unregister("test_multitask_plain")


def test_replays_are_refused_with_a_reason(tmp_path: Any) -> None:
    env = MultitaskDingEnv(GYM_DISCRETE)
    env.enable_save_replay(str(tmp_path))
    with pytest.raises(ConfigError, match="multitask envs record no replays"):
        env.reset()
