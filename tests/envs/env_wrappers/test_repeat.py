"""Behaviour of the action-repeating wrappers: frame_skip and action_repeat."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.env_wrappers import update_shape, update_space
from ding.envs.env_wrappers.repeat import ActionRepeatWrapper, FrameSkipWrapper
from ding.errors import ConfigError, ShapeRuleError
from tests.envs.env_wrappers.scripted import ScriptedEnv


def test_frame_skip_returns_the_last_frame_and_the_reward_sum() -> None:
    inner = ScriptedEnv()
    env = FrameSkipWrapper(inner, skip=3)
    env.reset()
    obs, reward, terminated, _, _ = env.step(2)
    assert np.all(obs == 3) and reward == 1 + 2 + 3 and not terminated
    assert inner.actions == [2, 2, 2]


def test_frame_skip_last_reward_only() -> None:
    env = FrameSkipWrapper(ScriptedEnv(), skip=3, cumulative_reward=False)
    env.reset()
    env.step(0)
    _, reward, *_ = env.step(0)
    assert reward == 6.0
    space = update_space(
        spaces.Box(-1, 1, (4,)),
        spaces.Discrete(2),
        spaces.Box(-1.0, 1.0, (1,), np.float32),
        [("frame_skip", {"skip": 3, "cumulative_reward": False})],
    )
    assert space.reward == spaces.Box(-1.0, 1.0, (1,), np.float32)


def test_frame_skip_stops_early_and_sums_vector_rewards() -> None:
    inner = ScriptedEnv(episode_len=4, vector_reward=True)
    env = FrameSkipWrapper(inner, skip=3)
    env.reset()
    env.step(0)
    obs, reward, terminated, _, _ = env.step(0)
    assert terminated and np.all(obs == 4) and len(inner.actions) == 4
    assert reward.dtype == np.float32 and np.array_equal(reward, [4.0, -4.0, 0.5])


def test_frame_skip_reward_bounds() -> None:
    out = update_space(
        spaces.Box(-1, 1, (4,)),
        spaces.Discrete(2),
        spaces.Box(-1.0, 0.5, (1,), np.float32),
        [("frame_skip", {"skip": 4})],
    )
    assert out.reward == spaces.Box(-4.0, 2.0, (1,), np.float32)
    positive = update_space(
        spaces.Box(-1, 1, (4,)),
        spaces.Discrete(2),
        spaces.Box(1.0, 2.0, (1,), np.float32),
        [("frame_skip", {"skip": 4})],
    )
    assert positive.reward == spaces.Box(1.0, 8.0, (1,), np.float32), "one step may be all there is"


def test_frame_skip_errors() -> None:
    with pytest.raises(ConfigError, match=r"frame_skip: skip must be a positive int; got 0"):
        FrameSkipWrapper(ScriptedEnv(), skip=0)
    with pytest.raises(ShapeRuleError, match=r"frame_skip: skip must be a positive int; got True"):
        update_shape((4,), 2, (1,), [("frame_skip", {"skip": True})])


def test_action_repeat_default_is_one_step() -> None:
    inner = ScriptedEnv()
    env = ActionRepeatWrapper(inner)
    env.reset()
    obs, reward, *_ = env.step(1)
    assert inner.actions == [1] and reward == 1.0 and np.all(obs == 1)


def test_action_repeat_sums_and_stops_at_episode_end() -> None:
    inner = ScriptedEnv(truncate_len=5)
    env = ActionRepeatWrapper(inner, action_repeat=3)
    env.reset()
    obs, reward, _, truncated, _ = env.step(3)
    assert reward == 6 and np.all(obs == 3) and not truncated
    obs, reward, _, truncated, _ = env.step(3)
    assert truncated and reward == 4 + 5 and np.all(obs == 5) and inner.actions == [3] * 5


def test_action_repeat_errors() -> None:
    with pytest.raises(ConfigError, match=r"action_repeat: action_repeat must be a positive int; got -1"):
        ActionRepeatWrapper(ScriptedEnv(), action_repeat=-1)
    with pytest.raises(ShapeRuleError, match=r"step 0 action_repeat\(action_repeat=0\).*got 0"):
        update_shape((4,), 2, (1,), [("action_repeat", {"action_repeat": 0})])
