"""Behaviour of the reward wrappers on scripted rewards."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.envs.classic_control import CartPoleEnv

from ding.envs.env_wrappers import apply_wrappers, update_shape, update_space
from ding.envs.env_wrappers.reward import (
    ClipRewardWrapper,
    DelayRewardWrapper,
    RewardInObsWrapper,
    ScalarRewardWrapper,
)
from ding.envs.values.spaces import reward_space_of
from ding.errors import ConfigError, ShapeRuleError
from tests.envs.env_wrappers.catalogue import make_catalogue_env

SCALAR = spaces.Box(-np.inf, np.inf, (1,), np.float32)


class ScriptedEnv(gym.Env[np.ndarray, Any]):
    """Gives ``rewards`` in order (one per step, across episodes); the observation is the step counter.

    Episodes end after ``episode_len`` steps.
    """

    def __init__(self, rewards: list[Any], episode_len: int = 100, reward_space: spaces.Box = SCALAR) -> None:
        self.action_space = spaces.Discrete(2)
        self.rewards = rewards
        self.episode_len = episode_len
        self.reward_space = reward_space
        self.observation_space = spaces.Box(0, 10_000, (1,), np.int64)
        self.index = 0
        self.t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.t = 0
        return np.array([self.t]), {}

    def step(self, action: int) -> tuple[np.ndarray, Any, bool, bool, dict]:
        reward = self.rewards[self.index]
        self.index += 1
        self.t += 1
        return np.array([self.t]), reward, self.t >= self.episode_len, False, {}


def step_rewards(env: gym.Env[Any, Any], steps: int) -> list[Any]:
    """Rewards of ``steps`` steps, resetting at episode ends."""
    env.reset(seed=0)
    rewards = []
    for _ in range(steps):
        _, reward, terminated, truncated, _ = env.step(0)
        rewards.append(reward)
        if terminated or truncated:
            env.reset()
    return rewards


VECTOR = spaces.Box(-5.0, 5.0, (2,), np.float32)


# --- clip_reward -----------------------------------------------------------------------------------


def test_clip_reward_sign_bins_rewards() -> None:
    env = ClipRewardWrapper(ScriptedEnv([-3.5, -0.2, 0.0, 0.7, 12.0]))
    assert reward_space_of(env) == spaces.Box(-1.0, 1.0, (1,), np.float32)
    rewards = step_rewards(env, 5)
    assert rewards == [-1.0, -1.0, 0.0, 1.0, 1.0]
    assert all(type(r) is float for r in rewards)


def test_clip_reward_range_mode_clips() -> None:
    env = ClipRewardWrapper(ScriptedEnv([-3.5, -0.2, 0.0, 0.7, 12.0]), low=-0.5, high=2.0, sign=False)
    assert reward_space_of(env) == spaces.Box(-0.5, 2.0, (1,), np.float32)
    assert step_rewards(env, 5) == [-0.5, -0.2, 0.0, 0.7, 2.0]


def test_clip_reward_vector_rewards_elementwise() -> None:
    rewards = [np.array([-3.0, 0.25], np.float32), np.array([0.0, -0.1], np.float32)]
    env = ClipRewardWrapper(ScriptedEnv(rewards, reward_space=VECTOR))
    got = step_rewards(env, 2)
    assert all(r.dtype == np.float32 and r.shape == (2,) for r in got)
    np.testing.assert_array_equal(got, [[-1.0, 1.0], [0.0, -1.0]])
    clipped = ClipRewardWrapper(ScriptedEnv(rewards, reward_space=VECTOR), low=-1.0, high=0.2, sign=False)
    assert reward_space_of(clipped) == spaces.Box(-1.0, 0.2, (2,), np.float32)
    np.testing.assert_array_equal(step_rewards(clipped, 2), np.array([[-1.0, 0.2], [0.0, -0.1]], np.float32))


def test_clip_reward_errors() -> None:
    with pytest.raises(ConfigError, match=r"clip_reward needs low < high; got low=1\.0, high=-1\.0"):
        ClipRewardWrapper(CartPoleEnv(), low=1.0, high=-1.0, sign=False)
    with pytest.raises(
        ShapeRuleError, match=r"clip_reward needs a Box reward of shape \(1,\) or \(k,\); got reward shape 4"
    ):
        update_shape((4,), 2, 4, ["clip_reward"])
    with pytest.raises(TypeError, match=r"clip_reward needs a Box reward of shape \(1,\) or \(k,\); got Discrete\(2\)"):
        ClipRewardWrapper.new_space(spaces.Box(0, 1, (2,)), spaces.Discrete(2), spaces.Discrete(2))


# --- delay_reward ----------------------------------------------------------------------------------


def test_delay_reward_releases_sums_every_k_steps_and_at_episode_end() -> None:
    env = DelayRewardWrapper(ScriptedEnv([float(i) for i in range(1, 30)], episode_len=8), delay_reward_step=3)
    got = step_rewards(env, 16)
    # Episode 1: rewards 1..8; released after steps 3 and 6 and at the end (7 + 8).
    assert got[:8] == [0.0, 0.0, 6.0, 0.0, 0.0, 15.0, 0.0, 15.0]
    # Episode 2 counts afresh: rewards 9..16.
    assert got[8:] == [0.0, 0.0, 30.0, 0.0, 0.0, 39.0, 0.0, 31.0]
    assert sum(got) == sum(range(1, 17))


def test_delay_reward_reset_restarts_the_count() -> None:
    env = DelayRewardWrapper(ScriptedEnv([1.0] * 20), delay_reward_step=3)
    env.reset(seed=0)
    env.step(0)
    env.step(0)
    env.reset()
    got = [env.step(0)[1] for _ in range(3)]
    assert got == [0.0, 0.0, 3.0]


def test_delay_reward_vector_rewards_and_bounds() -> None:
    rewards = [np.array([1.0, -2.0], np.float32)] * 6
    env = DelayRewardWrapper(ScriptedEnv(rewards, episode_len=5, reward_space=VECTOR), delay_reward_step=2)
    assert reward_space_of(env) == spaces.Box(-10.0, 10.0, (2,), np.float32)
    got = step_rewards(env, 5)
    assert all(r.dtype == np.float32 and r.shape == (2,) for r in got)
    np.testing.assert_array_equal(got, [[0, 0], [2, -4], [0, 0], [2, -4], [1, -2]])
    same = DelayRewardWrapper(ScriptedEnv(rewards, reward_space=VECTOR))
    assert reward_space_of(same) is VECTOR  # a delay of one step changes nothing
    positive = spaces.Box(0.5, 1.0, (1,), np.float32)
    out = update_space(
        spaces.Box(0, 1, (1,)), spaces.Discrete(2), positive, [("delay_reward", {"delay_reward_step": 4})]
    )
    assert out.reward == spaces.Box(0.0, 4.0, (1,), np.float32)  # zeros in between are inside the bounds


@pytest.mark.parametrize("bad", [-2, 2.5, True])
def test_delay_reward_rejects_bad_steps(bad: Any) -> None:
    with pytest.raises(ConfigError, match=rf"delay_reward: delay_reward_step must be an int >= 0; got {bad}"):
        DelayRewardWrapper(CartPoleEnv(), delay_reward_step=bad)


def test_delay_reward_step_zero_releases_every_reward_as_di_engine_default() -> None:
    env = DelayRewardWrapper(CartPoleEnv())
    zero = DelayRewardWrapper(CartPoleEnv(), 0)
    assert reward_space_of(zero) == reward_space_of(env)
    zero.reset(seed=0)
    rewards = [zero.step(0)[1] for _ in range(3)]
    assert rewards == [1.0, 1.0, 1.0]


# --- scalar_reward ---------------------------------------------------------------------------------


def test_scalar_reward_dot_product() -> None:
    rewards = [np.array([1.0, 2.0, -3.0], np.float32), np.array([0.5, 0.0, 4.0], np.float32)]
    space = spaces.Box(-2.0, 2.0, (3,), np.float32)
    env = ScalarRewardWrapper(ScriptedEnv(rewards, reward_space=space), weights=[0.5, -1.0, 2.0])
    assert reward_space_of(env) == spaces.Box(-7.0, 7.0, (1,), np.float32)
    got = step_rewards(env, 2)
    assert got == [0.5 - 2.0 - 6.0, 0.25 + 8.0]
    assert all(type(r) is float for r in got)


def test_scalar_reward_default_keeps_the_first_entry() -> None:
    env = apply_wrappers(make_catalogue_env("vector_reward"), ["scalar_reward"])
    assert reward_space_of(env) == spaces.Box(-2.0, 2.0, (1,), np.float32)
    inner = make_catalogue_env("vector_reward")
    expected = [float(r[0]) for r in step_rewards(inner, 10)]
    assert step_rewards(env, 10) == expected


def test_scalar_reward_bounds_skip_zero_weights_on_infinite_bounds() -> None:
    rew = spaces.Box(np.array([-1.0, -np.inf], np.float32), np.array([1.0, np.inf], np.float32), dtype=np.float32)
    _, _, out = ScalarRewardWrapper.new_space(spaces.Box(0, 1, (2,)), spaces.Discrete(2), rew, [3.0, 0.0])
    assert out == spaces.Box(-3.0, 3.0, (1,), np.float32)
    _, _, out = ScalarRewardWrapper.new_space(spaces.Box(0, 1, (2,)), spaces.Discrete(2), rew, [1.0, -1.0])
    assert out == spaces.Box(-np.inf, np.inf, (1,), np.float32)


def test_scalar_reward_errors() -> None:
    vector_env = make_catalogue_env("vector_reward")
    with pytest.raises(ShapeRuleError, match=r"scalar_reward weights have 2 entries but the reward has shape \(3,\)"):
        ScalarRewardWrapper(vector_env, weights=[1.0, 2.0])
    with pytest.raises(ShapeRuleError, match=r"step 0 scalar_reward.*weights have 4 entries but .* shape \(3,\)"):
        update_shape((4,), 2, (3,), [("scalar_reward", {"weights": [1, 1, 1, 1]})])
    with pytest.raises(
        ShapeRuleError, match=r"scalar_reward needs a vector reward of shape \(k,\) with k >= 2; got .*\(1,\)"
    ):
        ScalarRewardWrapper(CartPoleEnv())
    with pytest.raises(ShapeRuleError, match=r"step 0 scalar_reward\(weights=None\).*needs a vector reward"):
        update_shape((4,), 2, (1,), ["scalar_reward"])
    with pytest.raises(
        ConfigError, match=r"scalar_reward: weights must be a list of numbers or None; got \['a', 'b', 'c'\]"
    ):
        ScalarRewardWrapper(vector_env, weights=["a", "b", "c"])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match=r"scalar_reward: weights must be a list of numbers or None; got \[\[1.0"):
        ScalarRewardWrapper(vector_env, weights=[[1.0, 2.0, 3.0]])  # type: ignore[list-item]


def test_scalar_reward_shape_rule() -> None:
    assert update_shape((4,), 2, (3,), ["scalar_reward"]) == ((4,), 2, (1,))


# --- reward_in_obs ---------------------------------------------------------------------------------


def test_reward_in_obs_carries_the_last_reward() -> None:
    env = RewardInObsWrapper(ScriptedEnv([0.5, -1.5, 2.0, 7.0], episode_len=2))
    obs, _ = env.reset(seed=0)
    assert obs["reward"].dtype == np.float32 and obs["reward"].shape == (1,)
    np.testing.assert_array_equal(obs["reward"], [0.0])
    np.testing.assert_array_equal(obs["obs"], [0])
    for t, expected in enumerate([0.5, -1.5], start=1):
        obs, reward, *_ = env.step(0)
        assert reward == expected  # the reward itself passes through
        np.testing.assert_array_equal(obs["reward"], [expected])
        np.testing.assert_array_equal(obs["obs"], [t])
        assert env.observation_space.contains(obs)
    obs, _ = env.reset()
    np.testing.assert_array_equal(obs["reward"], [0.0])  # zeros again after reset
    np.testing.assert_array_equal(env.step(0)[0]["reward"], [2.0])


def test_reward_in_obs_vector_reward_and_space() -> None:
    rewards = [np.array([1.0, -2.0], np.float32)]
    env = RewardInObsWrapper(ScriptedEnv(rewards, reward_space=VECTOR))
    assert env.observation_space == spaces.Dict({"obs": spaces.Box(0, 10_000, (1,), np.int64), "reward": VECTOR})
    env.reset(seed=0)
    obs, reward, *_ = env.step(0)
    np.testing.assert_array_equal(obs["reward"], [1.0, -2.0])
    assert obs["reward"] is not reward  # a copy: the env may reuse its reward array
    positive = spaces.Box(1.0, 3.0, (1,), np.float64)
    out = update_space(spaces.Discrete(3), spaces.Discrete(2), positive, ["reward_in_obs"])
    assert isinstance(out.observation, spaces.Dict)
    assert out.observation["reward"] == spaces.Box(0.0, 3.0, (1,), np.float32)  # widened to hold the zeros of reset


def test_reward_in_obs_shape_rule_and_errors() -> None:
    assert update_shape((84, 84), 6, (1,), ["reward_in_obs"]) == ({"obs": (84, 84), "reward": (1,)}, 6, (1,))
    with pytest.raises(ShapeRuleError, match=r"reward_in_obs needs a Box reward of shape \(1,\) or \(k,\); got .* 5"):
        update_shape((4,), 2, 5, ["reward_in_obs"])
    with pytest.raises(
        TypeError, match=r"reward_in_obs needs a Box reward of shape \(1,\) or \(k,\); got Discrete\(2\)"
    ):
        RewardInObsWrapper.new_space(spaces.Box(0, 1, (2,)), spaces.Discrete(2), spaces.Discrete(2))


def test_reward_in_obs_over_clipped_rewards_shows_the_clipped_value() -> None:
    env = apply_wrappers(ScriptedEnv([5.0, -0.3]), ["clip_reward", "reward_in_obs"])
    assert isinstance(env.observation_space, spaces.Dict)
    assert env.observation_space["reward"] == spaces.Box(-1.0, 1.0, (1,), np.float32)
    env.reset(seed=0)
    assert [float(env.step(0)[0]["reward"][0]) for _ in range(2)] == [1.0, -1.0]
