"""``ENV_REGISTRY``: the env classes a config names by ``env.type``.

An env module registers its class with ``@ENV_REGISTRY.register('name')``; a config names the class by that name and
lists the module in ``env.import_names``. :func:`ding.envs.from_config.env_class` looks a config's class up.
"""

from __future__ import annotations

from typing import Any

from ding.envs.base_env import BaseEnv
from ding.utils.registry import Registry


def _check_env_class(name: str, cls: Any) -> None:
    if not (isinstance(cls, type) and issubclass(cls, BaseEnv)):
        raise TypeError(f"env {name!r} must be a BaseEnv subclass, got {cls!r}")


ENV_REGISTRY: Registry[type[BaseEnv]] = Registry("env", validator=_check_env_class)
"""Env classes by name; a class must be a ``BaseEnv`` subclass."""
