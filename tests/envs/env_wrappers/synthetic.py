"""Synthetic envs built from spaces, for the random-chain property test: they also emit values at their edges.

:class:`EdgeEnv` is a :class:`~tests.envs.env_wrappers.catalogue.CatalogueEnv` whose observations sit on
their Box bounds now and then, and whose rewards are drawn inside the declared reward space, on its
bounds, and just past a float32 bound by less than half an ulp (a float64 reward that is still inside
once held as float32, as a reward space holds it). Episodes are short and lives are reported in
``info['lives']``, so chains cross episode ends and life losses within a few steps.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.values.spaces import DEFAULT_REWARD_SPACE
from tests.envs.env_wrappers.catalogue import CatalogueEnv

EDGE_PROBABILITY = 0.25


class EdgeEnv(CatalogueEnv):
    """A CatalogueEnv whose observations and rewards often lie on the declared edges."""

    def _obs(self) -> Any:
        return self._edge(self.observation_space, self.observation_space.sample())

    def _edge(self, space: spaces.Space[Any], value: Any) -> Any:
        if isinstance(space, spaces.Dict):
            return {key: self._edge(sub, value[key]) for key, sub in space.spaces.items()}
        if isinstance(space, spaces.Tuple):
            return tuple(self._edge(sub, v) for sub, v in zip(space.spaces, value, strict=True))
        if isinstance(space, spaces.Box) and self.np_random.random() < EDGE_PROBABILITY:
            # every element on a finite bound (low or high, drawn per element)
            pick_high = self.np_random.random(space.shape) < 0.5
            edge = np.where(pick_high & space.bounded_above, space.high, space.low)
            edge = np.where(np.isfinite(edge), edge, value)
            return edge.astype(space.dtype)
        return value

    def _reward(self) -> Any:
        box = self.reward_space
        assert isinstance(box, spaces.Box)
        low = np.where(np.isfinite(box.low), box.low, -2.0).astype(np.float64)
        high = np.where(np.isfinite(box.high), box.high, 2.0).astype(np.float64)
        draw = self.np_random.random()
        if draw < 0.15:
            value = high
        elif draw < 0.3:
            value = low
        elif draw < 0.4:
            # past the float32 high bound by less than half an ulp: float32(value) is still the bound
            value = high + 0.45 * np.spacing(high.astype(np.float32)).astype(np.float64)
            value = np.where(np.isfinite(box.high), value, high)
        else:
            value = self.np_random.uniform(low, high)
        if box.shape == (1,):
            return float(value.reshape(-1)[0])
        return value.astype(np.float32)


def _img(shape: tuple[int, ...], dtype: Any = np.uint8, low: Any = 0, high: Any = 255) -> spaces.Box:
    return spaces.Box(low, high, shape=shape, dtype=dtype)


SCALAR = DEFAULT_REWARD_SPACE
BOUNDED = spaces.Box(-1.0, 1.0, (1,), np.float32)
POSITIVE = spaces.Box(0.5, 2.0, (1,), np.float32)  # excludes 0
ODD = spaces.Box(0.0, 0.055, (1,), np.float32)  # a bound float32 cannot hold exactly
VECTOR = spaces.Box(np.float32([-2.0, 0.0, -np.inf]), np.float32([2.0, 0.3, np.inf]), dtype=np.float32)


def _env(obs: spaces.Space[Any], act: spaces.Space[Any], rew: spaces.Box = SCALAR, **kwargs: Any) -> EdgeEnv:
    return EdgeEnv(obs, act, rew, episode_len=kwargs.pop("episode_len", 9), lives=kwargs.pop("lives", 3))


#: name -> factory of a synthetic env. Every one reports lives in ``info``.
SYNTHETIC = {
    "syn_hwc_uint8": lambda: _env(_img((12, 16, 3)), spaces.Discrete(5, start=2), POSITIVE),
    "syn_chw_int16": lambda: _env(_img((3, 9, 14), np.int16, -1000, 1000), spaces.MultiDiscrete([3, 4], start=[-1, 2])),
    "syn_gray_uint16": lambda: _env(_img((10, 13), np.uint16, 0, 65535), spaces.MultiBinary(3), VECTOR),
    "syn_rgba_float": lambda: _env(
        _img((11, 9, 4), np.float32, 0.0, 1.0), spaces.Box(-2.0, 3.0, (2,), np.float32), ODD
    ),
    "syn_one_channel": lambda: _env(_img((8, 10, 1)), spaces.Discrete(4), BOUNDED),
    "syn_vector": lambda: _env(
        spaces.Box(np.float32([-1.0, -np.inf, 0.0]), np.float32([1.0, np.inf, 5.0]), dtype=np.float32),
        spaces.Box(np.float64([-1.0, 0.0]), np.float64([2.0, 10.0]), dtype=np.float64),
        VECTOR,
    ),
    "syn_dict": lambda: _env(
        spaces.Dict(
            {
                "image": _img((10, 12, 3)),
                "depth": _img((10, 12), np.float32, 0.0, 10.0),
                "state": spaces.Dict(
                    {"pos": spaces.Box(-5, 5, (3,), np.float32), "vel": spaces.Box(-1, 1, (2,), np.float64)}
                ),
                "mode": spaces.Discrete(3, start=-1),
            }
        ),
        spaces.Discrete(3),
        ODD,
    ),
    "syn_tuple": lambda: _env(
        spaces.Tuple(
            (
                _img((8, 10, 3)),
                spaces.MultiDiscrete([2, 3], start=[1, -1]),
                spaces.MultiBinary(4),
                spaces.Box(-3, 3, (2, 2), np.float32),
            )
        ),
        spaces.Box(-1.0, 1.0, (3,), np.float32),
        POSITIVE,
    ),
    "syn_scalar_int_action": lambda: _env(
        spaces.Box(-1.0, 1.0, (), np.float32), spaces.Box(-3, 7, (2,), np.int64), BOUNDED, episode_len=5
    ),
    "syn_gradient": lambda: _env(
        spaces.Box(np.zeros((6, 8, 3), np.uint8), (100 + np.arange(144) % 156).reshape(6, 8, 3).astype(np.uint8)),
        spaces.Discrete(2),
        POSITIVE,
    ),
    "syn_tuple_images": lambda: _env(
        spaces.Tuple((_img((8, 10, 3)), _img((6, 7), np.float32, -1.0, 1.0))), spaces.Discrete(3), VECTOR
    ),
    "syn_hybrid": lambda: _env(
        spaces.Box(-1, 1, (6,), np.float32),
        spaces.Tuple((spaces.Discrete(3), spaces.Box(np.float32([0.0, -1.0]), np.float32([1.0, 1.0])))),
        BOUNDED,
    ),
}
