"""Reward wrappers: clipping, delaying, scalarizing vector rewards, and showing the reward to the agent.

Rewards keep ding's convention: a Python float when the reward shape is ``(1,)``, a float32 array
of the reward shape otherwise. Wrappers that add rewards up (here ``delay_reward``; ``max_and_skip``,
``frame_skip`` and ``action_repeat`` in :mod:`.atari`) sum in float32 with :class:`RewardSum`, and
:func:`summed_reward_box` bounds those sums by the same float32 additions, so the bounds hold exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from ding.envs.env_wrappers.arguments import NonNegativeInt
from ding.envs.env_wrappers.base import DingRewardWrapper, DingWrapper, SpaceTriple, episode_began, register_wrapper
from ding.envs.env_wrappers.rule import SpaceKindError, describe_space
from ding.envs.values.spaces import reward_space_of
from ding.errors import ConfigError, ShapeRuleError

RewardValue = float | npt.NDArray[np.float32]
_SCALAR_SHAPE = (1,)


def reward_box(wrapper: str, rew_space: spaces.Space[Any]) -> spaces.Box:
    """``rew_space`` if it is a Box of shape ``(1,)`` or ``(k,)``; else an error naming the wrapper.

    Another kind of space is a :class:`~ding.envs.env_wrappers.rule.SpaceKindError`, another shape a ShapeRuleError.
    """
    if not isinstance(rew_space, spaces.Box) or len(rew_space.shape) != 1:
        error = ShapeRuleError if isinstance(rew_space, spaces.Box) else SpaceKindError
        raise error(f"{wrapper} needs a Box reward of shape (1,) or (k,); got {describe_space(rew_space, 'reward')}")
    return rew_space


def as_reward(value: npt.NDArray[Any], scalar: bool) -> RewardValue:
    """Hand a reward back in ding's convention: a float for ``(1,)`` rewards, else a fresh float32 array."""
    return float(value.item()) if scalar else value.astype(np.float32)


class RewardSum:
    """A running float32 sum of rewards of one shape, returned in ding's convention."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self._total = np.zeros(shape, dtype=np.float32)
        self._scalar = tuple(shape) == _SCALAR_SHAPE

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._total.shape)

    def add(self, reward: Any) -> None:
        with np.errstate(over="ignore"):  # a float32 sum past float32's range is inf, inside unbounded spaces
            self._total += np.asarray(reward, dtype=np.float32).reshape(self._total.shape)

    def take(self) -> RewardValue:
        """The sum so far; the sum restarts at 0."""
        out = as_reward(self._total, self._scalar)
        self._total.fill(0.0)
        return out

    def clear(self) -> None:
        self._total.fill(0.0)


def summed_reward_box(box: spaces.Box, times: int, *, with_zero: bool = False) -> spaces.Box:
    """The float32 Box of :class:`RewardSum` sums of 1 to ``times`` rewards from ``box`` (and 0 ``with_zero``).

    Bounds are added up in float32 exactly as the sums are, so every sum lies inside them.

    >>> summed_reward_box(spaces.Box(0.5, 1.0, (1,), np.float32), 3)
    Box(0.5, 3.0, (1,), float32)
    """
    low, high = box.low.astype(np.float32), box.high.astype(np.float32)
    lo, hi, sum_lo, sum_hi = low.copy(), high.copy(), low.copy(), high.copy()
    with np.errstate(over="ignore"):  # bounds past float32's range are infinite, as the sums are
        for _ in range(times - 1):
            sum_lo += low
            sum_hi += high
            np.minimum(lo, sum_lo, out=lo)
            np.maximum(hi, sum_hi, out=hi)
    if with_zero:
        np.minimum(lo, np.float32(0.0), out=lo)
        np.maximum(hi, np.float32(0.0), out=hi)
    return spaces.Box(lo, hi, box.shape, np.float32)


# ---------------------------------------------------------------------------------------------
# clip_reward
# ---------------------------------------------------------------------------------------------


@register_wrapper("clip_reward")
class ClipRewardWrapper(DingRewardWrapper):
    """Bin rewards to {-1, 0, +1} by their sign (the Atari default), or clip them into ``[low, high]``.

    Works elementwise on vector rewards. The reward space keeps its shape; its bounds become
    [-1, 1] with ``sign=True`` and [low, high] otherwise.

    Example:
        >>> rew = spaces.Box(-np.inf, np.inf, (1,), np.float32)
        >>> ClipRewardWrapper.new_space(spaces.Box(0, 1, (2,)), spaces.Discrete(2), rew, 0.0, 0.5, False)[2]
        Box(0.0, 0.5, (1,), float32)
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        low: float = -1.0,
        high: float = 1.0,
        sign: bool = True,
    ) -> SpaceTriple:
        if not sign and not low < high:
            raise ConfigError(f"clip_reward needs low < high; got low={low!r}, high={high!r}")
        largest = float(np.finfo(np.float32).max)
        if not sign and any(np.isfinite(v) and abs(v) > largest for v in (low, high)):
            raise ConfigError(f"clip_reward needs low and high in float32's range or infinite; got {low!r}, {high!r}")
        box = reward_box("clip_reward", rew_space)
        lo, hi = (-1.0, 1.0) if sign else (low, high)
        return obs_space, act_space, spaces.Box(lo, hi, box.shape, np.float32)

    def _setup(self) -> None:
        self._shape = self.reward_space.shape
        self._scalar = self._shape == _SCALAR_SHAPE

    def reward(self, reward: Any) -> RewardValue:
        value = np.asarray(reward, dtype=np.float64).reshape(self._shape)
        value = np.sign(value) if self.sign else np.clip(value, self.low, self.high)
        return as_reward(value, self._scalar)


