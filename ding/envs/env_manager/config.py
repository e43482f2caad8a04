"""Declared default configs of the env managers, by ``env_manager.type``.

These are the keys ``compile_config`` accepts under ``env.manager``; an unknown key is an error.
"""

from __future__ import annotations

import copy
from typing import Any

from easydict import EasyDict

from ding.errors import UnknownNameError, unknown_name_message

_COMMON: dict[str, Any] = {
    "episode_num": float("inf"),
    "auto_reset": True,
    "max_retry": 1,
    "retry_type": "reset",
    "step_timeout": None,
    "reset_timeout": None,
    "copy_on_get": True,
    "shared_memory": False,
    "context": None,
    "wait_num": None,
    "step_wait_timeout": None,
    "envs_per_worker": 1,
}

_SUBPROCESS: dict[str, Any] = {
    **_COMMON,
    "shared_memory": True,
    "context": "fork",
    "step_timeout": 60.0,
    "reset_timeout": 60.0,
}

MANAGER_DEFAULT_CONFIGS: dict[str, dict[str, Any]] = {
    "base": _COMMON,
    "subprocess": _SUBPROCESS,
    "async_subprocess": {**_SUBPROCESS, "wait_num": 2, "step_wait_timeout": 0.01},
}


def manager_default_config(manager_type: str) -> EasyDict:
    """The declared default config of an env manager type, with ``type`` set.

    >>> manager_default_config('base').auto_reset
    True
    """
    if manager_type not in MANAGER_DEFAULT_CONFIGS:
        raise UnknownNameError(unknown_name_message("env manager", manager_type, MANAGER_DEFAULT_CONFIGS))
    return EasyDict({"type": manager_type, **copy.deepcopy(MANAGER_DEFAULT_CONFIGS[manager_type])})
