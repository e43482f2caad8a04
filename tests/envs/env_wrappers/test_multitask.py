"""The multitask env over real gymnasium envs: the merge rule, task choice, padding, and the ``task_id`` wrapper."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.envs.classic_control import AcrobotEnv, CartPoleEnv, MountainCarEnv, PendulumEnv

from ding.envs.env_wrappers import (
    MultitaskEnv,
    TaskIdWrapper,
    apply_wrappers,
    merge_task_spaces,
    update_shape,
    update_space,
)
from ding.envs.values.spaces import EnvSpaces, reward_space_of
from ding.errors import ConfigError, ShapeRuleError, SpaceKindError
from tests.envs.env_wrappers.checks import assert_matches_space, assert_same_space


def box(low: Any, high: Any, n: int, dtype: Any = np.float32) -> spaces.Box:
    return spaces.Box(low, high, (n,), dtype)


def spaces_of(env: gym.Env[Any, Any]) -> EnvSpaces:
    return EnvSpaces(env.observation_space, env.action_space, reward_space_of(env))


def acrobot_and_mountain_car(**kwargs: Any) -> MultitaskEnv:
    envs = [gym.make("Acrobot-v1"), gym.make("MountainCar-v0")]
    return MultitaskEnv(envs, ["acrobot", "mountain_car"], pad_observation=True, **kwargs)


# ----- the rule -------------------------------------------------------------------------------------------
def test_equal_task_spaces_are_kept_as_they_are() -> None:
    cartpole = spaces_of(CartPoleEnv())
    merged = merge_task_spaces([cartpole, cartpole])
    assert merged == cartpole


def test_bounds_of_one_shape_are_united() -> None:
    a = EnvSpaces(box(-1, 1, 2), spaces.Discrete(2), box(0, 1, 1))
    b = EnvSpaces(box(np.float32([-3, 0]), np.float32([0, 5]), 2), spaces.Discrete(2), box(-2, 0.5, 1))
    merged = merge_task_spaces([a, b])
    assert_same_space(merged.observation, box(np.float32([-3, -1]), np.float32([1, 5]), 2), "observation")
    assert_same_space(merged.reward, box(-2, 1, 1), "reward")


def test_padding_unites_bounds_with_the_zeros_it_adds() -> None:
    acrobot, mountain_car = spaces_of(AcrobotEnv()), spaces_of(MountainCarEnv())
    merged = merge_task_spaces([mountain_car, acrobot], pad_observation=True)
    zeros = np.zeros(4, np.float32)
    low = np.minimum(acrobot.observation.low, np.concatenate([mountain_car.observation.low, zeros]))
    high = np.maximum(acrobot.observation.high, np.concatenate([mountain_car.observation.high, zeros]))
    assert_same_space(merged.observation, spaces.Box(low, high, (6,), np.float32), "observation")
    assert merged.action == spaces.Discrete(3)
    # mountain car's position never reaches 0 from below, yet padded entries hold 0: the bound must include it
    positive = EnvSpaces(box(1, 2, 1), spaces.Discrete(3))
    assert merge_task_spaces([positive, acrobot], pad_observation=True).observation.low[0] == acrobot.observation.low[0]
    assert merge_task_spaces([acrobot, positive], pad_observation=True).observation.high[1] >= 1


def test_different_actions_are_refused_naming_both_tasks() -> None:
    cartpole, acrobot = spaces_of(CartPoleEnv()), spaces_of(AcrobotEnv())
    with pytest.raises(ShapeRuleError, match=r"task 1 \('acrobot'\) has action space Discrete\(3\), but task 0 "):
        merge_task_spaces([cartpole, acrobot], pad_observation=True, task_names=["cartpole", "acrobot"])


def test_different_observation_lengths_need_padding() -> None:
    acrobot, mountain_car = spaces_of(AcrobotEnv()), spaces_of(MountainCarEnv())
    with pytest.raises(ShapeRuleError, match=r"task 1 has observation space .*\(2,\).*set pad_observation=True"):
        merge_task_spaces([acrobot, mountain_car])


def test_padding_needs_flat_boxes_of_one_dtype() -> None:
    image = EnvSpaces(spaces.Box(0, 255, (4, 4), np.uint8), spaces.Discrete(2))
    flat = EnvSpaces(box(0, 1, 4), spaces.Discrete(2))
    with pytest.raises(ShapeRuleError, match=r"pad_observation=True needs flat \(1-D\) Box observations of one dtype"):
        merge_task_spaces([flat, image], pad_observation=True)
    with pytest.raises(ShapeRuleError, match="one dtype"):
        merge_task_spaces([flat, EnvSpaces(box(0, 1, 3, np.float64), spaces.Discrete(2))], pad_observation=True)
    nested = EnvSpaces(spaces.Dict({"a": box(0, 1, 2)}), spaces.Discrete(2))
    with pytest.raises(SpaceKindError, match=r"needs a Box observation; got Dict"):
        merge_task_spaces([flat, nested], pad_observation=True)


def test_rewards_of_different_shapes_are_refused() -> None:
    a = EnvSpaces(box(0, 1, 2), spaces.Discrete(2), box(0, 1, 1))
    b = EnvSpaces(box(0, 1, 2), spaces.Discrete(2), box(0, 1, 3))
    with pytest.raises(ShapeRuleError, match=r"task 1 has reward space .*\(3,\).* same reward shape and dtype"):
        merge_task_spaces([a, b])
    with pytest.raises(ConfigError, match="at least one task"):
        merge_task_spaces([])


# ----- the env ------------------------------------------------------------------------------------------
def test_observations_are_padded_and_the_task_reported() -> None:
    env = acrobot_and_mountain_car()
    for task in ("mountain_car", 0, np.int64(1)):
        obs, info = env.reset(seed=3, options={"task_id": task})
        index = env.task_index(task)
        assert info["task_id"] == index == env.current_task and info["task_name"] == env.task_names[index]
        assert_matches_space(obs, env.observation_space, f"reset obs of {task}")
        for t in range(30):
            obs, reward, _, _, info = env.step(env.action_space.sample())
            assert_matches_space(obs, env.observation_space, f"obs at step {t} of {task}")
            assert env.reward_space.contains(np.float32([reward])) and info["task_id"] == index
        if index == 1:
            assert not obs[2:].any()  # mountain car's two values, then zeros
    env.close()


def test_the_task_seed_reaches_the_task_env() -> None:
    env = acrobot_and_mountain_car()
    alone = gym.make("MountainCar-v0")
    obs, _ = env.reset(seed=11, options={"task_id": "mountain_car"})
    np.testing.assert_array_equal(obs[:2], alone.reset(seed=11)[0])
    np.testing.assert_array_equal(env.step(2)[0][:2], alone.step(2)[0])


def test_random_order_follows_the_seed_and_cycle_takes_turns() -> None:
    def tasks(env: MultitaskEnv, seed: int | None, n: int) -> list[int]:
        first = env.reset(seed=seed)[1]["task_id"]
        return [first] + [env.reset()[1]["task_id"] for _ in range(n - 1)]

    random_tasks = tasks(acrobot_and_mountain_car(), 5, 40)
    assert random_tasks == tasks(acrobot_and_mountain_car(), 5, 40)
    assert set(random_tasks) == {0, 1}
    assert tasks(acrobot_and_mountain_car(task_order="cycle"), 5, 5) == [1, 0, 1, 0, 1]  # from 5 % 2
    assert tasks(acrobot_and_mountain_car(task_order="cycle"), None, 3) == [0, 1, 0]


def test_bad_tasks_orders_and_calls_are_errors() -> None:
    env = acrobot_and_mountain_car()
    with pytest.raises(RuntimeError, match="step before reset"):
        env.step(0)
    with pytest.raises(ConfigError, match=r"unknown task 'pong'; give an index in \[0, 1\] or a name of"):
        env.reset(options={"task_id": "pong"})
    with pytest.raises(ConfigError, match=r"unknown task 2"):
        env.reset(options={"task_id": 2})
    with pytest.raises(ConfigError, match="task_order must be 'random' or 'cycle'; got 'sorted'"):
        MultitaskEnv([CartPoleEnv()], task_order="sorted")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="task names must differ"):
        MultitaskEnv([CartPoleEnv(), CartPoleEnv()], ["a", "a"])
    with pytest.raises(ShapeRuleError, match="every task must take the same actions"):
        MultitaskEnv([CartPoleEnv(), PendulumEnv()], pad_observation=True)


# ----- task_id ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("encoding", "shape"), [("one_hot", (8,)), ("index", (7,)), ("dict", {"observation": (6,), "task_id": 2})]
)
def test_task_id_prediction_is_the_built_env_and_its_values(encoding: str, shape: Any) -> None:
    env = acrobot_and_mountain_car()
    chain = [("task_id", {"num_tasks": 2, "encoding": encoding})]
    assert update_shape((6,), 3, (1,), chain)[0] == shape
    predicted = update_space(*spaces_of(env), chain)
    wrapped = apply_wrappers(env, chain)
    assert_same_space(wrapped.observation_space, predicted.observation, "observation")
    env.action_space.seed(0)
    for episode in range(4):
        obs, info = wrapped.reset(seed=episode)
        assert_matches_space(obs, predicted.observation, "obs after reset")
        task = info["task_id"]
        for _ in range(5):
            obs = wrapped.step(env.action_space.sample())[0]
            assert_matches_space(obs, predicted.observation, "obs after a step")
        if encoding == "one_hot":
            assert obs[6:].tolist() == [float(task == 0), float(task == 1)]
        elif encoding == "index":
            assert obs[6] == task
        else:
            assert obs["task_id"] == task


def test_task_id_joins_a_dict_observation() -> None:
    obs = spaces.Dict({"pos": box(0, 1, 2)})
    new = TaskIdWrapper.new_space(obs, spaces.Discrete(2), None, num_tasks=4, encoding="dict", key="task")[0]
    assert list(new.spaces) == ["pos", "task"] and new["task"] == spaces.Discrete(4)
    with pytest.raises(ShapeRuleError, match="already has the key 'pos'"):
        TaskIdWrapper.new_space(obs, spaces.Discrete(2), None, num_tasks=4, encoding="dict", key="pos")


def test_task_id_rule_refuses_what_it_cannot_encode() -> None:
    with pytest.raises(ShapeRuleError, match=r"wrapper chain step 0 task_id.*needs a flat \(1-D\) Box observation"):
        update_shape((2, 3), 2, (1,), [("task_id", {"num_tasks": 2})])
    with pytest.raises(ShapeRuleError, match="uint8 observations cannot hold task index 299"):
        TaskIdWrapper.new_space(box(0, 255, 3, np.uint8), spaces.Discrete(2), None, num_tasks=300, encoding="index")
    with pytest.raises(ConfigError, match="wrapper 'task_id' needs argument 'num_tasks'"):
        update_shape((2,), 2, (1,), ["task_id"])
    with pytest.raises(
        ShapeRuleError, match="ConfigError: task_id: encoding must be one of 'one_hot', 'index', 'dict'"
    ):
        update_shape((2,), 2, (1,), [("task_id", {"num_tasks": 2, "encoding": "bits"})])


def test_task_id_needs_the_task_from_the_env_inside() -> None:
    with pytest.raises(ConfigError, match="num_tasks=3, but the multitask env inside has 2 tasks"):
        TaskIdWrapper(acrobot_and_mountain_car(), num_tasks=3)
    wrapped = TaskIdWrapper(gym.make("CartPole-v1"), num_tasks=2)
    with pytest.raises(ConfigError, match=r"task_id needs an env that reports info\['task_id'\] at reset"):
        wrapped.reset(seed=0)
