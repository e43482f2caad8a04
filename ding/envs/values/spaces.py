"""Shapes and spaces: the two forms in which ding declares what an env produces.

A *shape* follows DI-engine's conventions and is what models are sized from:

- ``Box`` → ``tuple`` of ints, e.g. ``(4, 84, 84)``;
- ``Discrete(n)`` → ``n`` (an ``int``, the number of actions);
- ``MultiDiscrete(nvec)`` → ``list`` of ints (actions per dimension);
- ``MultiBinary(n)`` → ``(n,)``;
- ``Dict`` → ``dict`` of shapes, ``Tuple`` → :class:`TupleShape` of shapes (a ``tuple`` that is
  never read as a Box shape, so a Tuple of Discretes is told apart from a Box).

A *space* is the full gymnasium space, with dtype and bounds. :class:`EnvSpaces` bundles the
observation, action and reward spaces of one env. :func:`shape_to_space` builds *placeholder*
spaces from shapes: their dtype, bounds and Discrete ``start`` are unknown (:func:`is_placeholder`).
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


class TupleShape(tuple):  # type: ignore[type-arg]
    """The shape of a Tuple space: a tuple of its parts' shapes, equal to the plain tuple.

    A plain tuple of ints is a Box shape; this subclass keeps ``Tuple(Discrete(2), Discrete(3))``
    from being read as ``Box((2, 3))``.

    >>> shape = space_to_shape(spaces.Tuple((spaces.Discrete(2), spaces.Discrete(3))))
    >>> shape == (2, 3), is_flat_shape(shape), is_flat_shape((2, 3))
    (True, False, True)
    """

    __slots__ = ()


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
        return TupleShape(space_to_shape(sub) for sub in space.spaces)
    if space.shape is None:
        raise TypeError(
            f"space {space!r} has no fixed shape; supported: Box, Discrete, MultiDiscrete, MultiBinary, Dict, Tuple"
        )
    return tuple(int(d) for d in space.shape)


def is_flat_shape(shape: object) -> bool:
    """True for a Box-style shape: a tuple of ints (a :class:`TupleShape` never is one)."""
    return (
        isinstance(shape, tuple)
        and not isinstance(shape, TupleShape)
        and all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in shape)
    )


class PlaceholderBox(spaces.Box):
    """A Box known only by its shape: its dtype (float32 here) and bounds (unbounded here) are unknown."""


class PlaceholderDiscrete(spaces.Discrete):
    """A Discrete known only by its number of actions: its ``start`` is unknown."""


class PlaceholderMultiDiscrete(spaces.MultiDiscrete):
    """A MultiDiscrete known only by its ``nvec``: its ``start`` is unknown."""


_PLACEHOLDERS = (PlaceholderBox, PlaceholderDiscrete, PlaceholderMultiDiscrete)


def is_placeholder(space: spaces.Space[Any]) -> bool:
    """True for a leaf space built by :func:`shape_to_space`, whose dtype, bounds and start are unknown.

    >>> is_placeholder(shape_to_space((3,))), is_placeholder(spaces.Box(-1, 1, (3,)))
    (True, False)
    """
    return isinstance(space, _PLACEHOLDERS)


def shape_to_space(shape: Shape, dtype: Any = np.float32) -> spaces.Space[Any]:
    """Build a placeholder space with the given shape: unbounded Box, Discrete, MultiDiscrete, Dict or Tuple.

    Used to apply a wrapper's space rule when only shapes are known; the leaves are placeholders
    (:func:`is_placeholder`), so a rule can tell what it does not know.

    >>> shape_to_space(6)
    Discrete(6)
    >>> shape_to_space((2, 3)).shape
    (2, 3)
    """
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        return PlaceholderDiscrete(int(shape))
    if isinstance(shape, list):
        return PlaceholderMultiDiscrete(np.asarray(shape, dtype=np.int64))
    if isinstance(shape, Mapping):
        return spaces.Dict({key: shape_to_space(sub, dtype) for key, sub in shape.items()})
    if is_flat_shape(shape):
        return PlaceholderBox(-np.inf, np.inf, shape=tuple(int(d) for d in shape), dtype=dtype)  # type: ignore[union-attr]
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
