"""prl's FrameSkipEnvironment and TimeShiftEnvironment behave as ding's ``frame_skip`` and ``time_shift``.

The reference loops below restate what prl's two environments do to a gymnasium env (step by step, in plain
code); each test runs one of them and the ding wrapper it maps to on two identically seeded real envs with the
same actions, and compares every observation, reward and end flag.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from ding.envs.env_wrappers import FrameSkipWrapper, TimeShiftWrapper, TransformersWrapper

Step = tuple[Any, float, bool, bool]


def prl_frame_skip(env: gym.Env[Any, Any], action: Any, n_skip_frames: int, cumulative_reward: bool) -> Step:
    """One step of prl's FrameSkipEnvironment: the action n_skip_frames + 1 times, stopping at an episode's end;
    the last observation, and the summed or the last reward."""
    rewards = []
    for _ in range(n_skip_frames + 1):
        obs, reward, terminated, truncated, _ = env.step(action)
        rewards.append(float(reward))
        if terminated or truncated:
            break
    return obs, sum(rewards) if cumulative_reward else rewards[-1], terminated, truncated


class PrlTimeShift:
    """prl's TimeShiftEnvironment: the env runs the action given ``lag`` steps earlier; a reset fills the queue
    with ``lag`` first actions (prl samples them from the action space; here they are given)."""

    def __init__(self, env: gym.Env[Any, Any], lag: int, first_actions: list[Any]) -> None:
        self.env, self.lag, self.first_actions = env, lag, first_actions
        self.queue: deque[Any] = deque()

    def reset(self, seed: int) -> Any:
        self.queue = deque(self.first_actions)
        return self.env.reset(seed=seed)[0]

    def step(self, action: Any) -> Step:
        self.queue.append(action)
        obs, reward, terminated, truncated, _ = self.env.step(self.queue.popleft())
        return obs, float(reward), terminated, truncated


def assert_same(prl: Step, ding: tuple[Any, ...]) -> None:
    np.testing.assert_array_equal(prl[0], ding[0])
    np.testing.assert_allclose(prl[1], float(ding[1]), rtol=1e-6)  # ding sums rewards in float32
    assert prl[2:] == tuple(ding[2:4])


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
@pytest.mark.parametrize(("n_skip_frames", "cumulative_reward"), [(0, False), (2, False), (3, True)])
def test_frame_skip_environment_is_frame_skip_with_one_more_step(
    env_id: str, n_skip_frames: int, cumulative_reward: bool
) -> None:
    reference = gym.make(env_id)
    ding = FrameSkipWrapper(gym.make(env_id), skip=n_skip_frames + 1, cumulative_reward=cumulative_reward)
    reference.action_space.seed(0)
    ends = 0
    for episode in range(3):
        np.testing.assert_array_equal(reference.reset(seed=episode)[0], ding.reset(seed=episode)[0])
        for _ in range(300):
            action = reference.action_space.sample()
            prl = prl_frame_skip(reference, action, n_skip_frames, cumulative_reward)
            assert_same(prl, ding.step(action))
            if prl[2] or prl[3]:
                ends += 1
                break
    assert ends == 3  # every episode ended, some of them inside a repeated action


@pytest.mark.parametrize("lag", [1, 3])
def test_time_shift_environment_is_time_shift_with_its_first_actions_given(lag: int) -> None:
    reference = PrlTimeShift(gym.make("CartPole-v1"), lag, first_actions=[1] * lag)
    ding = TimeShiftWrapper(gym.make("CartPole-v1"), shift=lag, default_action=1)
    rng = np.random.default_rng(0)
    for episode in range(3):
        np.testing.assert_array_equal(reference.reset(seed=episode), ding.reset(seed=episode)[0])
        done = False
        while not done:
            action = int(rng.integers(2))
            prl = reference.step(action)
            assert_same(prl, ding.step(action))
            done = prl[2] or prl[3]


def test_with_transformers_above_frame_skip_the_history_has_one_row_per_agent_step() -> None:
    env = TransformersWrapper(FrameSkipWrapper(gym.make("CartPole-v1"), skip=3, cumulative_reward=True))
    env.reset(seed=0)
    for action in (0, 1, 1, 0):
        env.step(action)
    assert len(env.history) == 4 and env.history.rewards[:, 0].tolist() == [3.0, 3.0, 3.0, 3.0]