# ---------------------------------------------------------------------------------------------
# delay_reward
# ---------------------------------------------------------------------------------------------


@register_wrapper("delay_reward")
class DelayRewardWrapper(DingWrapper):
    """Hold rewards back and release their sum every ``delay_reward_step`` steps and at episode end; 0 in between.

    The count restarts at every reset. The reward shape is kept; with a delay of more than one step
    the bounds widen to cover a sum of that many rewards and the zeros in between. A delay of 0
    (DI-engine's default) releases every reward at once, as 1 does: rewards pass through unchanged.

    Example:
        >>> rew = spaces.Box(-1.0, 2.0, (1,), np.float32)
        >>> DelayRewardWrapper.new_space(spaces.Box(0, 1, (2,)), spaces.Discrete(2), rew, delay_reward_step=3)[2]
        Box(-3.0, 6.0, (1,), float32)
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        delay_reward_step: NonNegativeInt = 1,
    ) -> SpaceTriple:
        box = reward_box("delay_reward", rew_space)
        if delay_reward_step <= 1:
            return obs_space, act_space, rew_space
        return obs_space, act_space, summed_reward_box(box, delay_reward_step, with_zero=True)

    def _setup(self) -> None:
        shape = self.reward_space.shape
        self._sum = RewardSum(shape)  # type: ignore[arg-type]
        self._scalar = shape == _SCALAR_SHAPE
        self._held = 0

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._sum.clear()
        self._held = 0
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if self.delay_reward_step <= 1:
            return obs, reward, terminated, truncated, info
        self._sum.add(reward)
        self._held += 1
        ended = terminated or truncated or episode_began(info) is not None  # an episode ended inside the step too
        if ended or self._held >= self.delay_reward_step:
            self._held = 0
            return obs, self._sum.take(), terminated, truncated, info
        held_back = 0.0 if self._scalar else np.zeros(self._sum.shape, dtype=np.float32)
        return obs, held_back, terminated, truncated, info


# ---------------------------------------------------------------------------------------------
# scalar_reward
# ---------------------------------------------------------------------------------------------


def _scalar_weights(box: spaces.Box, weights: Sequence[float] | None) -> npt.NDArray[np.float64]:
    """The weight vector of ``scalar_reward`` for a vector reward ``box``, checked against it."""
    shape = box.shape
    if len(shape) != 1 or shape[0] < 2:
        raise ShapeRuleError(
            f"scalar_reward needs a vector reward of shape (k,) with k >= 2; got {describe_space(box, 'reward')}"
        )
    if weights is None:
        default = np.zeros(shape[0], dtype=np.float64)
        default[0] = 1.0
        return default
    w = np.asarray(weights, dtype=np.float64)
    if not np.all(np.isfinite(w)):
        raise ConfigError(f"scalar_reward weights must be finite numbers; got {weights!r}")
    if w.shape[0] != shape[0]:
        raise ShapeRuleError(
            f"scalar_reward weights have {w.shape[0]} entries but the reward has shape {shape}; "
            "give one weight per entry"
        )
    return w


@register_wrapper("scalar_reward")
class ScalarRewardWrapper(DingRewardWrapper):
    """Turn a vector reward of shape (k,) into a scalar by its dot product with ``weights``: (k,) → (1,).

    ``weights=None`` follows ALF: the first entry counts fully and the others not at all
    (``[1, 0, ..., 0]``), the convention where entry 0 is the task reward and the rest are
    auxiliary objectives or costs. The scalar's bounds follow from the vector's bounds; the reward
    is summed as its bounds are (zero weights left out), so it lies inside them exactly.

    Example:
        >>> rew = spaces.Box(-1.0, 1.0, (3,), np.float32)
        >>> ScalarRewardWrapper.new_space(spaces.Box(0, 1, (2,)), spaces.Discrete(2), rew, [1.0, 2.0, -1.0])[2]
        Box(-4.0, 4.0, (1,), float32)
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        weights: Sequence[float] | None = None,
    ) -> SpaceTriple:
        box = reward_box("scalar_reward", rew_space)
        w = _scalar_weights(box, weights)
        used = w != 0.0  # zero weights are left out so that 0 * inf cannot turn a bound into nan
        w, low, high = w[used], box.low[used].astype(np.float64), box.high[used].astype(np.float64)
        lo = float(np.sum(np.where(w > 0, w * low, w * high)))
        hi = float(np.sum(np.where(w > 0, w * high, w * low)))
        return obs_space, act_space, spaces.Box(lo, hi, _SCALAR_SHAPE, np.float32)

    def _setup(self) -> None:
        w = _scalar_weights(reward_box("scalar_reward", reward_space_of(self.env)), self.weights)
        self._used = w != 0.0
        self._weights = w[self._used]

    def reward(self, reward: Any) -> float:
        # float32 first, as the reward space holds it: then each term, and the sum, stays within the bounds
        values = np.asarray(reward, dtype=np.float32).astype(np.float64).reshape(self._used.shape)[self._used]
        return float(np.sum(self._weights * values))


