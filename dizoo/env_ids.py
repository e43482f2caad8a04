"""The ``env_id`` check of dizoo envs: one supported id list per suite, checked before anything is built.

An id that is not supported raises :class:`~ding.errors.ConfigError` listing the supported ids with a close match.
DI-engine's configs name some envs by an older gym version of an id gymnasium still has under a newer version
(``'LunarLander-v2'``, ``'Hopper-v3'``, ``'Pendulum-v0'``); such an id is not mapped, since the versions can differ
in dynamics or spaces, and the error names the version to use instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ding.errors import ConfigError, unknown_name_message
from dizoo.flags import bool_flag


def _name_and_version(env_id: str) -> tuple[str, str]:
    """``('Pendulum', '1')`` for gymnasium's ``'Pendulum-v1'``, ``('simple_spread', '3')`` for PettingZoo's ids."""
    for separator in ("-v", "_v"):
        name, sep, version = env_id.rpartition(separator)
        if sep and version.isdigit():
            return name, version
    return env_id, ""


def check_env_id(env_id: Any, supported: Iterable[str], suite: str) -> str:
    """Return ``env_id`` when ``suite`` supports it, else raise ConfigError naming the supported ids.

    Example:
        >>> check_env_id('Pendulum-v1', ['Pendulum-v1'], 'pendulum')
        'Pendulum-v1'
        >>> check_env_id('Pendulum-v0', ['Pendulum-v1'], 'pendulum')
        Traceback (most recent call last):
        ...
        ding.errors.ConfigError: pendulum: env_id 'Pendulum-v0' is not a version of Pendulum that ding supports; \
the current one is 'Pendulum-v1': set env_id='Pendulum-v1' (supported: Pendulum-v1)
        >>> check_env_id('Pendlum-v1', ['Pendulum-v1'], 'pendulum')
        Traceback (most recent call last):
        ...
        ding.errors.ConfigError: pendulum: unknown env_id 'Pendlum-v1'; known: Pendulum-v1. Did you mean 'Pendulum-v1'?
    """
    known = list(supported)
    if isinstance(env_id, str) and env_id in known:
        return env_id
    if isinstance(env_id, str):
        name = _name_and_version(env_id)[0]
        newer = [candidate for candidate in known if _name_and_version(candidate)[0] == name]
        if newer:
            return _raise_renamed(env_id, newer[-1], known, suite)
    raise ConfigError(f"{suite}: {unknown_name_message('env_id', env_id, known)}")


def _raise_renamed(env_id: str, current: str, known: list[str], suite: str) -> str:
    raise ConfigError(
        f"{suite}: env_id {env_id!r} is not a version of {_name_and_version(current)[0]} that ding supports; "
        f"the current one is {current!r}: set env_id={current!r} (supported: {', '.join(sorted(known))})"
    )


def resolve_variant(cfg: Mapping[str, Any], flag: str, variants: Mapping[str, bool], suite: str) -> tuple[str, bool]:
    """The env id and the value of ``flag`` for a suite whose ids name two variants (discrete / continuous, ...).

    ``variants`` maps each supported id to the flag value it stands for, the False id first. ``env_id`` None
    takes the id of ``cfg[flag]`` (False when that is None too); ``flag`` None takes the value of ``env_id``;
    both given must agree.

    Example:
        >>> ids = {'LunarLander-v3': False, 'LunarLanderContinuous-v3': True}
        >>> resolve_variant({'env_id': 'LunarLanderContinuous-v3'}, 'continuous', ids, 'lunarlander')
        ('LunarLanderContinuous-v3', True)
        >>> resolve_variant({'continuous': True}, 'continuous', ids, 'lunarlander')
        ('LunarLanderContinuous-v3', True)
        >>> resolve_variant({'env_id': 'LunarLander-v3', 'continuous': True}, 'continuous', ids, 'lunarlander')
        Traceback (most recent call last):
        ...
        ding.errors.ConfigError: lunarlander: env_id 'LunarLander-v3' is the continuous=False variant, but \
continuous=True; set env_id='LunarLanderContinuous-v3' or leave one of the two out
    """
    value = None if cfg.get(flag) is None else bool_flag(cfg, flag, suite)
    env_id = cfg.get("env_id")
    if env_id is None:
        chosen = bool(value)
        return next(key for key, is_set in variants.items() if is_set == chosen), chosen
    check_env_id(env_id, variants, suite)
    if value is not None and value != variants[env_id]:
        other = next(key for key, is_set in variants.items() if is_set == value)
        raise ConfigError(
            f"{suite}: env_id {env_id!r} is the {flag}={variants[env_id]} variant, but {flag}={value}; "
            f"set env_id={other!r} or leave one of the two out"
        )
    return env_id, variants[env_id]
