"""Reward wrappers: clipping, delaying, scalarizing vector rewards, and showing the reward to the agent.

Rewards keep ding's convention: a Python float when the reward shape is ``(1,)``, a float32 array
of the reward shape otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from ding.envs.env_wrappers.base import DingRewardWrapper, DingWrapper, ShapeTriple, SpaceTriple, register_wrapper
from ding.envs.spaces import Shape, is_flat_shape, reward_space_of, space_to_shape
from ding.errors import ConfigError, ShapeRuleError

RewardValue = float | npt.NDArray[np.float32]
_SCALAR_SHAPE = (1,)


def check_reward_shape(wrapper: str, rew_shape: Shape) -> tuple[int, ...]:
    """Return ``rew_shape`` as a tuple of ints, or raise if it is not a Box-style shape."""
    if not is_flat_shape(rew_shape):
        raise ShapeRuleError(f"{wrapper} needs a Box reward of shape (1,) or (k,); got reward shape {rew_shape!r}")
    return tuple(int(d) for d in rew_shape)  # type: ignore[union-attr]


def reward_box(wrapper: str, rew_space: spaces.Space[Any]) -> spaces.Box:
    """Return ``rew_space`` if it is a Box, or raise a TypeError naming the wrapper."""
    if not isinstance(rew_space, spaces.Box):
        raise TypeError(f"{wrapper} needs a Box reward space; got {rew_space}")
    return rew_space


def as_reward(value: npt.NDArray[np.float64], scalar: bool) -> RewardValue:
    """Hand a reward back in ding's convention: a float for ``(1,)`` rewards, else a fresh float32 array."""
    return float(value.item()) if scalar else value.astype(np.float32)


def _clip_rule(rew_shape: Shape, low: float, high: float, sign: bool) -> tuple[int, ...]:
    if not sign and not low < high:
        raise ConfigError(f"clip_reward needs low < high; got low={low!r}, high={high!r}")
    return check_reward_shape("clip_reward", rew_shape)


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

    def __init__(self, env: gym.Env[Any, Any], low: float = -1.0, high: float = 1.0, sign: bool = True) -> None:
        super().__init__(env)
        self._declare_spaces(low=low, high=high, sign=sign)
        self.low, self.high, self.sign = float(low), float(high), bool(sign)
        self._shape = reward_box("clip_reward", self.reward_space).shape
        self._scalar = self._shape == (1,)

    @staticmethod
    def new_shape(
        obs_shape: Shape, act_shape: Shape, rew_shape: Shape, low: float = -1.0, high: float = 1.0, sign: bool = True
    ) -> ShapeTriple:
        return obs_shape, act_shape, _clip_rule(rew_shape, low, high, sign)

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        low: float = -1.0,
        high: float = 1.0,
        sign: bool = True,
    ) -> SpaceTriple:
        shape = _clip_rule(reward_box("clip_reward", rew_space).shape, low, high, sign)
        lo, hi = (-1.0, 1.0) if sign else (low, high)
        return obs_space, act_space, spaces.Box(lo, hi, shape, np.float32)

    def reward(self, reward: Any) -> RewardValue:
        value = np.asarray(reward, dtype=np.float64).reshape(self._shape)
        value = np.sign(value) if self.sign else np.clip(value, self.low, self.high)
        return as_reward(value, self._scalar)


def _delay_rule(rew_shape: Shape, delay_reward_step: int) -> tuple[int, ...]:
    if isinstance(delay_reward_step, bool) or not isinstance(delay_reward_step, (int, np.integer)):
        raise ConfigError(f"delay_reward needs an integer delay_reward_step >= 0; got {delay_reward_step!r}")
    if delay_reward_step < 0:
        raise ConfigError(f"delay_reward needs delay_reward_step >= 0; got {delay_reward_step}")
    return check_reward_shape("delay_reward", rew_shape)


@register_wrapper("delay_reward")
class DelayRewardWrapper(DingWrapper):
    """Hold rewards back and release their sum every ``delay_reward_step`` steps and at episode end; 0 in between.

    The count restarts at every reset. The reward shape is kept; with a delay of more than one step
    the bounds widen to cover a sum of that many rewards and the zeros in between. A delay of 0
    (DI-engine's default) releases every reward at once, as 1 does.

    Example:
        >>> rew = spaces.Box(-1.0, 2.0, (1,), np.float32)
        >>> DelayRewardWrapper.new_space(spaces.Box(0, 1, (2,)), spaces.Discrete(2), rew, delay_reward_step=3)[2]
        Box(-3.0, 6.0, (1,), float32)
    """

    def __init__(self, env: gym.Env[Any, Any], delay_reward_step: int = 1) -> None:
        super().__init__(env)
        self._declare_spaces(delay_reward_step=delay_reward_step)
        self.delay_reward_step = int(delay_reward_step)
        shape = reward_box("delay_reward", self.reward_space).shape
        self._scalar = shape == (1,)
        self._sum: npt.NDArray[np.float64] = np.zeros(shape, dtype=np.float64)
        self._held = 0

    @staticmethod
    def new_shape(obs_shape: Shape, act_shape: Shape, rew_shape: Shape, delay_reward_step: int = 1) -> ShapeTriple:
        return obs_shape, act_shape, _delay_rule(rew_shape, delay_reward_step)

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        delay_reward_step: int = 1,
    ) -> SpaceTriple:
        box = reward_box("delay_reward", rew_space)
        shape = _delay_rule(box.shape, delay_reward_step)
        if delay_reward_step <= 1:
            return obs_space, act_space, rew_space
        low = np.minimum(0.0, box.low.astype(np.float64) * delay_reward_step).astype(np.float32)
        high = np.maximum(0.0, box.high.astype(np.float64) * delay_reward_step).astype(np.float32)
        return obs_space, act_space, spaces.Box(low, high, shape, np.float32)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._sum.fill(0.0)
        self._held = 0
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._sum += np.asarray(reward, dtype=np.float64).reshape(self._sum.shape)
        self._held += 1
        if terminated or truncated or self._held >= self.delay_reward_step:
            out = as_reward(self._sum, self._scalar)
            self._sum.fill(0.0)
            self._held = 0
        else:
            out = 0.0 if self._scalar else np.zeros(self._sum.shape, dtype=np.float32)
        return obs, out, terminated, truncated, info


