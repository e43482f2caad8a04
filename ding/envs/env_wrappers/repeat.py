"""Wrappers that repeat each action: ``frame_skip`` and ``action_repeat`` (``max_and_skip`` in :mod:`.atari` too).

They sum rewards in the reward's own shape with :class:`~ding.envs.env_wrappers.reward.RewardSum` (float32), a
float for ``(1,)`` rewards and a float32 array for vector rewards; the reward space keeps its shape and its bounds
widen to cover a sum of up to as many rewards as steps are taken, added up as the rewards are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
from gymnasium import spaces

from ding.envs.env_wrappers.arguments import PositiveInt
from ding.envs.env_wrappers.base import DingWrapper, SpaceTriple, episode_began, register_wrapper
from ding.envs.env_wrappers.reward import RewardSum, reward_box, summed_reward_box

StepResult = tuple[Any, Any, bool, bool, dict[str, Any]]


def summed_rewards(rew_space: spaces.Space[Any], times: int, who: str) -> spaces.Box:
    """The reward space of a float32 sum of 1 to ``times`` rewards (:func:`summed_reward_box`)."""
    return summed_reward_box(reward_box(who, rew_space), times)


def repeat_action(
    env: gym.Env[Any, Any],
    action: Any,
    times: int,
    total: RewardSum | None,
    keep: Callable[[int, Any], None] | None = None,
) -> tuple[StepResult, int]:
    """Step ``env`` with ``action`` up to ``times`` times, stopping when the episode ends or a new one begins.

    Returns the last step, its reward replaced by the sum of every reward when ``total`` is given,
    and the number of steps taken. ``keep(i, obs)`` sees every observation on the way. A step inside which an
    episode began (:func:`~ding.envs.env_wrappers.base.episode_began`) is the last: its observation is the new
    episode's first, and its info says so to the wrappers above.
    """
    steps = 0
    obs: Any = None
    reward: Any = 0.0
    terminated = truncated = False
    info: dict[str, Any] = {}
    while steps < times:
        obs, reward, terminated, truncated, info = env.step(action)
        if keep is not None:
            keep(steps, obs)
        steps += 1
        if total is not None:
            total.add(reward)
        if terminated or truncated or episode_began(info) is not None:
            break
    return (obs, reward if total is None else total.take(), terminated, truncated, info), steps


@register_wrapper("frame_skip")
class FrameSkipWrapper(DingWrapper):
    """Repeat each action ``skip`` times and return the last observation; shapes unchanged.

    The reward is the sum over the repeated steps (element-wise for vector rewards) when
    ``cumulative_reward``, else the last step's reward. Stops early when the episode ends.

    Example:
        >>> FrameSkipWrapper.new_shape((3,), 2, (3,), skip=2, cumulative_reward=False)
        ((3,), 2, (3,))
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        skip: PositiveInt = 4,
        cumulative_reward: bool = True,
    ) -> SpaceTriple:
        if not cumulative_reward:
            return obs_space, act_space, rew_space
        return obs_space, act_space, summed_rewards(rew_space, skip, "frame_skip")

    def _setup(self) -> None:
        self._total = RewardSum(self.reward_space.shape) if self.cumulative_reward else None  # type: ignore[arg-type]

    def step(self, action: Any) -> StepResult:
        result, _ = repeat_action(self.env, action, self.skip, self._total)
        return result


@register_wrapper("action_repeat")
class ActionRepeatWrapper(DingWrapper):
    """Repeat each action ``action_repeat`` times, summing the rewards; shapes unchanged.

    Returns the last observation; stops early when the episode ends.

    Example:
        >>> ActionRepeatWrapper.new_shape((4,), 2, (1,), action_repeat=3)
        ((4,), 2, (1,))
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        action_repeat: PositiveInt = 1,
    ) -> SpaceTriple:
        return obs_space, act_space, summed_rewards(rew_space, action_repeat, "action_repeat")

    def _setup(self) -> None:
        self._total = RewardSum(self.reward_space.shape)  # type: ignore[arg-type]

    def step(self, action: Any) -> StepResult:
        result, _ = repeat_action(self.env, action, self.action_repeat, self._total)
        return result
