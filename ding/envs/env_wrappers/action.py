"""Action wrappers: clipping, rescaling, discretising, offsetting, noise and lag on the way into the env.

Each maps the agent's action to the inner env's action in ``step``; the action space the agent sees is
declared by the wrapper's static rule.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Annotated, Any

import numpy as np
from gymnasium import spaces

from ding.envs.env_wrappers.arguments import AtLeast, NonNegativeFloat, NonNegativeInt, PositiveFloat
from ding.envs.env_wrappers.base import DingActionWrapper, DingWrapper, SpaceTriple, episode_began, register_wrapper
from ding.envs.env_wrappers.rule import SpaceKindError, describe_space
from ding.envs.values.conversion import ClippedBox
from ding.envs.values.spaces import is_placeholder
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


def _box(space: spaces.Space[Any], wrapper: str) -> spaces.Box:
    """The action space if it is a Box (not MultiBinary, Discrete, ...), else a TypeError naming the wrapper."""
    if not isinstance(space, spaces.Box):
        raise SpaceKindError(f"{wrapper} needs a continuous (Box) action space; got {describe_space(space, 'action')}")
    return space


def _finite_box(space: spaces.Space[Any], wrapper: str) -> spaces.Box:
    """The action space if it is a Box with finite bounds (bounds of a shape-only placeholder are not known)."""
    box = _box(space, wrapper)
    if not is_placeholder(box) and not (np.all(np.isfinite(box.low)) and np.all(np.isfinite(box.high))):
        raise ShapeRuleError(
            f"{wrapper} needs finite action bounds; got low={box.low.tolist()}, high={box.high.tolist()}"
        )
    return box


def _cast(values: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """Cast float values to an action dtype, rounding (not truncating) for integer Boxes."""
    if np.issubdtype(dtype, np.integer):
        values = np.rint(values)
    return values.astype(dtype, copy=False)


@register_wrapper("continuous_action_clip")
class ContinuousActionClipWrapper(DingActionWrapper):
    """Clip Box actions into the action space's bounds before passing them on.

    The action space keeps its bounds and becomes a :class:`~ding.envs.values.conversion.ClippedBox`, so envs and
    env managers take finite actions outside the bounds (clipped) instead of refusing them; NaN is still refused.

    Example:
        >>> from gymnasium.envs.classic_control import PendulumEnv
        >>> env = ContinuousActionClipWrapper(PendulumEnv())
        >>> env.action_space, env.action(np.array([5.0]))
        (ClippedBox(-2.0, 2.0, (1,), float32), array([2.], dtype=float32))
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any]
    ) -> SpaceTriple:
        box = _box(act_space, "continuous_action_clip")
        return obs_space, box if is_placeholder(box) else ClippedBox.of(box), rew_space

    def _setup(self) -> None:
        box: spaces.Box = self.action_space  # type: ignore[assignment]
        self._low, self._high, self._dtype = box.low, box.high, box.dtype

    def action(self, action: Any) -> np.ndarray:
        return np.clip(np.asarray(action, dtype=self._dtype).reshape(self._low.shape), self._low, self._high)


