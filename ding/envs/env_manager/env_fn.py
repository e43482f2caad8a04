"""What a manager can learn about its envs from their constructors alone."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from typing import Any

from ding.envs.base_env import BaseEnv
from ding.envs.values.spaces import EnvSpaces
from ding.errors import EnvSpecError

EnvFn = Callable[[], Any]


def declared_spaces(env_fn: EnvFn) -> EnvSpaces | None:
    """The spaces an env constructor will produce, if they can be known without calling it.

    Recognised: ``functools.partial(SomeBaseEnv, ...)`` whose arguments tell the config
    (``BaseEnv.config_of_call``: ``cfg``, and for ``DingEnvWrapper`` also ``caller``), a ``BaseEnv``
    subclass itself (its default config), and any callable carrying an ``env_spaces`` attribute (an
    :class:`EnvSpaces`). A ``BaseEnv`` subclass that does not declare its spaces (DI-engine's style)
    gives None.
    """
    spaces = getattr(env_fn, "env_spaces", None)
    if isinstance(spaces, EnvSpaces):
        return spaces
    cls = env_class_of(env_fn)
    if cls is None or not issubclass(cls, BaseEnv) or not cls.declares_spaces():
        return None
    if isinstance(env_fn, functools.partial):
        cfg = cls.config_of_call(env_fn.args, env_fn.keywords)
        return None if cfg is None else cls.spaces_from_config(cfg)
    return cls.spaces_from_config({})


def env_class_of(env_fn: EnvFn) -> type | None:
    """The class an env constructor builds, when it is a class or a ``functools.partial`` of one."""
    if isinstance(env_fn, functools.partial):
        env_fn = env_fn.func
    return env_fn if isinstance(env_fn, type) else None


def common_spaces(env_fns: Sequence[EnvFn]) -> EnvSpaces | None:
    """The spaces shared by every env constructor, or None when any of them cannot be known statically.

    Raises :class:`EnvSpecError` when two constructors declare different spaces (a batch needs one layout).
    """
    found = [declared_spaces(fn) for fn in env_fns]
    if not found or any(spaces is None for spaces in found):
        return None
    first = found[0]
    for env_id, spaces in enumerate(found):
        if spaces != first:
            raise EnvSpecError(f"env {env_id} declares spaces {spaces}, but env 0 declares {first}; a batch needs one")
    return first


def build_env(env_fn: EnvFn, env_id: int) -> Any:
    """``env_fn()``, refusing an env that steps a batch natively (``batched``): a manager runs single envs.

    >>> build_env(lambda: 'an env', 0)
    'an env'
    """
    env = env_fn()
    if getattr(env, "batched", False) is True:
        size = getattr(env, "batch_size", None)
        with contextlib.suppress(Exception):  # refused either way; a failing close must not hide why
            env.close()
        raise EnvSpecError(
            f"env {env_id} ({type(env).__name__}) steps a batch of {size} sub-envs natively (batched=True), but an "
            "env manager runs single envs: step the batched env directly, or give the manager one env per sub-env"
        )
    return env
