"""Normalization wrappers: observations by running or fixed statistics, rewards by the running return std.

The running statistics live in :class:`RunningMeanStd` objects that the wrappers expose, so a
trained agent's statistics can be saved (``state_dict``) and loaded for evaluation, where the
wrapper is usually frozen.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from ding.envs.env_wrappers.arguments import NonNegativeFloat, NonNegativeInt, UnitFloat
from ding.envs.env_wrappers.base import (
    DingObservationWrapper,
    DingRewardWrapper,
    ShapeTriple,
    SpaceTriple,
    episode_began,
    register_wrapper,
)
from ding.envs.env_wrappers.fields import Fields, get_field, map_fields
from ding.envs.env_wrappers.reward import RewardValue, as_reward, reward_box
from ding.envs.env_wrappers.rule import SpaceKindError, describe_space
from ding.envs.values.spaces import Shape
from ding.errors import ConfigError, ShapeRuleError

Array64 = npt.NDArray[np.float64]
Array32 = npt.NDArray[np.float32]
ClipRange = tuple[float, float] | None


class RunningMeanStd:
    """Mean and variance of every sample seen so far, updated batch by batch (parallel Welford), in float64.

    DI-engine's class, with its signature ``RunningMeanStd(epsilon=1e-4, shape=())`` and its ``std``:
    ``sqrt(var) + epsilon``. Before the first update the mean is 0 and the variance 1; after updates
    ``mean`` and ``var`` are exactly NumPy's over every sample seen (DI-engine starts its count at
    ``epsilon`` instead, a negligible prior).

    Example:
        >>> rms = RunningMeanStd(shape=(2,))
        >>> rms.update(np.array([[1.0, 10.0], [3.0, 10.0]]))
        >>> rms.update(np.array([[5.0, 10.0]]))
        >>> rms.mean, rms.var, rms.count
        (array([ 3., 10.]), array([2.66666667, 0.        ]), 3)
        >>> rms.std
        array([1.63309316e+00, 1.00000000e-04])
    """

    def __init__(self, epsilon: float = 1e-4, shape: tuple[int, ...] = ()) -> None:
        if not epsilon >= 0:
            raise ConfigError(f"RunningMeanStd needs epsilon >= 0; got {epsilon!r}")
        self.shape = tuple(int(d) for d in shape)
        self.epsilon = float(epsilon)
        self.reset()

    @staticmethod
    def new_shape(obs_shape: Shape, act_shape: Shape, rew_shape: Shape) -> ShapeTriple:
        """Shapes unchanged: DI-engine documents this rule on the class, which is not a wrapper."""
        return obs_shape, act_shape, rew_shape

    def reset(self) -> None:
        """Forget every sample."""
        self._mean: Array64 = np.zeros(self.shape, dtype=np.float64)
        self._var: Array64 = np.ones(self.shape, dtype=np.float64)
        self._count = 0

    def update(self, batch: npt.ArrayLike) -> None:
        """Fold in a batch of samples; the leading axis is the batch."""
        x = np.asarray(batch, dtype=np.float64)
        if x.shape[1:] != self.shape:
            raise ValueError(
                f"RunningMeanStd of shape {self.shape} needs a batch of shape (n, *{self.shape}); got {x.shape}"
            )
        n = x.shape[0]
        if n == 0:
            return
        if n == 1:
            batch_mean, batch_m2 = x[0], 0.0
        else:
            batch_mean, batch_m2 = x.mean(axis=0), x.var(axis=0) * n
        delta = batch_mean - self._mean
        total = self._count + n
        self._var = (self._var * self._count + batch_m2 + np.square(delta) * (self._count * n / total)) / total
        self._mean = self._mean + delta * (n / total)
        self._count = total

    @property
    def mean(self) -> Array64:
        return self._mean

    @property
    def var(self) -> Array64:
        return self._var

    @property
    def std(self) -> Array64:
        """``sqrt(var) + epsilon``."""
        return np.sqrt(self._var) + self.epsilon

    @property
    def count(self) -> int:
        return self._count

    def state_dict(self) -> dict[str, Any]:
        """The statistics as plain values, for saving."""
        return {"mean": self._mean.copy(), "var": self._var.copy(), "count": self._count}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore statistics saved by :meth:`state_dict`."""
        mean = np.asarray(state["mean"], dtype=np.float64)
        var = np.asarray(state["var"], dtype=np.float64)
        if mean.shape != self.shape or var.shape != self.shape:
            raise ValueError(
                f"RunningMeanStd of shape {self.shape} cannot load mean of shape {mean.shape} and var of shape "
                f"{var.shape}"
            )
        self._mean, self._var, self._count = mean.copy(), var.copy(), int(state["count"])


_LARGEST = float(np.finfo(np.float32).max)


def _finite_bounds(low: float, high: float) -> tuple[np.float32, np.float32]:
    """The float32 bounds to clip normalized values to: ``clip_range``, and never past float32's finite range.

    Normalizing can overflow float32 (a tiny std); saturating keeps values finite, so that a next
    normalization never meets ``inf - inf``. The declared space keeps ``clip_range`` (unbounded for None).
    """
    return np.float32(max(low, -_LARGEST)), np.float32(min(high, _LARGEST))


