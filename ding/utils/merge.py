"""Recursive config merges: ``deep_merge_dicts`` (a new dict) and DI-engine's in-place ``deep_update``.

Both run one merge (:func:`_merge_into`); they differ only in their rules: whether new keys are
allowed, whether a dict and a non-dict may replace each other, and DI-engine's ``whitelist`` and
``override_all_if_type_changes``. An unknown key raises
:class:`~ding.errors.UnknownConfigKeyError`, a :class:`~ding.errors.ConfigError` that is also the
``RuntimeError`` DI-engine raises.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Collection, Mapping, MutableMapping
from typing import Any, TypeVar

from ding.errors import ConfigError, UnknownConfigKeyError, did_you_mean

M = TypeVar("M", bound=MutableMapping[Any, Any])


def join_path(path: str, key: object) -> str:
    """The dotted path of ``key`` below ``path`` (``''`` is the top level).

    >>> join_path('env', 'manager'), join_path('', 'env')
    ('env.manager', 'env')
    """
    return f"{path}.{key}" if path else str(key)


def deep_merge_dicts(
    original: Mapping[str, Any], new_dict: Mapping[str, Any] | None, strict: bool = False, path: str = ""
) -> dict[str, Any]:
    """Return a new dict: ``original`` with ``new_dict`` merged in recursively; neither input is modified.

    The result has ``original``'s type (an ``EasyDict`` stays one) and shares no objects with the
    inputs. Without ``strict`` new keys are added (DI-engine's ``deep_merge_dicts``). With
    ``strict`` every key of ``new_dict`` must exist in ``original``, and a dict may not replace a
    non-dict default or be replaced by a non-dict (a default of ``None`` accepts anything). A
    default that is an empty dict ``{}`` is a free-form mapping (such as ``env_kwargs``): it takes
    any keys, at any depth. ``path`` is the dotted location of ``original``, used in error messages.

    Example:
        >>> defaults = {'collector_env_num': 8, 'env_kwargs': {}}
        >>> deep_merge_dicts(defaults, {'env_kwargs': {'gravity': 9.8}}, strict=True)
        {'collector_env_num': 8, 'env_kwargs': {'gravity': 9.8}}
        >>> deep_merge_dicts(defaults, {'colector_env_num': 4}, strict=True, path='env')
        Traceback (most recent call last):
        ...
        ding.errors.UnknownConfigKeyError: unknown config key 'env.colector_env_num'; known keys under 'env': \
collector_env_num, env_kwargs. Did you mean 'collector_env_num'?
    """
    merged = _copy_mapping(original)
    rules = _Rules(new_keys_allowed=not strict, check_kinds=strict, empty_is_free=strict)
    _merge_into(merged, new_dict or {}, rules, path)
    return merged


def deep_update(
    original: M,
    new_dict: Mapping[str, Any],
    new_keys_allowed: bool = False,
    whitelist: Collection[str] | None = None,
    override_all_if_type_changes: Collection[str] | None = None,
) -> M:
    """Update ``original`` in place with ``new_dict``, recursively, and return it (DI-engine's ``deep_update``).

    A key of ``new_dict`` that ``original`` lacks raises :class:`~ding.errors.UnknownConfigKeyError`
    (a ``RuntimeError``) unless ``new_keys_allowed``; below a top-level key listed in
    ``whitelist`` new keys are always allowed. A top-level key listed in
    ``override_all_if_type_changes`` whose ``type`` changes is replaced as a whole. Values are
    copied, so ``original`` shares no objects with ``new_dict``.

    Example:
        >>> cfg = {'learn': {'lr': 0.1}, 'model': {}}
        >>> deep_update(cfg, {'learn': {'lr': 0.01}, 'model': {'hidden': 64}}, whitelist=['model'])
        {'learn': {'lr': 0.01}, 'model': {'hidden': 64}}
        >>> deep_update(cfg, {'learn': {'batch': 32}})
        Traceback (most recent call last):
        ...
        ding.errors.UnknownConfigKeyError: unknown config key 'learn.batch'; known keys under 'learn': lr.
    """
    rules = _Rules(
        new_keys_allowed=new_keys_allowed,
        whitelist=frozenset(whitelist or ()),
        override_if_type_changes=frozenset(override_all_if_type_changes or ()),
    )
    _merge_into(original, new_dict, rules, "")
    return original


@dataclasses.dataclass(frozen=True)
class _Rules:
    """What one merge level allows; ``whitelist`` and ``override_if_type_changes`` apply at the top level only."""

    new_keys_allowed: bool
    check_kinds: bool = False
    empty_is_free: bool = False
    whitelist: frozenset[str] = frozenset()
    override_if_type_changes: frozenset[str] = frozenset()

    def below(self, key: object) -> _Rules:
        return _Rules(self.new_keys_allowed or key in self.whitelist, self.check_kinds, self.empty_is_free)

    def free(self) -> _Rules:
        return _Rules(new_keys_allowed=True)


def _merge_into(target: MutableMapping[Any, Any], new: Mapping[Any, Any], rules: _Rules, path: str) -> None:
    if rules.empty_is_free and not target:
        rules = rules.free()
    known = list(target)
    for key, value in new.items():
        key_path = join_path(path, key)
        if key not in target:
            if not rules.new_keys_allowed:
                raise UnknownConfigKeyError(_unknown_key_message(key, key_path, path, known))
            target[key] = copy.deepcopy(value)
            continue
        default = target[key]
        if isinstance(default, Mapping) and isinstance(value, Mapping):
            if key in rules.override_if_type_changes and _type_changes(default, value):
                target[key] = copy.deepcopy(value)
                continue
            if not isinstance(default, MutableMapping):
                target[key] = _copy_mapping(default)
            _merge_into(target[key], value, rules.below(key), key_path)
            continue
        if rules.check_kinds and default is not None and isinstance(default, Mapping) != isinstance(value, Mapping):
            raise ConfigError(_kind_mismatch_message(key_path, default, value))
        target[key] = copy.deepcopy(value)


def _type_changes(default: Mapping[Any, Any], value: Mapping[Any, Any]) -> bool:
    return "type" in default and "type" in value and default["type"] != value["type"]


def _copy_mapping(original: Mapping[str, Any]) -> Any:
    """A deep copy that keeps a dict's type (``EasyDict`` included); other mappings become dicts."""
    if isinstance(original, dict):
        return copy.deepcopy(original)
    return {key: copy.deepcopy(value) for key, value in original.items()}


def _unknown_key_message(key: object, key_path: str, path: str, original: list[Any]) -> str:
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
