"""Action wrappers: clipping, rescaling, discretising, offsetting, noise and lag on the way into the env.

Each maps the agent's action to the inner env's action in ``step``; the action space the agent sees is
declared by the wrapper's static rule.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ding.envs.env_wrappers.base import (
    DingActionWrapper,
    DingWrapper,
    ShapeTriple,
    SpaceTriple,
    register_wrapper,
)
from ding.envs.spaces import Shape, is_flat_shape, space_to_shape
from ding.errors import ConfigError, ShapeRuleError


def zero_action(space: spaces.Space[Any]) -> Any:
    """The neutral action of a space: zeros of its dtype, or its low bound where 0 is not a valid value.

    Example:
        >>> zero_action(spaces.Discrete(4, start=3))
        np.int64(3)
        >>> zero_action(spaces.Box(np.float32([-1.0, 0.5]), np.float32([1.0, 2.0])))
        array([0. , 0.5], dtype=float32)
    """
    if isinstance(space, spaces.Discrete):
        start, n = int(space.start), int(space.n)
        return np.dtype(space.dtype).type(0 if start <= 0 < start + n else start)
    if isinstance(space, spaces.MultiDiscrete):
        inside = (space.start <= 0) & (space.start + space.nvec > 0)
        return np.where(inside, 0, space.start).astype(space.dtype)
    if isinstance(space, spaces.Box):
        inside = (space.low <= 0) & (space.high >= 0)
        # where 0 is outside the bounds, take the low bound, or the high bound if the low one is -inf
        fallback = np.where(np.isfinite(space.low), space.low, space.high)
        return np.where(inside, 0, fallback).astype(space.dtype)
    if isinstance(space, spaces.MultiBinary):
        return np.zeros(space.shape, dtype=space.dtype)
    if isinstance(space, spaces.Dict):
        return {key: zero_action(sub) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(zero_action(sub) for sub in space.spaces)
    raise TypeError(f"no zero action for {space}; supported: Box, Discrete, MultiDiscrete, MultiBinary, Dict, Tuple")


def _describe(shape: Shape) -> str:
    kind = {int: "Discrete", list: "MultiDiscrete", dict: "Dict", tuple: "Tuple"}.get(type(shape), type(shape).__name__)
    return f"{shape!r} ({kind})"


def _box_shape(act_shape: Shape, wrapper: str) -> tuple[int, ...]:
    """The action shape as a Box shape tuple, or a ShapeRuleError for a Discrete/MultiDiscrete/nested one."""
    if not is_flat_shape(act_shape):
        raise ShapeRuleError(
            f"{wrapper} needs a continuous (Box) action space, whose shape is a tuple like (2,); "
            f"got action shape {_describe(act_shape)}"
        )
    return tuple(int(d) for d in act_shape)  # type: ignore[union-attr]


def _box(space: spaces.Space[Any], wrapper: str) -> spaces.Box:
    if not isinstance(space, spaces.Box):
        raise TypeError(f"{wrapper} needs a Box action space, got {space}")
    return space


def _finite_box(space: spaces.Space[Any], wrapper: str) -> spaces.Box:
    box = _box(space, wrapper)
    if not (np.all(np.isfinite(box.low)) and np.all(np.isfinite(box.high))):
        raise ShapeRuleError(
            f"{wrapper} needs finite action bounds; got low={box.low.tolist()}, high={box.high.tolist()}"
        )
    return box


def _space_shapes(
    obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any]
) -> ShapeTriple:
    return space_to_shape(obs_space), space_to_shape(act_space), space_to_shape(rew_space)


def _cast(values: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """Cast float values to an action dtype, rounding (not truncating) for integer Boxes."""
    if np.issubdtype(dtype, np.integer):
        values = np.rint(values)
    return values.astype(dtype, copy=False)


@register_wrapper("continuous_action_clip")
class ContinuousActionClipWrapper(DingActionWrapper):
    """Clip Box actions into the action space's bounds before passing them on (spaces unchanged).

    Example:
        >>> from gymnasium.envs.classic_control import PendulumEnv
        >>> env = ContinuousActionClipWrapper(PendulumEnv())
        >>> env.action(np.array([5.0]))
        array([2.], dtype=float32)
    """

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self._declare_spaces()
        box = _box(self.env.action_space, "continuous_action_clip")
        self._low, self._high, self._dtype = box.low, box.high, box.dtype

    @staticmethod
    def new_shape(obs_shape: Shape, act_shape: Shape, rew_shape: Shape) -> ShapeTriple:
        _box_shape(act_shape, "continuous_action_clip")
        return obs_shape, act_shape, rew_shape

    def action(self, action: Any) -> np.ndarray:
        return np.clip(np.asarray(action, dtype=self._dtype).reshape(self._low.shape), self._low, self._high)


@register_wrapper("normalized_action")
class NormalizedActionWrapper(DingActionWrapper):
    """Let the agent act in [-1, 1] and map its actions linearly onto the inner Box's finite bounds.

    The action space becomes ``Box(-1, 1, shape, float32)``; actions are clipped to [-1, 1] first, so
    -1, 0 and 1 land exactly on the low bound, the midpoint and the high bound.

    Example:
        >>> inner = spaces.Box(np.array([-2.0, 0.0]), np.array([2.0, 10.0]), dtype=np.float64)
        >>> NormalizedActionWrapper.new_space(spaces.Box(-1, 1, (3,)), inner, spaces.Box(-1, 1, (1,)))[1]
        Box(-1.0, 1.0, (2,), float32)
    """

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self._declare_spaces()
        box = _box(self.env.action_space, "normalized_action")
        # action = low * (1 - a) / 2 + high * (1 + a) / 2 hits both bounds exactly at a = -1 and a = 1
        self._half_low = box.low.astype(np.float64) / 2.0
        self._half_high = box.high.astype(np.float64) / 2.0
        self._low, self._high, self._dtype = box.low, box.high, box.dtype

    @staticmethod
    def new_shape(obs_shape: Shape, act_shape: Shape, rew_shape: Shape) -> ShapeTriple:
        _box_shape(act_shape, "normalized_action")
        return obs_shape, act_shape, rew_shape

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any]
    ) -> SpaceTriple:
        shapes = _space_shapes(obs_space, act_space, rew_space)
        act_shape = _box_shape(NormalizedActionWrapper.new_shape(*shapes)[1], "normalized_action")
        _finite_box(act_space, "normalized_action")
        return obs_space, spaces.Box(-1.0, 1.0, shape=act_shape, dtype=np.float32), rew_space

    def action(self, action: Any) -> np.ndarray:
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(self._low.shape), -1.0, 1.0)
        mapped = self._half_low * (1.0 - a) + self._half_high * (1.0 + a)
        return _cast(np.clip(mapped, self._low, self._high, out=mapped), self._dtype)


def _check_bins(bins: int) -> None:
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)):
        raise ConfigError(f"discrete_action bins must be an int >= 2, got {bins!r}")
    if bins < 2:
        raise ConfigError(f"discrete_action bins must be >= 2 (one value per bound at least), got {bins}")


@register_wrapper("discrete_action")
class DiscreteActionWrapper(DingActionWrapper):
    """Discretise each dimension of a finite Box action into ``bins`` evenly spaced values between its bounds.

    The action space becomes ``MultiDiscrete([bins] * k)`` for a Box of ``k`` elements (a Box of any rank
    is flattened in C order; a single dimension still gives ``MultiDiscrete([bins])``). Index 0 is the
    low bound, ``bins - 1`` the high bound.

    Example:
        >>> DiscreteActionWrapper.new_shape((3,), (2,), (1,), bins=7)
        ((3,), [7, 7], (1,))
    """

    def __init__(self, env: gym.Env[Any, Any], bins: int = 5) -> None:
        super().__init__(env)
        self.bins = bins
        self._declare_spaces(bins=bins)
        box = _box(self.env.action_space, "discrete_action")
        low, high = box.low.astype(np.float64).reshape(-1), box.high.astype(np.float64).reshape(-1)
        self._values = _cast(np.linspace(low, high, bins, axis=1), box.dtype)  # (k, bins); endpoints exact
        self._rows = np.arange(low.size)
        self._shape = box.shape

    @staticmethod
    def new_shape(obs_shape: Shape, act_shape: Shape, rew_shape: Shape, bins: int = 5) -> ShapeTriple:
        _check_bins(bins)
        size = int(np.prod(_box_shape(act_shape, "discrete_action"), dtype=np.int64))
        if size == 0:
            raise ShapeRuleError(f"discrete_action needs at least one action dimension; got action shape {act_shape}")
        return obs_shape, [int(bins)] * size, rew_shape

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any], bins: int = 5
    ) -> SpaceTriple:
        shapes = _space_shapes(obs_space, act_space, rew_space)
        nvec = DiscreteActionWrapper.new_shape(*shapes, bins=bins)[1]
        _finite_box(act_space, "discrete_action")
        return obs_space, spaces.MultiDiscrete(np.asarray(nvec, dtype=np.int64)), rew_space

    def action(self, action: Any) -> np.ndarray:
        index = np.asarray(action, dtype=np.int64).reshape(self._rows.shape)
        if index.min() < 0 or index.max() >= self.bins:
            raise ValueError(f"discrete_action got indices {index.tolist()}; each must be in [0, {self.bins - 1}]")
        return self._values[self._rows, index].reshape(self._shape)


@register_wrapper("action_offset")
class ActionOffsetWrapper(DingActionWrapper):
    """Make a Discrete or MultiDiscrete action space with a ``start`` zero-based, adding the start back on the way in.

    ``Discrete(n, start=s)`` becomes ``Discrete(n)`` and ``MultiDiscrete(nvec, start=s)`` becomes
    ``MultiDiscrete(nvec)``; a space that is already zero-based passes through unchanged.

    Example:
        >>> box = spaces.Box(-1, 1, (3,))
        >>> ActionOffsetWrapper.new_space(box, spaces.Discrete(4, start=-1), box)[1]
        Discrete(4)
    """

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self._declare_spaces()
        inner = self.env.action_space
        self._dtype = np.dtype(inner.dtype)
        self._start: Any = None  # None: already zero-based, actions pass through
        if isinstance(inner, spaces.Discrete) and int(inner.start) != 0:
            self._start = int(inner.start)
        elif isinstance(inner, spaces.MultiDiscrete) and np.any(inner.start != 0):
            self._start = inner.start.astype(self._dtype)

    @staticmethod
    def new_shape(obs_shape: Shape, act_shape: Shape, rew_shape: Shape) -> ShapeTriple:
        if isinstance(act_shape, bool) or not isinstance(act_shape, (int, list)):
            raise ShapeRuleError(
                "action_offset needs a Discrete or MultiDiscrete action space (shape int or list); "
                f"got action shape {_describe(act_shape)}"
            )
        return obs_shape, act_shape, rew_shape

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any]
    ) -> SpaceTriple:
        shapes = _space_shapes(obs_space, act_space, rew_space)
        ActionOffsetWrapper.new_shape(*shapes)
        if isinstance(act_space, spaces.Discrete):
            if int(act_space.start) != 0:
                act_space = spaces.Discrete(int(act_space.n), dtype=act_space.dtype)
        elif isinstance(act_space, spaces.MultiDiscrete):
            if np.any(act_space.start != 0):
                act_space = spaces.MultiDiscrete(act_space.nvec, dtype=act_space.dtype)
        else:
            raise TypeError(f"action_offset needs a Discrete or MultiDiscrete action space, got {act_space}")
        return obs_space, act_space, rew_space

    def action(self, action: Any) -> Any:
        if self._start is None:
            return action
        if isinstance(self._start, int):
            return self._dtype.type(np.asarray(action).item() + self._start)
        return np.asarray(action, dtype=self._dtype) + self._start


def _check_noise_params(theta: float, sigma: float, dt: float) -> None:
    if not (theta >= 0 and sigma >= 0 and dt > 0):
        raise ConfigError(
            f"temporally_correlated_noise needs theta >= 0, sigma >= 0 and dt > 0; got theta={theta}, "
            f"sigma={sigma}, dt={dt}"
        )
    if theta * dt > 1:
        raise ConfigError(
            f"temporally_correlated_noise needs theta * dt <= 1 for the noise to revert to 0 without overshoot; "
            f"got theta={theta}, dt={dt}"
        )


@register_wrapper("temporally_correlated_noise")
class TemporallyCorrelatedNoiseWrapper(DingActionWrapper):
    """Add Ornstein-Uhlenbeck noise to Box actions and clip them to the bounds (spaces unchanged).

    Each step ``noise += -theta * noise * dt + sigma * sqrt(dt) * N(0, 1)`` per action element, drawn from
    ``self.np_random``; the noise restarts at 0 with every episode.

    Example:
        >>> TemporallyCorrelatedNoiseWrapper.new_shape((3,), (1,), (1,), sigma=0.5)
        ((3,), (1,), (1,))
    """

    def __init__(self, env: gym.Env[Any, Any], theta: float = 0.15, sigma: float = 0.2, dt: float = 1e-2) -> None:
        super().__init__(env)
        self._declare_spaces(theta=theta, sigma=sigma, dt=dt)
        box = _box(self.env.action_space, "temporally_correlated_noise")
        self._low, self._high, self._dtype = box.low, box.high, box.dtype
        self._decay = 1.0 - theta * dt
        self._scale = sigma * float(np.sqrt(dt))
        self._noise = np.zeros(box.shape, dtype=np.float64)

    @staticmethod
    def new_shape(
        obs_shape: Shape, act_shape: Shape, rew_shape: Shape, theta: float = 0.15, sigma: float = 0.2, dt: float = 1e-2
    ) -> ShapeTriple:
        _check_noise_params(theta, sigma, dt)
        _box_shape(act_shape, "temporally_correlated_noise")
        return obs_shape, act_shape, rew_shape

    @property
    def noise(self) -> np.ndarray:
        """A copy of the current noise, the value added to the last action."""
        return self._noise.copy()

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._noise.fill(0.0)
        return self.env.reset(**kwargs)

    def action(self, action: Any) -> np.ndarray:
        self._noise *= self._decay
        self._noise += self._scale * self.np_random.standard_normal(self._noise.shape)
        noisy = np.asarray(action, dtype=np.float64).reshape(self._noise.shape) + self._noise
        return _cast(np.clip(noisy, self._low, self._high, out=noisy), self._dtype)


def _check_shift(shift: int) -> None:
    if isinstance(shift, bool) or not isinstance(shift, (int, np.integer)) or shift < 0:
        raise ConfigError(f"time_shift shift must be an int >= 0, got {shift!r}")


def _as_action(space: spaces.Space[Any], value: Any) -> Any:
    """``value`` in the space's own form (dtype scalar or array), or a ConfigError if the space does not contain it."""
    action = value
    try:
        if isinstance(space, spaces.Discrete):
            action = np.dtype(space.dtype).type(value)
        elif isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
            action = np.asarray(value, dtype=space.dtype).reshape(space.shape)
    except (TypeError, ValueError) as err:
        raise ConfigError(f"time_shift default_action {value!r} does not fit the action space {space}: {err}") from err
    if not space.contains(action):
        raise ConfigError(f"time_shift default_action {value!r} is not in the action space {space}")
    return action