def _divisor(rms: RunningMeanStd) -> Array64:
    """What to divide by to normalize: ``rms.std``, or 1 where it is 0 (no spread seen and ``epsilon=0``)."""
    std = rms.std
    return np.where(std > 0, std, 1.0)


def _clip_bounds(wrapper: str, clip_range: tuple[float, float] | None) -> tuple[float, float]:
    """``clip_range`` as ``(low, high)``, ``(-inf, inf)`` for None; low < high."""
    if clip_range is None:
        return -np.inf, np.inf
    low, high = clip_range
    if not low < high:
        raise ConfigError(f"{wrapper} clip_range needs low < high; got {clip_range!r}")
    return low, high


def _normalized_space(wrapper: str, obs_space: spaces.Space[Any], clip_range: ClipRange, fields: Fields) -> Any:
    """``obs_space`` with each normalized field replaced by a float32 Box bounded by ``clip_range``."""
    low, high = _clip_bounds(wrapper, clip_range)

    def box(space: spaces.Space[Any]) -> spaces.Box:
        if not isinstance(space, spaces.Box):
            hint = "; for a Dict observation, name its Box entries with fields=['a.b']" if fields is None else ""
            raise SpaceKindError(f"{wrapper} needs Box observations; got {describe_space(space, 'observation')}{hint}")
        return spaces.Box(low, high, space.shape, np.float32)

    return map_fields(obs_space, fields, box)


def _field_paths(fields: Fields) -> list[list[str] | None]:
    """One ``map_fields`` argument per normalized field: ``[None]`` for the whole observation."""
    return [None] if fields is None else [[path] for path in fields]


def _field_box(space: spaces.Space[Any], path: list[str] | None) -> spaces.Box:
    """The (already checked) Box of one normalized field (``path`` as in :func:`_field_paths`)."""
    return space if path is None else get_field(space, path[0])  # type: ignore[return-value]


@register_wrapper("obs_norm")
class ObsNormWrapper(DingObservationWrapper):
    """Normalize observations by the running mean and std of every observation seen, then clip; float32.

    The first ``warmup`` observations pass through unnormalized (cast to float32 and clipped into
    ``clip_range``). The space becomes ``Box(clip_low, clip_high, shape, float32)`` per field.
    Statistics persist across episodes; ``obs_rms`` maps each field path (``""`` for the whole
    observation) to its :class:`RunningMeanStd`. ``update=False`` or :meth:`freeze` stops updating.

    Example:
        >>> from gymnasium.envs.classic_control import CartPoleEnv
        >>> ObsNormWrapper(CartPoleEnv(), clip_range=(-3.0, 3.0)).observation_space
        Box(-3.0, 3.0, (4,), float32)
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        clip_range: ClipRange = (-5.0, 5.0),
        epsilon: NonNegativeFloat = 1e-4,
        warmup: NonNegativeInt = 30,
        update: bool = True,
        fields: Fields = None,
    ) -> SpaceTriple:
        return _normalized_space("obs_norm", obs_space, clip_range, fields), act_space, rew_space

    def _setup(self) -> None:
        low, high = _clip_bounds("obs_norm", self.clip_range)
        self._low, self._high = _finite_bounds(low, high)
        self.obs_rms: dict[str, RunningMeanStd] = {}
        self._steps: list[tuple[list[str] | None, Callable[[Any], Array32]]] = []
        for path in _field_paths(self.fields):
            rms = RunningMeanStd(self.epsilon, _field_box(self.env.observation_space, path).shape)
            self.obs_rms["" if path is None else path[0]] = rms
            self._steps.append((path, partial(self._normalize, rms=rms)))

    def freeze(self) -> None:
        """Stop updating the statistics (for evaluation with loaded statistics)."""
        self.update = False

    def _normalize(self, obs: Any, rms: RunningMeanStd) -> Array32:
        x = np.asarray(obs)
        if self.update:
            rms.update(x[None])
        # Before warm-up the raw observation still has to lie in the declared bounds, so it is clipped too.
        with np.errstate(over="ignore"):  # saturated just below
            normalized = (x - rms.mean) / _divisor(rms) if rms.count > self.warmup else x
            out = np.asarray(normalized, dtype=np.float32)  # an array also for 0-d observations
        return np.clip(out, self._low, self._high, out=out)

    def observation(self, obs: Any) -> Any:
        for path, normalize in self._steps:
            obs = map_fields(obs, path, normalize)
        return obs


def _broadcast_stat(name: str, value: npt.ArrayLike, shape: tuple[int, ...], path: list[str] | None) -> Array32:
    """``value`` broadcast to ``shape`` as float32, or a ShapeRuleError naming both shapes."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ConfigError(f"static_obs_norm {name} must be a number or a list of numbers; got {value!r}") from None
    try:
        return np.broadcast_to(arr, shape).astype(np.float32)
    except ValueError:
        where = "observation" if path is None else f"field {path[0]!r}"
        raise ShapeRuleError(
            f"static_obs_norm {name} of shape {arr.shape} does not broadcast to the {where} shape {shape}"
        ) from None


