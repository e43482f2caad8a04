"""Normalization wrappers: observations by running or fixed statistics, rewards by the running return std.

The running statistics live in :class:`RunningMeanStd` objects that the wrappers expose, so a
trained agent's statistics can be saved (``state_dict``) and loaded for evaluation, where the
wrapper is usually frozen.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from ding.envs.env_wrappers.base import (
    DingObservationWrapper,
    DingRewardWrapper,
    ShapeTriple,
    SpaceTriple,
    register_wrapper,
)
from ding.envs.env_wrappers.fields import Fields, get_field, map_fields
from ding.envs.env_wrappers.reward import RewardValue, as_reward, check_reward_shape, reward_box
from ding.envs.spaces import Shape, is_flat_shape, space_to_shape
from ding.errors import ConfigError, ShapeRuleError

Array64 = npt.NDArray[np.float64]
Array32 = npt.NDArray[np.float32]
ClipRange = Sequence[float] | None


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
        _check_epsilon("RunningMeanStd", epsilon)
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


def _clip_bounds(wrapper: str, clip_range: ClipRange) -> tuple[float, float]:
    """``clip_range`` as ``(low, high)`` floats, ``(-inf, inf)`` for None."""
    if clip_range is None:
        return -np.inf, np.inf
    try:
        low, high = (float(v) for v in clip_range)
    except (TypeError, ValueError):
        raise ConfigError(f"{wrapper} clip_range must be a (low, high) pair or None; got {clip_range!r}") from None
    if not low < high:
        raise ConfigError(f"{wrapper} clip_range needs low < high; got {clip_range!r}")
    return low, high


def _check_box_shape(wrapper: str, shape: Shape, fields: Fields) -> tuple[int, ...]:
    if is_flat_shape(shape):
        return shape  # type: ignore[return-value]
    if fields is not None:
        raise ShapeRuleError(f"{wrapper} needs Box observations at fields {list(fields)}; got {shape!r}")
    hint = "; for a Dict observation, name its Box entries with fields=['a.b']" if isinstance(shape, dict) else ""
    raise ShapeRuleError(f"{wrapper} needs a Box observation (a tuple shape); got {shape!r}{hint}")


def _normalized_space(wrapper: str, obs_space: spaces.Space[Any], clip_range: ClipRange, fields: Fields) -> Any:
    """``obs_space`` with each normalized field replaced by a float32 Box bounded by ``clip_range``."""
    low, high = _clip_bounds(wrapper, clip_range)

    def box(space: spaces.Space[Any]) -> spaces.Box:
        if not isinstance(space, spaces.Box):
            raise TypeError(f"{wrapper} needs Box observations; got {space}")
        return spaces.Box(low, high, space.shape, np.float32)

    return map_fields(obs_space, fields, box)


def _field_paths(fields: Fields) -> list[list[str] | None]:
    """One ``map_fields`` argument per normalized field: ``[None]`` for the whole observation."""
    return [None] if fields is None else [[path] for path in fields]


def _field_shape(wrapper: str, obs_shape: Shape, path: list[str] | None, fields: Fields) -> tuple[int, ...]:
    """The Box shape of one normalized field (``path`` as in :func:`_field_paths`)."""
    return _check_box_shape(wrapper, obs_shape if path is None else get_field(obs_shape, path[0]), fields)


def _check_epsilon(wrapper: str, epsilon: float) -> None:
    if not epsilon >= 0:
        raise ConfigError(f"{wrapper} needs epsilon >= 0; got {epsilon!r}")


def _check_warmup(wrapper: str, warmup: int) -> None:
    if isinstance(warmup, bool) or not isinstance(warmup, (int, np.integer)) or warmup < 0:
        raise ConfigError(f"{wrapper} needs an integer warmup >= 0; got {warmup!r}")


def _obs_norm_rule(obs_shape: Shape, clip_range: ClipRange, epsilon: float, warmup: int, fields: Fields) -> Shape:
    _clip_bounds("obs_norm", clip_range)
    _check_epsilon("obs_norm", epsilon)
    _check_warmup("obs_norm", warmup)
    return map_fields(obs_shape, fields, lambda shape: _check_box_shape("obs_norm", shape, fields))


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

    def __init__(
        self,
        env: gym.Env[Any, Any],
        clip_range: ClipRange = (-5.0, 5.0),
        epsilon: float = 1e-4,
        warmup: int = 30,
        update: bool = True,
        fields: Fields = None,
    ) -> None:
        super().__init__(env)
        self._declare_spaces(clip_range=clip_range, epsilon=epsilon, warmup=warmup, update=update, fields=fields)
        self.fields = fields
        self.warmup = int(warmup)
        self.update = bool(update)
        low, high = _clip_bounds("obs_norm", clip_range)
        self._low, self._high = np.float32(low), np.float32(high)
        self.obs_rms: dict[str, RunningMeanStd] = {}
        self._steps: list[tuple[list[str] | None, Callable[[Any], Array32]]] = []
        obs_shape = space_to_shape(self.env.observation_space)
        for path in _field_paths(fields):
            rms = RunningMeanStd(epsilon, _field_shape("obs_norm", obs_shape, path, fields))
            self.obs_rms["" if path is None else path[0]] = rms
            self._steps.append((path, partial(self._normalize, rms=rms)))

    @staticmethod
    def new_shape(
        obs_shape: Shape,
        act_shape: Shape,
        rew_shape: Shape,
        clip_range: ClipRange = (-5.0, 5.0),
        epsilon: float = 1e-4,
        warmup: int = 30,
        update: bool = True,
        fields: Fields = None,
    ) -> ShapeTriple:
        return _obs_norm_rule(obs_shape, clip_range, epsilon, warmup, fields), act_shape, rew_shape

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        clip_range: ClipRange = (-5.0, 5.0),
        epsilon: float = 1e-4,
        warmup: int = 30,
        update: bool = True,
        fields: Fields = None,
    ) -> SpaceTriple:
        _obs_norm_rule(space_to_shape(obs_space), clip_range, epsilon, warmup, fields)
        return _normalized_space("obs_norm", obs_space, clip_range, fields), act_space, rew_space

    def freeze(self) -> None:
        """Stop updating the statistics (for evaluation with loaded statistics)."""
        self.update = False

    def _normalize(self, obs: Any, rms: RunningMeanStd) -> Array32:
        x = np.asarray(obs)
        if self.update:
            rms.update(x[None])
        # Before warm-up the raw observation still has to lie in the declared bounds, so it is clipped too.
        out = ((x - rms.mean) / rms.std).astype(np.float32) if rms.count > self.warmup else x.astype(np.float32)
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


def _static_rule(
    obs_shape: Shape, mean: npt.ArrayLike, std: npt.ArrayLike, clip_range: ClipRange, fields: Fields
) -> list[tuple[list[str] | None, Array32, Array32]]:
    """Check the arguments; per normalized field, its ``map_fields`` path and mean and std broadcast to its shape."""
    _clip_bounds("static_obs_norm", clip_range)
    stats = []
    for path in _field_paths(fields):
        shape = _field_shape("static_obs_norm", obs_shape, path, fields)
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

    def __init__(
        self,
        env: gym.Env[Any, Any],
        mean: npt.ArrayLike,
        std: npt.ArrayLike,
        clip_range: ClipRange = None,
        fields: Fields = None,
    ) -> None:
        super().__init__(env)
        self._declare_spaces(mean=mean, std=std, clip_range=clip_range, fields=fields)
        self._clip = None if clip_range is None else _clip_bounds("static_obs_norm", clip_range)
        self._steps = [
            (path, partial(self._normalize, mean=m, std=s))
            for path, m, s in _static_rule(space_to_shape(self.env.observation_space), mean, std, clip_range, fields)
        ]

    @staticmethod
    def new_shape(
        obs_shape: Shape,
        act_shape: Shape,
        rew_shape: Shape,
        mean: npt.ArrayLike,
        std: npt.ArrayLike,
        clip_range: ClipRange = None,
        fields: Fields = None,
    ) -> ShapeTriple:
        _static_rule(obs_shape, mean, std, clip_range, fields)
        return obs_shape, act_shape, rew_shape

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        mean: npt.ArrayLike,
        std: npt.ArrayLike,
        clip_range: ClipRange = None,
        fields: Fields = None,
    ) -> SpaceTriple:
        _static_rule(space_to_shape(obs_space), mean, std, clip_range, fields)
        return _normalized_space("static_obs_norm", obs_space, clip_range, fields), act_space, rew_space

    def observation(self, obs: Any) -> Any:
        for path, normalize in self._steps:
            obs = map_fields(obs, path, normalize)
        return obs

    def _normalize(self, x: Any, mean: Array32, std: Array32) -> Array32:
        out = np.subtract(x, mean, dtype=np.float32)
        np.divide(out, std, out=out)
        if self._clip is not None:
            np.clip(out, self._clip[0], self._clip[1], out=out)
        return out


def _reward_norm_rule(rew_shape: Shape, reward_discount: float, epsilon: float, warmup: int) -> tuple[int, ...]:
    if not 0.0 <= reward_discount <= 1.0:
        raise ConfigError(f"reward_norm needs 0 <= reward_discount <= 1; got {reward_discount!r}")
    _check_epsilon("reward_norm", epsilon)
    _check_warmup("reward_norm", warmup)
    return check_reward_shape("reward_norm", rew_shape)


@register_wrapper("reward_norm")
class RewardNormWrapper(DingRewardWrapper):
    """Divide rewards by the running std of the discounted return; the reward space becomes unbounded float32.

    The discounted return ``G = reward_discount * G + reward`` is kept per env (restarting at every
    reset) and its statistics across episodes in ``return_rms``. The first ``warmup`` rewards pass
    through unchanged. Scalar and vector rewards keep their shape.

    Example:
        >>> rew = spaces.Box(-1.0, 1.0, (1,), np.float32)
        >>> RewardNormWrapper.new_space(spaces.Box(0, 1, (2,)), spaces.Discrete(2), rew)[2]
        Box(-inf, inf, (1,), float32)
    """

    def __init__(
        self, env: gym.Env[Any, Any], reward_discount: float = 0.99, epsilon: float = 1e-4, warmup: int = 30
    ) -> None:
        super().__init__(env)
        self._declare_spaces(reward_discount=reward_discount, epsilon=epsilon, warmup=warmup)
        self.reward_discount = float(reward_discount)
        self.warmup = int(warmup)
        shape = reward_box("reward_norm", self.reward_space).shape
        self.return_rms = RunningMeanStd(epsilon, shape)
        self._return: Array64 = np.zeros(shape, dtype=np.float64)
        self._scalar = shape == (1,)

    @staticmethod
    def new_shape(
        obs_shape: Shape,
        act_shape: Shape,
        rew_shape: Shape,
        reward_discount: float = 0.99,
        epsilon: float = 1e-4,
        warmup: int = 30,
    ) -> ShapeTriple:
        return obs_shape, act_shape, _reward_norm_rule(rew_shape, reward_discount, epsilon, warmup)

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        reward_discount: float = 0.99,
        epsilon: float = 1e-4,
        warmup: int = 30,
    ) -> SpaceTriple:
        box = reward_box("reward_norm", rew_space)
        shape = _reward_norm_rule(box.shape, reward_discount, epsilon, warmup)
        return obs_space, act_space, spaces.Box(-np.inf, np.inf, shape, np.float32)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._return.fill(0.0)
        return self.env.reset(**kwargs)

    def reward(self, reward: Any) -> RewardValue:
        value = np.asarray(reward, dtype=np.float64).reshape(self._return.shape)
        self._return *= self.reward_discount
        self._return += value
        self.return_rms.update(self._return[None])
        if self.return_rms.count > self.warmup:
            value = value / self.return_rms.std
        return as_reward(value, self._scalar)