@register_wrapper("normalized_action")
class NormalizedActionWrapper(DingActionWrapper):
    """Let the agent act in [-1, 1] and map its actions linearly onto the inner Box's finite bounds.

    The action space becomes ``Box(-1, 1, shape, float32)`` (a ``ClippedBox`` when the inner one is: an env
    that clips its actions still does); actions are clipped to [-1, 1] first, so -1, 0 and 1 land exactly on
    the low bound, the midpoint and the high bound.

    Example:
        >>> inner = spaces.Box(np.array([-2.0, 0.0]), np.array([2.0, 10.0]), dtype=np.float64)
        >>> NormalizedActionWrapper.new_space(spaces.Box(-1, 1, (3,)), inner, spaces.Box(-1, 1, (1,)))[1]
        Box(-1.0, 1.0, (2,), float32)
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any]
    ) -> SpaceTriple:
        box = _finite_box(act_space, "normalized_action")
        unit = spaces.Box(-1.0, 1.0, shape=box.shape, dtype=np.float32)
        return obs_space, ClippedBox.of(unit) if isinstance(box, ClippedBox) else unit, rew_space

    def _setup(self) -> None:
        box: spaces.Box = self.env.action_space  # type: ignore[assignment]
        # action = low * (1 - a) / 2 + high * (1 + a) / 2 hits both bounds exactly at a = -1 and a = 1
        self._half_low = box.low.astype(np.float64) / 2.0
        self._half_high = box.high.astype(np.float64) / 2.0
        self._low, self._high, self._dtype = box.low, box.high, box.dtype

    def action(self, action: Any) -> np.ndarray:
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(self._low.shape), -1.0, 1.0)
        mapped = self._half_low * (1.0 - a) + self._half_high * (1.0 + a)
        return _cast(np.clip(mapped, self._low, self._high, out=mapped), self._dtype)


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

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        bins: Annotated[int, AtLeast(2)] = 5,
    ) -> SpaceTriple:
        box = _finite_box(act_space, "discrete_action")
        size = int(np.prod(box.shape, dtype=np.int64))
        if size == 0:
            raise ShapeRuleError(f"discrete_action needs at least one action dimension; got {describe_space(box)}")
        return obs_space, spaces.MultiDiscrete(np.full(size, bins, dtype=np.int64)), rew_space

    def _setup(self) -> None:
        box: spaces.Box = self.env.action_space  # type: ignore[assignment]
        low, high = box.low.astype(np.float64).reshape(-1), box.high.astype(np.float64).reshape(-1)
        self._values = _cast(np.linspace(low, high, self.bins, axis=1), box.dtype)  # (k, bins); endpoints exact
        self._rows = np.arange(low.size)
        self._shape = box.shape

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

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any]
    ) -> SpaceTriple:
        if isinstance(act_space, spaces.Discrete):
            if int(act_space.start) != 0:
                act_space = spaces.Discrete(int(act_space.n), dtype=act_space.dtype)
        elif isinstance(act_space, spaces.MultiDiscrete):
            if np.any(act_space.start != 0):
                act_space = spaces.MultiDiscrete(act_space.nvec, dtype=act_space.dtype)
        else:
            raise SpaceKindError(
                "action_offset needs a Discrete or MultiDiscrete action space; "
                f"got {describe_space(act_space, 'action')}"
            )
        return obs_space, act_space, rew_space

    def _setup(self) -> None:
        inner = self.env.action_space
        self._dtype = np.dtype(inner.dtype)
        self._start: Any = None  # None: already zero-based, actions pass through
        if isinstance(inner, spaces.Discrete) and int(inner.start) != 0:
            self._start = int(inner.start)
        elif isinstance(inner, spaces.MultiDiscrete) and np.any(inner.start != 0):
            self._start = inner.start.astype(self._dtype)

    def action(self, action: Any) -> Any:
        if self._start is None:
            return action
        if isinstance(self._start, int):
            return self._dtype.type(np.asarray(action).item() + self._start)
        return np.asarray(action, dtype=self._dtype) + self._start


@register_wrapper("temporally_correlated_noise")
class TemporallyCorrelatedNoiseWrapper(DingActionWrapper):
    """Add Ornstein-Uhlenbeck noise to Box actions and clip them to the bounds (spaces unchanged).

    Each step ``noise += -theta * noise * dt + sigma * sqrt(dt) * N(0, 1)`` per action element, drawn from
    ``self.np_random``; the noise restarts at 0 with every episode.

    Example:
        >>> TemporallyCorrelatedNoiseWrapper.new_shape((3,), (1,), (1,), sigma=0.5)
        ((3,), (1,), (1,))
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        theta: NonNegativeFloat = 0.15,
        sigma: NonNegativeFloat = 0.2,
        dt: PositiveFloat = 1e-2,
    ) -> SpaceTriple:
        if theta * dt > 1:
            raise ConfigError(
                "temporally_correlated_noise needs theta * dt <= 1 for the noise to revert to 0 without overshoot; "
                f"got theta={theta}, dt={dt}"
            )
        return obs_space, _box(act_space, "temporally_correlated_noise"), rew_space

    def _setup(self) -> None:
        box: spaces.Box = self.action_space  # type: ignore[assignment]
        self._low, self._high, self._dtype = box.low, box.high, box.dtype
        self._decay = 1.0 - self.theta * self.dt
        self._scale = self.sigma * float(np.sqrt(self.dt))
        self._noise = np.zeros(box.shape, dtype=np.float64)

    @property
    def noise(self) -> np.ndarray:
        """A copy of the current noise, the value added to the last action."""
        return self._noise.copy()

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._noise.fill(0.0)
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        result = super().step(action)
        if episode_began(result[4]) is not None:  # the next action is the new episode's first
            self._noise.fill(0.0)
        return result

    def action(self, action: Any) -> np.ndarray:
        self._noise *= self._decay
        self._noise += self._scale * self.np_random.standard_normal(self._noise.shape)
        noisy = np.asarray(action, dtype=np.float64).reshape(self._noise.shape) + self._noise
        return _cast(np.clip(noisy, self._low, self._high, out=noisy), self._dtype)