@register_wrapper("time_shift")
class TimeShiftWrapper(DingWrapper):
    """Delay actions: the env executes at step t the action the agent gave at step t - ``shift`` (spaces unchanged).

    The first ``shift`` steps of each episode execute ``default_action``; None means the action space's
    :func:`zero_action` (zeros, or the low bound where 0 is not allowed). ``shift=0`` passes actions through.

    Example:
        >>> from gymnasium.envs.classic_control import CartPoleEnv
        >>> env = TimeShiftWrapper(CartPoleEnv(), shift=2, default_action=1)
        >>> _ = env.reset(seed=0)
        >>> for a in (0, 0, 1):
        ...     _ = env.step(a)
        >>> list(env.pending)  # the agent's last two actions, still waiting
        [0, 1]
    """

    def __init__(self, env: gym.Env[Any, Any], shift: int = 1, default_action: Any = None) -> None:
        super().__init__(env)
        self.shift = shift
        self._declare_spaces(shift=shift, default_action=default_action)
        space = self.env.action_space
        self.default_action = zero_action(space) if default_action is None else _as_action(space, default_action)
        self.pending: deque[Any] = deque([self.default_action] * shift)

    @staticmethod
    def new_shape(
        obs_shape: Shape, act_shape: Shape, rew_shape: Shape, shift: int = 1, default_action: Any = None
    ) -> ShapeTriple:
        _check_shift(shift)
        return obs_shape, act_shape, rew_shape

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self.pending = deque([self.default_action] * self.shift)
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        if not self.shift:
            return self.env.step(action)
        # copy arrays: an agent reusing its action buffer must not change actions still waiting
        self.pending.append(np.array(action) if isinstance(action, np.ndarray) else action)
        return self.env.step(self.pending.popleft())
