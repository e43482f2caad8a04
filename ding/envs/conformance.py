"""The rules ding's env values follow, each as a function that says why a value breaks it (None: it does not).

- :func:`check_value_in_space`: a value lies in its space leaf by leaf, with the space's exact shape, dtype and
  bounds (a Discrete value may be an int or a one-element integer array);
- :func:`episode_end_problem`: the ``info`` of an episode's last step carries ``eval_episode_return``;
- :func:`space_dtype_problem`: float leaves of a space are float32 and integer leaves int64 (DI-engine's dtype rule).

The env checks (:mod:`ding.envs.checks.env_checker`, DI-engine's :mod:`ding.envs.env.env_implementation_check`), the
space check of ``ding -m spec --check`` and the transformers wrapper apply them and raise
:class:`~ding.errors.EnvConformanceError` with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces


def check_value_in_space(value: Any, space: spaces.Space[Any], what: str) -> str | None:
    """Why ``value`` does not fit ``space`` leaf by leaf (exact shape, dtype and bounds), or None if it does.

    >>> check_value_in_space(np.zeros(2, np.float32), spaces.Box(0, 1, (2,)), 'obs') is None
    True
    >>> check_value_in_space(np.zeros(3, np.float64), spaces.Box(0, 1, (2,)), 'obs')
    'obs: shape (3,), declared (2,)'
    """
    if isinstance(space, spaces.Dict):
        if not isinstance(value, Mapping) or set(value) != set(space.spaces):
            keys = sorted(value) if isinstance(value, Mapping) else type(value).__name__
            return f"{what}: keys {keys}, declared {sorted(space.spaces)}"
        for key, sub in space.spaces.items():
            reason = check_value_in_space(value[key], sub, f"{what}.{key}")
            if reason:
                return reason
        return None
    if isinstance(space, spaces.Tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(space.spaces):
            return f"{what}: not a sequence of {len(space.spaces)} items"
        for i, sub in enumerate(space.spaces):
            reason = check_value_in_space(value[i], sub, f"{what}[{i}]")
            if reason:
                return reason
        return None
    try:
        arr = np.asarray(value)
    except ValueError:  # a ragged nesting of sequences
        return f"{what}: {type(value).__name__} is not an array"
    if isinstance(space, spaces.Discrete):  # an int, or a one-element integer array (DI-engine's form)
        if arr.size != 1 or arr.dtype.kind not in "iu" or not space.contains(int(arr.reshape(()))):
            return f"{what}: {value!r} is not in {space}"
        return None
    if arr.shape != space.shape:
        return f"{what}: shape {arr.shape}, declared {space.shape}"
    if arr.dtype != space.dtype:
        return f"{what}: dtype {arr.dtype}, declared {space.dtype}"
    if not space.contains(arr):
        return f"{what}: value outside the declared {space}{_first_outside(arr, space)}"
    return None


def _first_outside(arr: np.ndarray, space: spaces.Space[Any]) -> str:
    """``": element 2 is 5.0, outside [0.0, 1.0]"`` for the first element of a Box value out of its bounds ('' else)."""
    if not isinstance(space, spaces.Box) or arr.shape != space.shape:
        return ""
    outside = ~((arr >= space.low) & (arr <= space.high))  # NaN is outside too
    if not outside.any():
        return ""
    flat = int(np.flatnonzero(outside)[0])
    index = np.unravel_index(flat, arr.shape) if arr.ndim else ()
    low, high = np.broadcast_to(space.low, arr.shape)[index], np.broadcast_to(space.high, arr.shape)[index]
    where = "the value" if arr.ndim == 0 else f"element {index[0] if arr.ndim == 1 else tuple(map(int, index))}"
    return f": {where} is {arr[index]}, outside [{low}, {high}]"


def episode_end_problem(info: Mapping[str, Any]) -> str | None:
    """Why the ``info`` of an episode's last step breaks ding's rule, or None: it must hold ``eval_episode_return``.

    >>> episode_end_problem({'eval_episode_return': 1.0}) is None
    True
    """
    if "eval_episode_return" not in info:
        return f"info lacks 'eval_episode_return': keys {sorted(info)}"
    return None


def space_dtype_problem(space: spaces.Space[Any], what: str) -> str | None:
    """Why a space breaks DI-engine's dtype rule, or None: float leaves are float32, integer leaves int64.

    Dict and Tuple spaces are checked leaf by leaf; bool leaves are allowed.

    >>> space_dtype_problem(spaces.Dict({'a': spaces.Box(0, 1, (2,), np.float64)}), 'obs')
    'obs.a: dtype float64; float spaces must be float32'
    """
    if isinstance(space, spaces.Dict):
        found = (space_dtype_problem(sub, f"{what}.{key}") for key, sub in space.spaces.items())
        return next((reason for reason in found if reason), None)
    if isinstance(space, spaces.Tuple):
        found = (space_dtype_problem(sub, f"{what}[{i}]") for i, sub in enumerate(space.spaces))
        return next((reason for reason in found if reason), None)
    dtype = None if space.dtype is None else np.dtype(space.dtype)
    if dtype is not None and dtype.kind == "f" and dtype != np.float32:
        return f"{what}: dtype {dtype}; float spaces must be float32"
    if dtype is not None and dtype.kind in "iu" and dtype != np.int64:
        return f"{what}: dtype {dtype}; integer spaces must be int64"
    return None
