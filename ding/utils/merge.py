"""``deep_merge_dicts``: merge user settings into declared defaults, optionally rejecting unknown keys."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ding.errors import ConfigError, did_you_mean


def join_path(path: str, key: object) -> str:
    """The dotted path of ``key`` below ``path`` (``''`` is the top level).

    >>> join_path('env', 'manager'), join_path('', 'env')
    ('env.manager', 'env')
    """
    return f"{path}.{key}" if path else str(key)


def deep_merge_dicts(
    original: Mapping[str, Any], new_dict: Mapping[str, Any], strict: bool = False, path: str = ""
) -> dict[str, Any]:
    """Return a new dict: ``original`` with ``new_dict`` merged in recursively; neither input is modified.

    With ``strict`` every key of ``new_dict`` must exist in ``original``, and a dict may not replace a
    non-dict default or be replaced by a non-dict (a default of ``None`` accepts anything). A default
    that is an empty dict ``{}`` is a free-form mapping (such as ``env_kwargs``): it takes any keys,
    at any depth. ``path`` is the dotted location of ``original``, used in error messages.

    Example:
        >>> defaults = {'collector_env_num': 8, 'env_kwargs': {}}
        >>> deep_merge_dicts(defaults, {'env_kwargs': {'gravity': 9.8}}, strict=True)
        {'collector_env_num': 8, 'env_kwargs': {'gravity': 9.8}}
        >>> deep_merge_dicts(defaults, {'colector_env_num': 4}, strict=True, path='env')
        Traceback (most recent call last):
        ...
        ding.errors.ConfigError: unknown config key 'env.colector_env_num'; known keys under 'env': \
collector_env_num, env_kwargs. Did you mean 'collector_env_num'?
    """
    strict = strict and len(original) > 0
    merged: dict[str, Any] = {key: copy.deepcopy(value) for key, value in original.items()}
    for key, value in new_dict.items():
        key_path = join_path(path, key)
        if key not in original:
            if strict:
                raise ConfigError(_unknown_key_message(key, key_path, path, original))
            merged[key] = copy.deepcopy(value)
            continue
        default = original[key]
        if isinstance(default, Mapping) and isinstance(value, Mapping):
            merged[key] = deep_merge_dicts(default, value, strict=strict, path=key_path)
            continue
        if strict and default is not None and isinstance(default, Mapping) != isinstance(value, Mapping):
            raise ConfigError(_kind_mismatch_message(key_path, default, value))
        merged[key] = copy.deepcopy(value)
    return merged


def _unknown_key_message(key: object, key_path: str, path: str, original: Mapping[str, Any]) -> str:
    known = sorted(map(str, original))
    where = f"under {path!r}" if path else "at the top level"
    return f"unknown config key {key_path!r}; known keys {where}: {', '.join(known)}.{did_you_mean(str(key), known)}"


def _kind_mismatch_message(key_path: str, default: object, value: object) -> str:
    if isinstance(default, Mapping):
        keys = ", ".join(sorted(map(str, default))) or "any keys"
        return f"config key {key_path!r} must be a dict (of {keys}), got {type(value).__name__} {value!r}"
    return (
        f"config key {key_path!r} cannot be a dict: its default is {default!r} ({type(default).__name__}); "
        f"got {value!r}"
    )
