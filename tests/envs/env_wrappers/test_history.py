"""Behaviour of the wrappers that put the previous action and reward into the observation."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.env_wrappers import update_shape, update_space
from ding.envs.env_wrappers.history import ActionObservationWrapper, ObsPlusPrevActRewWrapper
from ding.envs.values.spaces import DEFAULT_REWARD_SPACE
from ding.errors import ShapeRuleError
from tests.envs.env_wrappers.catalogue import make_catalogue_env


class CounterEnv(gym.Env[np.ndarray, Any]):
    """Observation and reward are the step counter (the reward is 10 * t, per objective for vector rewards)."""

    box = spaces.Box(0, 100, (1,), np.float32)

    def __init__(self, action_space: spaces.Space[Any], reward_space: spaces.Box = DEFAULT_REWARD_SPACE) -> None:
        self.observation_space = self.box
        self.action_space = action_space
        self.reward_space = reward_space
        self.t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        self.t += 1
        obs = np.array([self.t], np.float32)
        if self.reward_space.shape == (1,):
            return obs, 10.0 * self.t, False, False, {}
        return obs, np.arange(1, 4, dtype=np.float32) * self.t, False, False, {}


# --- action_observation -----------------------------------------------------------------------------------------


def test_action_observation_carries_the_previous_discrete_action() -> None:
    env = ActionObservationWrapper(CounterEnv(spaces.Discrete(4)))
    assert env.observation_space == spaces.Dict({"observation": CounterEnv.box, "prev_action": spaces.Discrete(4)})
    obs, _ = env.reset(seed=0)
    assert obs["prev_action"] == 0 and obs["observation"][0] == 0
    for t, a in enumerate((3, 1, 2), start=1):
        obs, *_ = env.step(a)
        assert obs["prev_action"] == a and obs["observation"][0] == t
        assert env.observation_space.contains(obs)
    obs, _ = env.reset()
    assert obs["prev_action"] == 0


def test_action_observation_box_action_is_clipped_copied_and_zeroed() -> None:
    env = ActionObservationWrapper(CounterEnv(spaces.Box(-1.0, 1.0, (2,), np.float32)))
    obs, _ = env.reset(seed=0)
    np.testing.assert_array_equal(obs["prev_action"], [0.0, 0.0])
    action = np.array([0.5, 3.0], np.float32)
    obs, *_ = env.step(action)
    action[0] = -0.25  # the agent reuses its buffer: the observation must not change
    np.testing.assert_array_equal(obs["prev_action"], [0.5, 1.0])
    assert obs["prev_action"].dtype == np.float32
    first_zero, _ = env.reset()
    first_zero["prev_action"][0] = 9.0
    again, _ = env.reset()
    np.testing.assert_array_equal(again["prev_action"], [0.0, 0.0])


def test_action_observation_zero_action_respects_start() -> None:
    env = ActionObservationWrapper(CounterEnv(spaces.Discrete(3, start=2)))
    obs, _ = env.reset(seed=0)
    assert obs["prev_action"] == 2 and env.observation_space.contains(obs)


def test_action_observation_shapes_and_errors() -> None:
    assert update_shape((5,), 3, (1,), ["action_observation"]) == (
        {"observation": (5,), "prev_action": 3},
        3,
        (1,),
    )
    nested = {"image": (8, 8, 3)}
    assert update_shape(nested, [2, 3], (1,), ["action_observation"])[0] == {
        "observation": nested,
        "prev_action": [2, 3],
    }
    with pytest.raises(ShapeRuleError, match=r"step 0 action_observation.*got the nested action shape \{'move': 2\}"):
        update_shape((5,), {"move": 2}, (1,), ["action_observation"])


# --- obs_plus_prev_action_reward --------------------------------------------------------------------------------


def test_obs_plus_prev_action_reward_carries_action_and_reward() -> None:
    env = ObsPlusPrevActRewWrapper(CounterEnv(spaces.Discrete(3)))
    assert env.observation_space == spaces.Dict(
        {
            "obs": CounterEnv.box,
            "prev_action": spaces.Discrete(3),
            "prev_reward_extrinsic": spaces.Box(-np.inf, np.inf, (1,), np.float32),
        }
    )
    obs, _ = env.reset(seed=0)
    assert obs["prev_action"] == 0
    np.testing.assert_array_equal(obs["prev_reward_extrinsic"], np.zeros(1, np.float32))
    for t, a in enumerate((2, 0, 1), start=1):
        obs, reward, *_ = env.step(a)
        assert reward == 10.0 * t
        assert obs["prev_action"] == a and obs["obs"][0] == t
        np.testing.assert_array_equal(obs["prev_reward_extrinsic"], [10.0 * t])
        assert obs["prev_reward_extrinsic"].dtype == np.float32
    obs, _ = env.reset()
    assert obs["prev_action"] == 0 and obs["prev_reward_extrinsic"][0] == 0.0


def test_obs_plus_prev_action_reward_vector_reward() -> None:
    rew_space = spaces.Box(0.0, 100.0, (3,), np.float64)
    env = ObsPlusPrevActRewWrapper(CounterEnv(spaces.Box(-1.0, 1.0, (2,), np.float32), rew_space))
    declared = env.observation_space
    assert isinstance(declared, spaces.Dict)
    assert declared["prev_reward_extrinsic"] == spaces.Box(0.0, 100.0, (3,), np.float32)
    env.reset(seed=0)
    env.step(np.zeros(2, np.float32))
    obs, *_ = env.step(np.array([0.5, -0.5], np.float32))
    np.testing.assert_array_equal(obs["prev_reward_extrinsic"], [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(obs["prev_action"], [0.5, -0.5])
    assert env.observation_space.contains(obs)
    obs, _ = env.reset()
    np.testing.assert_array_equal(obs["prev_reward_extrinsic"], np.zeros(3, np.float32))


def test_obs_plus_prev_action_reward_on_catalogue_vector_reward() -> None:
    env = ObsPlusPrevActRewWrapper(make_catalogue_env("vector_reward"))
    env.reset(seed=1)
    seen = []
    for a in (1, 0, 1):
        obs, reward, *_ = env.step(a)
        assert obs["prev_action"] == a
        np.testing.assert_array_equal(obs["prev_reward_extrinsic"], reward)
        seen.append(obs["prev_reward_extrinsic"])
    assert not np.array_equal(seen[0], seen[1])  # each step records a fresh array, not a shared buffer


def test_obs_plus_prev_action_reward_shapes_and_errors() -> None:
    assert update_shape((4,), 2, (3,), ["obs_plus_prev_action_reward"]) == (
        {"obs": (4,), "prev_action": 2, "prev_reward_extrinsic": (3,)},
        2,
        (3,),
    )
    with pytest.raises(
        ShapeRuleError,
        match=r"obs_plus_prev_action_reward needs a Box reward of shape \(1,\) or \(k,\); got reward shape 4",
    ):
        update_shape((4,), 2, 4, ["obs_plus_prev_action_reward"])
    with pytest.raises(
        ShapeRuleError, match=r"obs_plus_prev_action_reward needs a Box, Discrete.*got Tuple\(Discrete\(2\), Box"
    ):
        update_space(
            spaces.Box(-1, 1, (4,)),
            spaces.Tuple((spaces.Discrete(2), spaces.Box(-1, 1, (3,)))),
            None,
            ["obs_plus_prev_action_reward"],
        )
