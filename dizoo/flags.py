"""Checked boolean switches of dizoo env configs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ding.errors import ConfigError


def bool_flag(cfg: Mapping[str, Any], key: str, env_name: str, default: bool = False) -> bool:
    """``cfg[key]`` (``default`` when absent), which must be a real bool.

    >>> bool_flag({"continuous": True}, "continuous", "mountain_car")
    True
    >>> bool_flag({"continuous": 1}, "continuous", "mountain_car")
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: mountain_car: continuous must be True or False, got 1
    """
    value = cfg.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"{env_name}: {key} must be True or False, got {value!r}")
    return value
