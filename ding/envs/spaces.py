"""Shapes and spaces: the two forms in which ding declares what an env produces.

A *shape* follows DI-engine's conventions and is what models are sized from:

- ``Box`` → ``tuple`` of ints, e.g. ``(4, 84, 84)``;
- ``Discrete(n)`` → ``n`` (an ``int``, the number of actions);
- ``MultiDiscrete(nvec)`` → ``list`` of ints (actions per dimension);
- ``MultiBinary(n)`` → ``(n,)``;
- ``Dict`` → ``dict`` of shapes, ``Tuple`` → ``tuple`` of shapes.

A *space* is the full gymnasium space, with dtype and bounds. :class:`EnvSpaces` bundles the
observation, action and reward spaces of one env.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

Shape = int | tuple[Any, ...] | list[int] | dict[str, Any]

DEFAULT_REWARD_SPACE = spaces.Box(-np.inf, np.inf, shape=(1,), dtype=np.float32)


@dataclasses.dataclass(frozen=True)
class EnvSpaces:
    """The observation, action and reward spaces of one env, as an immutable value.

    Example:
        >>> s = EnvSpaces(spaces.Box(0, 1, (3,)), spaces.Discrete(2))
        >>> s.shapes
        ((3,), 2, (1,))
        >>> s.replace(action=spaces.Discrete(4)).action
        Discrete(4)
    """

    observation: spaces.Space[Any]
    action: spaces.Space[Any]
    reward: spaces.Space[Any] = dataclasses.field(default_factory=lambda: DEFAULT_REWARD_SPACE)

    def replace(self, **changes: spaces.Space[Any]) -> EnvSpaces:
        return dataclasses.replace(self, **changes)

    @property
    def shapes(self) -> tuple[Shape, Shape, Shape]:
        """The DI-engine-style shapes ``(obs_shape, act_shape, rew_shape)``."""
        return space_to_shape(self.observation), space_to_shape(self.action), space_to_shape(self.reward)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter((self.observation, self.action, self.reward))


def space_to_shape(space: spaces.Space[Any]) -> Shape:
    """Return the DI-engine-style shape of a gymnasium space.

    >>> space_to_shape(spaces.Dict({'a': spaces.Box(0, 1, (2,)), 'b': spaces.Discrete(3)}))
    {'a': (2,), 'b': 3}
    """
    if isinstance(space, spaces.Discrete):
        return int(space.n)
    if isinstance(space, spaces.MultiDiscrete):
        return [int(n) for n in np.asarray(space.nvec).reshape(-1)]
    if isinstance(space, spaces.Dict):
        return {key: space_to_shape(sub) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(space_to_shape(sub) for sub in space.spaces)
    if space.shape is None:
        raise TypeError(
            f"space {space!r} has no fixed shape; supported: Box, Discrete, MultiDiscrete, MultiBinary, Dict, Tuple"
        )
    return tuple(int(d) for d in space.shape)


def is_flat_shape(shape: object) -> bool:
    """True for a Box-style shape: a tuple of ints."""
    return isinstance(shape, tuple) and all(isinstance(d, (int, np.integer)) for d in shape)


def shape_to_space(shape: Shape, dtype: Any = np.float32) -> spaces.Space[Any]:
    """Build a placeholder space with the given shape: unbounded Box, Discrete, MultiDiscrete, Dict or Tuple.

    Used to apply a wrapper's space rule when only shapes are known.

    >>> shape_to_space(6)
    Discrete(6)
    >>> shape_to_space((2, 3)).shape
    (2, 3)
    """
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        return spaces.Discrete(int(shape))
    if isinstance(shape, list):
        return spaces.MultiDiscrete(np.asarray(shape, dtype=np.int64))
    if isinstance(shape, Mapping):
        return spaces.Dict({key: shape_to_space(sub, dtype) for key, sub in shape.items()})
    if isinstance(shape, tuple) and is_flat_shape(shape):
        return spaces.Box(-np.inf, np.inf, shape=tuple(int(d) for d in shape), dtype=dtype)
    if isinstance(shape, tuple):
        return spaces.Tuple(tuple(shape_to_space(sub, dtype) for sub in shape))
    raise TypeError(f"cannot interpret {shape!r} as a shape; expected int, tuple, list or dict")


def space_dtype(space: spaces.Space[Any]) -> Any:
    """The dtype of a space, nested like the space for Dict and Tuple."""
    if isinstance(space, spaces.Dict):
        return {key: space_dtype(sub) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(space_dtype(sub) for sub in space.spaces)
    return np.dtype(space.dtype) if space.dtype is not None else None


def space_nbytes(space: spaces.Space[Any]) -> int:
    """Bytes one sample of the space occupies as NumPy arrays (sum over Dict/Tuple leaves)."""
    if isinstance(space, spaces.Dict):
        return sum(space_nbytes(sub) for sub in space.spaces.values())
    if isinstance(space, spaces.Tuple):
        return sum(space_nbytes(sub) for sub in space.spaces)
    if space.shape is None or space.dtype is None:
        raise TypeError(f"space {space!r} has no fixed shape and dtype")
    return int(np.prod(space.shape, dtype=np.int64)) * np.dtype(space.dtype).itemsize


def reward_space_of(env: gym.Env[Any, Any]) -> spaces.Space[Any]:
    """The reward space an env declares, or the DI-engine default ``Box(-inf, inf, (1,), float32)``."""
    space = getattr(env, "reward_space", None)
    if space is None and isinstance(env, gym.Wrapper):
        try:
            space = env.get_wrapper_attr("reward_space")
        except AttributeError:
            space = None
    return space if space is not None else DEFAULT_REWARD_SPACE


def float32_space(space: spaces.Space[Any]) -> spaces.Space[Any]:
    """Return the space with every Box leaf cast to float32 (DI-engine's observation convention)."""
    if isinstance(space, spaces.Dict):
        return spaces.Dict({key: float32_space(sub) for key, sub in space.spaces.items()})
    if isinstance(space, spaces.Tuple):
        return spaces.Tuple(tuple(float32_space(sub) for sub in space.spaces))
    if isinstance(space, spaces.Box) and space.dtype != np.float32:
        return spaces.Box(space.low.astype(np.float32), space.high.astype(np.float32), dtype=np.float32)
    return space
