"""Checks of what callers pass to a manager's ``reset`` and ``step``, before anything is applied.

Errors name the env id, the value received and what is accepted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.env_manager.state import EnvState
from ding.envs.values.conversion import Converter, bounds_check

ResetParam = Mapping[int, Mapping[str, Any] | None] | None
"""Reset kwargs by env id (None: reset every env without kwargs)."""
ReadyIds = Sequence[int] | Callable[[], Sequence[int]]
"""The envs waiting for an action, for error messages: a list, or a function that lists them (called only then)."""


def _listed(ready_ids: ReadyIds) -> list[int]:
    return list(ready_ids() if callable(ready_ids) else ready_ids)


def check_reset_param(reset_param: ResetParam, env_num: int) -> dict[int, dict[str, Any]]:
    """Reset kwargs by env id: every env with none when ``reset_param`` is None; ``None`` kwargs are none.

    >>> check_reset_param({1: None, 0: {'stat': 'x'}}, env_num=2)
    {1: {}, 0: {'stat': 'x'}}
    """
    if reset_param is None:
        return {i: {} for i in range(env_num)}
    if not isinstance(reset_param, Mapping):
        raise TypeError(f"reset_param must be a dict {{env_id: kwargs}}, got {reset_param!r}")
    params = {}
    for env_id, kwargs in reset_param.items():
        if not isinstance(env_id, (int, np.integer)) or not 0 <= env_id < env_num:
            raise ValueError(f"reset_param names env id {env_id!r}; accepted ids: 0..{env_num - 1}")
        if kwargs is not None and not isinstance(kwargs, Mapping):
            raise TypeError(f"reset_param[{env_id}] must be a dict of reset kwargs, got {kwargs!r}")
        params[int(env_id)] = dict(kwargs or {})
    return params


def check_actions(
    actions: Mapping[int, Any],
    ready: Mapping[int, Any],
    ready_ids: ReadyIds,
    states: Mapping[int, EnvState],
    check: Converter | None,
) -> dict[int, Any]:
    """The actions by env id, each passed through ``check`` (None: the envs check their own, as in DI-engine).

    Every env named must be in ``ready`` (waiting for an action).
    """
    if not isinstance(actions, Mapping):
        raise TypeError(f"step() takes a dict {{env_id: action}}, got {type(actions).__name__}")
    if not actions:
        raise ValueError(f"step() got no actions; ready env ids: {_listed(ready_ids)}")
    checked = {}
    for env_id, action in actions.items():
        if env_id not in ready:
            waiting = _listed(ready_ids)
            if isinstance(env_id, (int, np.integer)) and int(env_id) in states:
                state = states[int(env_id)].value
                raise ValueError(f"env {env_id} is not waiting for an action (state {state!r}); ready: {waiting}")
            raise ValueError(f"unknown env id {env_id!r}; ids are 0..{len(states) - 1}, ready: {waiting}")
        if check is None:
            checked[int(env_id)] = action
            continue
        try:
            checked[int(env_id)] = check(action)
        except (TypeError, ValueError) as err:
            raise type(err)(f"env {env_id}: {err}") from None
    return checked


def check_action_rows(
    rows: Any,
    env_ids: Sequence[int],
    space: spaces.Space[Any],
    ready: Mapping[int, Any],
    ready_ids: ReadyIds,
    states: Mapping[int, EnvState],
    check: Converter | None,
    fits: Callable[[np.ndarray], bool] | None = None,
) -> dict[int, Any]:
    """:func:`check_actions` for one action per env id as rows of an array, checked as one array where it can be.

    An integer array in a ``Discrete`` space's range, or an array of rows of a ``Box`` (or multi-discrete, binary)
    space's shape within its bounds, passes with one vectorized check; anything else (a wrong value, dtype or
    shape, a Box action outside the bounds or not finite) goes through ``check`` action by action, so the errors
    (and the clipping of a ``ClippedBox``) are the per-action ones, naming the env id and value. ``fits`` is
    :func:`~ding.envs.values.conversion.bounds_check` of ``space``, when the caller made it once.

    >>> from ding.envs.values.conversion import action_converter
    >>> space = spaces.Discrete(2)
    >>> check = action_converter(space, owner="")
    >>> check_action_rows(np.array([1, 0]), [0, 1], space, {0: 0, 1: 0}, [0, 1], {}, check)
    {0: np.int64(1), 1: np.int64(0)}
    >>> check_action_rows(np.array([1, 2]), [0, 1], space, {0: 0, 1: 0}, [0, 1], {}, check)
    Traceback (most recent call last):
    ...
    ding.errors.ActionError: env 1: action 2 is out of range for Discrete(2) (accepted 0..1)
    >>> box = spaces.Box(-2.0, 2.0, (1,), np.float32)
    >>> check_action_rows(np.array([[1.0], [np.nan]]), [0, 1], box, {0: 0, 1: 0}, [0, 1], {}, action_converter(box, ""))
    Traceback (most recent call last):
    ...
    ding.errors.ActionError: env 1: action array([nan]) is not finite (element 0 is nan); \
Box(-2.0, 2.0, (1,), float32) takes finite values in [-2.0, 2.0]
    """
    arr = rows if isinstance(rows, np.ndarray) else None
    if check is not None and arr is not None and ready.keys() >= set(env_ids):
        fitted = _fit_rows(arr, len(env_ids), space, fits or bounds_check(space))
        if fitted is not None:
            return dict(zip(env_ids, fitted, strict=True))
    return check_actions({env_id: rows[j] for j, env_id in enumerate(env_ids)}, ready, ready_ids, states, check)


def _fit_rows(
    arr: np.ndarray, n: int, space: spaces.Space[Any], fits: Callable[[np.ndarray], bool]
) -> np.ndarray | None:
    """``arr`` as ``n`` valid actions of ``space`` (cast to its dtype), or None when any might not be one.

    Valid is ``fits`` (the space's :func:`~ding.envs.values.conversion.bounds_check`), the check with which the
    converter passes an action unchanged; anything else (NaN, a value past a bound, even one it would clip) goes
    through the converter.
    """
    if isinstance(space, spaces.Discrete):
        if arr.shape != (n,) or arr.dtype.kind not in "iu":
            return None
        return arr if fits(arr) else None
    if isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
        dtype = np.dtype(space.dtype)
        if arr.shape != (n, *space.shape) or (dtype.kind in "iu" and arr.dtype.kind not in "iub"):
            return None
        return arr.astype(dtype, copy=False) if fits(arr) else None
    return None