def _scalar_weights(rew_shape: Shape, weights: Sequence[float] | None) -> npt.NDArray[np.float64]:
    """The weight vector of ``scalar_reward`` for ``rew_shape``, checked against it."""
    shape = check_reward_shape("scalar_reward", rew_shape)
    if len(shape) != 1 or shape[0] < 2:
        raise ShapeRuleError(f"scalar_reward needs a vector reward of shape (k,) with k >= 2; got reward shape {shape}")
    if weights is None:
        default = np.zeros(shape[0], dtype=np.float64)
        default[0] = 1.0
        return default
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise ConfigError(f"scalar_reward weights must be a list of numbers; got {weights!r}") from None
    if w.ndim != 1 or not np.all(np.isfinite(w)):
        raise ConfigError(f"scalar_reward weights must be a flat list of finite numbers; got {weights!r}")
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
    auxiliary objectives or costs. The scalar's bounds follow from the vector's bounds.

    Example:
        >>> rew = spaces.Box(-1.0, 1.0, (3,), np.float32)
        >>> ScalarRewardWrapper.new_space(spaces.Box(0, 1, (2,)), spaces.Discrete(2), rew, [1.0, 2.0, -1.0])[2]
        Box(-4.0, 4.0, (1,), float32)
    """

    def __init__(self, env: gym.Env[Any, Any], weights: Sequence[float] | None = None) -> None:
        super().__init__(env)
        self._declare_spaces(weights=weights)
        self.weights = _scalar_weights(space_to_shape(reward_space_of(self.env)), weights)

    @staticmethod
    def new_shape(
        obs_shape: Shape, act_shape: Shape, rew_shape: Shape, weights: Sequence[float] | None = None
    ) -> ShapeTriple:
        _scalar_weights(rew_shape, weights)
        return obs_shape, act_shape, _SCALAR_SHAPE

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        weights: Sequence[float] | None = None,
    ) -> SpaceTriple:
        box = reward_box("scalar_reward", rew_space)
        w = _scalar_weights(box.shape, weights)
        used = w != 0.0  # zero weights are left out so that 0 * inf cannot turn a bound into nan
        w, low, high = w[used], box.low[used].astype(np.float64), box.high[used].astype(np.float64)
        lo = float(np.sum(np.where(w > 0, w * low, w * high)))
        hi = float(np.sum(np.where(w > 0, w * high, w * low)))
        return obs_space, act_space, spaces.Box(lo, hi, _SCALAR_SHAPE, np.float32)

    def reward(self, reward: Any) -> float:
        return float(np.dot(self.weights, np.asarray(reward, dtype=np.float64).reshape(self.weights.shape)))


@register_wrapper("reward_in_obs")
class RewardInObsWrapper(DingWrapper):
    """Show the agent the reward it just received: obs → ``{"obs": obs, "reward": last reward}``.

    The ``"reward"`` entry is a float32 array of the reward shape, zeros after reset; its bounds
    are the reward's bounds widened to include 0.

    Example:
        >>> rew = spaces.Box(-1.0, 1.0, (1,), np.float32)
        >>> RewardInObsWrapper.new_space(spaces.Box(0, 1, (2,)), spaces.Discrete(2), rew)[0]
        Dict('obs': Box(0.0, 1.0, (2,), float32), 'reward': Box(-1.0, 1.0, (1,), float32))
        >>> RewardInObsWrapper.new_shape((2,), 2, (1,))[0]
        {'obs': (2,), 'reward': (1,)}
    """

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self._declare_spaces()
        self._rew_shape = reward_box("reward_in_obs", self.reward_space).shape

    @staticmethod
    def new_shape(obs_shape: Shape, act_shape: Shape, rew_shape: Shape) -> ShapeTriple:
        return {"obs": obs_shape, "reward": check_reward_shape("reward_in_obs", rew_shape)}, act_shape, rew_shape

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any]
    ) -> SpaceTriple:
        box = reward_box("reward_in_obs", rew_space)
        shape = check_reward_shape("reward_in_obs", box.shape)
        low = np.minimum(box.low, 0).astype(np.float32)
        high = np.maximum(box.high, 0).astype(np.float32)
        reward_entry = spaces.Box(low, high, shape, np.float32)
        return spaces.Dict({"obs": obs_space, "reward": reward_entry}), act_space, rew_space

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return {"obs": obs, "reward": np.zeros(self._rew_shape, dtype=np.float32)}, info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        last = np.array(reward, dtype=np.float32).reshape(self._rew_shape)
        return {"obs": obs, "reward": last}, reward, terminated, truncated, info