# ---------------------------------------------------------------------------------------------
# reward_in_obs
# ---------------------------------------------------------------------------------------------


def with_zero_box(box: spaces.Box) -> spaces.Box:
    """A float32 Box of ``box``'s shape holding float32 rewards from ``box`` and the 0 shown after a reset."""
    low = np.minimum(box.low.astype(np.float32), np.float32(0.0))
    high = np.maximum(box.high.astype(np.float32), np.float32(0.0))
    return spaces.Box(low, high, box.shape, np.float32)


@register_wrapper("reward_in_obs")
class RewardInObsWrapper(DingWrapper):
    """Show the agent the reward it just received: obs → ``{"obs": obs, "reward": last reward}``.

    The ``"reward"`` entry is a float32 array of the reward shape, zeros after reset (and with the first
    observation of an episode begun inside ``step``); its bounds
    are the reward's bounds widened to include 0.

    Example:
        >>> rew = spaces.Box(-1.0, 1.0, (1,), np.float32)
        >>> RewardInObsWrapper.new_space(spaces.Box(0, 1, (2,)), spaces.Discrete(2), rew)[0]
        Dict('obs': Box(0.0, 1.0, (2,), float32), 'reward': Box(-1.0, 1.0, (1,), float32))
        >>> RewardInObsWrapper.new_shape((2,), 2, (1,))[0]
        {'obs': (2,), 'reward': (1,)}
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any]
    ) -> SpaceTriple:
        reward_entry = with_zero_box(reward_box("reward_in_obs", rew_space))
        return spaces.Dict({"obs": obs_space, "reward": reward_entry}), act_space, rew_space

    def _setup(self) -> None:
        self._rew_shape: tuple[int, ...] = self.reward_space.shape or ()

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return {"obs": obs, "reward": np.zeros(self._rew_shape, dtype=np.float32)}, info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if episode_began(info) is not None:  # a new episode's first observation: no reward yet, as after reset
            last = np.zeros(self._rew_shape, dtype=np.float32)
        else:
            last = np.array(reward, dtype=np.float32).reshape(self._rew_shape)
        return {"obs": obs, "reward": last}, reward, terminated, truncated, info