def _as_action(space: spaces.Space[Any], value: Any) -> Any:
    """``value`` in the space's own form (dtype scalars and arrays, Dict and Tuple alike), or a ConfigError if the
    space does not contain it.

    Of a space built from a shape alone only the shape is checked (its bounds and start are not known).
    """
    try:
        action = _in_form(space, value)
    except (TypeError, ValueError, KeyError) as err:
        raise ConfigError(f"time_shift default_action {value!r} does not fit the action space {space}: {err}") from err
    if not _contains(space, action):
        raise ConfigError(f"time_shift default_action {value!r} is not in the action space {space}")
    return action


def _in_form(space: spaces.Space[Any], value: Any) -> Any:
    if isinstance(space, spaces.Dict):
        if not isinstance(value, Mapping) or set(value) != set(space.spaces):
            raise ValueError(f"a Dict action needs the keys {sorted(space.spaces)}")
        return {key: _in_form(sub, value[key]) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        if len(value) != len(space.spaces):
            raise ValueError(f"a Tuple action needs {len(space.spaces)} parts")
        return tuple(_in_form(sub, part) for sub, part in zip(space.spaces, value, strict=True))
    if isinstance(space, spaces.Discrete):
        return np.dtype(space.dtype).type(value)
    if isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
        return np.asarray(value, dtype=space.dtype).reshape(space.shape)
    return value


def _contains(space: spaces.Space[Any], action: Any) -> bool:
    """``space.contains(action)``, leaf by leaf, where a placeholder leaf holds anything of its form."""
    if isinstance(space, spaces.Dict):
        return all(_contains(sub, action[key]) for key, sub in space.spaces.items())
    if isinstance(space, spaces.Tuple):
        return all(_contains(sub, part) for sub, part in zip(space.spaces, action, strict=True))
    return is_placeholder(space) or bool(space.contains(action))


@register_wrapper("time_shift")
class TimeShiftWrapper(DingWrapper):
    """Delay actions: the env executes at step t the action the agent gave at step t - ``shift`` (spaces unchanged).

    The first ``shift`` steps of each episode (also of one begun inside ``step``) execute ``default_action``; None
    means the action space's
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

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        shift: NonNegativeInt = 1,
        default_action: Any = None,
    ) -> SpaceTriple:
        if default_action is not None:
            _as_action(act_space, default_action)
        return obs_space, act_space, rew_space

    def _setup(self) -> None:
        space = self.env.action_space
        given = self.arguments["default_action"]
        self.default_action = zero_action(space) if given is None else _as_action(space, given)
        self.pending: deque[Any] = deque([self.default_action] * self.shift)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self.pending = deque([self.default_action] * self.shift)
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        if not self.shift:
            return self.env.step(action)
        # copy arrays: an agent reusing its action buffer must not change actions still waiting
        self.pending.append(np.array(action) if isinstance(action, np.ndarray) else action)
        result = self.env.step(self.pending.popleft())
        if episode_began(result[4]) is not None:  # actions of the ended episode do not reach the new one
            self.pending = deque([self.default_action] * self.shift)
        return result
