"""Checks of what callers pass to a manager's ``reset`` and ``step``, before anything is applied.

Errors name the env id, the value received and what is accepted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ding.envs.conversion import Converter
from ding.envs.env_manager.state import EnvState

ResetParam = Mapping[int, Mapping[str, Any] | None] | None
"""Reset kwargs by env id (None: reset every env without kwargs)."""


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
    ready_ids: Sequence[int],
    states: Mapping[int, EnvState],
    check: Converter | None,
) -> dict[int, Any]:
    """The actions by env id, each passed through ``check`` (None: the envs check their own, as in DI-engine).

    Every env named must be in ``ready`` (waiting for an action).
    """
    if not isinstance(actions, Mapping):
        raise TypeError(f"step() takes a dict {{env_id: action}}, got {type(actions).__name__}")
    if not actions:
        raise ValueError(f"step() got no actions; ready env ids: {list(ready_ids)}")
    checked = {}
    waiting = list(ready_ids)
    for env_id, action in actions.items():
        if env_id not in ready:
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
