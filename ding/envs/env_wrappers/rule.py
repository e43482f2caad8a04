"""Helpers shared by the space rules: naming a space in an error, requiring a kind of space.

A rule applied ahead of time from shapes only (``new_shape``, ``update_shape``) sees placeholder
spaces (:func:`ding.envs.values.spaces.is_placeholder`): their dtype, bounds and Discrete ``start`` are
unknown, so a rule checks those only on real spaces and never rejects a chain for them.
"""

from __future__ import annotations

from typing import Any

from gymnasium import spaces

from ding.envs.values.spaces import is_placeholder, space_to_shape
from ding.errors import SpaceKindError

_KINDS = (
    (spaces.Box, "Box"),
    (spaces.Discrete, "Discrete"),
    (spaces.MultiDiscrete, "MultiDiscrete"),
    (spaces.MultiBinary, "MultiBinary"),
    (spaces.Dict, "Dict"),
    (spaces.Tuple, "Tuple"),
)


def space_kind(space: spaces.Space[Any]) -> str:
    """The kind of a space: ``"Box"``, ``"Discrete"``, ... (the class name for others)."""
    return next((name for cls, name in _KINDS if isinstance(space, cls)), type(space).__name__)


def only_placeholders(space: spaces.Space[Any]) -> bool:
    """True when every leaf of ``space`` is a placeholder: the space was built from a shape alone."""
    if isinstance(space, spaces.Dict):
        return all(only_placeholders(sub) for sub in space.spaces.values())
    if isinstance(space, spaces.Tuple):
        return all(only_placeholders(sub) for sub in space.spaces)
    return is_placeholder(space)


def describe_space(space: spaces.Space[Any], what: str = "") -> str:
    """A space as an error names it: the space itself, or, when it was built from a shape alone,
    ``"<what> shape <shape> (<kind>)"`` (the shape the caller gave).

    >>> from ding.envs.values.spaces import shape_to_space
    >>> describe_space(shape_to_space((2,)), 'action'), describe_space(spaces.Discrete(3, start=1), 'action')
    ('action shape (2,) (Box)', 'Discrete(3, start=1)')
    """
    if only_placeholders(space):
        prefix = f"{what} " if what else ""
        return f"{prefix}shape {space_to_shape(space)!r} ({space_kind(space)})"
    return str(space)


def require_box(space: spaces.Space[Any], who: str, what: str) -> spaces.Box:
    """``space`` if it is a Box, else a :class:`SpaceKindError`: ``"<who> needs a Box <what>; got <the space>"``."""
    if not isinstance(space, spaces.Box):
        raise SpaceKindError(f"{who} needs a Box {what}; got {describe_space(space, what)}")
    return space