def _static_stats(
    obs_space: spaces.Space[Any], mean: npt.ArrayLike, std: npt.ArrayLike, fields: Fields
) -> list[tuple[list[str] | None, Array32, Array32]]:
    """Per normalized field (Box fields, already checked): its ``map_fields`` path and mean and std broadcast to it."""
    stats = []
    for path in _field_paths(fields):
        shape = _field_box(obs_space, path).shape
        m = _broadcast_stat("mean", mean, shape, path)
        s = _broadcast_stat("std", std, shape, path)
        if not (np.all(np.isfinite(m)) and np.all(np.isfinite(s)) and np.all(s > 0)):
            raise ConfigError(f"static_obs_norm needs finite mean and std > 0; got mean={mean!r}, std={std!r}")
        stats.append((path, m, s))
    return stats


@register_wrapper("static_obs_norm")
class StaticObsNormWrapper(DingObservationWrapper):
    """Normalize observations with fixed statistics: ``(obs - mean) / std`` as float32, optionally clipped.

    ``mean`` and ``std`` are numbers or lists broadcastable to each normalized field's shape (the
    same statistics serve every field in ``fields``). The space becomes a float32 Box bounded by
    ``clip_range``, or unbounded when it is None.

    Example:
        >>> obs = spaces.Box(0.0, 10.0, (3,), np.float64)
        >>> StaticObsNormWrapper.new_space(obs, spaces.Discrete(2), None, [1.0, 2.0, 3.0], 2.0, (-1.0, 1.0))[0]
        Box(-1.0, 1.0, (3,), float32)
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        mean: npt.ArrayLike,
        std: npt.ArrayLike,
        clip_range: ClipRange = None,
        fields: Fields = None,
    ) -> SpaceTriple:
        new_obs = _normalized_space("static_obs_norm", obs_space, clip_range, fields)
        _static_stats(obs_space, mean, std, fields)
        return new_obs, act_space, rew_space

    def _setup(self) -> None:
        self._low, self._high = _finite_bounds(*_clip_bounds("static_obs_norm", self.clip_range))
        self._steps = [
            (path, partial(self._normalize, mean=m, std=s))
            for path, m, s in _static_stats(self.env.observation_space, self.mean, self.std, self.fields)
        ]

    def observation(self, obs: Any) -> Any:
        for path, normalize in self._steps:
            obs = map_fields(obs, path, normalize)
        return obs

    def _normalize(self, x: Any, mean: Array32, std: Array32) -> Array32:
        with np.errstate(over="ignore"):  # saturated just below
            out = np.asarray(np.subtract(x, mean, dtype=np.float32))  # an array also for 0-d observations
            np.divide(out, std, out=out)
        np.clip(out, self._low, self._high, out=out)
        return out


@register_wrapper("reward_norm")
class RewardNormWrapper(DingRewardWrapper):
    """Divide rewards by the running std of the discounted return; the reward space becomes unbounded float32.

    The discounted return ``G = reward_discount * G + reward`` is kept per env (restarting at every reset, and
    with an episode begun inside ``step``) and its statistics across episodes in ``return_rms``. The first
    ``warmup`` rewards pass through unchanged. Scalar and vector rewards keep their shape.

    Example:
        >>> rew = spaces.Box(-1.0, 1.0, (1,), np.float32)
        >>> RewardNormWrapper.new_space(spaces.Box(0, 1, (2,)), spaces.Discrete(2), rew)[2]
        Box(-inf, inf, (1,), float32)
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        reward_discount: UnitFloat = 0.99,
        epsilon: NonNegativeFloat = 1e-4,
        warmup: NonNegativeInt = 30,
    ) -> SpaceTriple:
        box = reward_box("reward_norm", rew_space)
        return obs_space, act_space, spaces.Box(-np.inf, np.inf, box.shape, np.float32)

    def _setup(self) -> None:
        shape: tuple[int, ...] = self.reward_space.shape  # type: ignore[assignment]
        self.return_rms = RunningMeanStd(self.epsilon, shape)
        self._return: Array64 = np.zeros(shape, dtype=np.float64)
        self._scalar = shape == (1,)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._return.fill(0.0)
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        result = super().step(action)
        if episode_began(result[4]) is not None:  # the return restarts with the episode begun inside the step
            self._return.fill(0.0)
        return result

    def reward(self, reward: Any) -> RewardValue:
        value = np.asarray(reward, dtype=np.float64).reshape(self._return.shape)
        self._return *= self.reward_discount
        self._return += value
        self.return_rms.update(self._return[None])
        if self.return_rms.count > self.warmup:
            value = np.clip(value / _divisor(self.return_rms), -_LARGEST, _LARGEST)  # finite, as float32 holds it
        return as_reward(value, self._scalar)
