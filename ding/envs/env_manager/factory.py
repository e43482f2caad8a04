"""``create_env_manager``: build the manager a config names (DI-engine's registry names included)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ding.envs.env_manager.base_manager import BaseEnvManager
from ding.envs.env_manager.channels.ray.manager import RayEnvManager
from ding.envs.env_manager.channels.ray.transports import ray_transport_class
from ding.envs.env_manager.channels.zmq.manager import ZmqEnvManager
from ding.envs.env_manager.env_fn import EnvFn
from ding.envs.env_manager.envpool.manager import EnvPoolEnvManager
from ding.envs.env_manager.settings import check_import_names
from ding.envs.env_manager.subprocess_manager import AsyncSubprocessEnvManager, SyncSubprocessEnvManager
from ding.envs.env_manager.thread_manager import ThreadEnvManager
from ding.utils.registry import Registry

ENV_MANAGER_REGISTRY: Registry[type[BaseEnvManager]] = Registry("env manager")
"""Manager types by the names configs give them; DI-engine's V2 types register themselves
(:mod:`ding.envs.env_manager.v2`, imported with the package)."""
ENV_MANAGER_REGISTRY.register("base")(BaseEnvManager)
ENV_MANAGER_REGISTRY.register("subprocess")(SyncSubprocessEnvManager)
ENV_MANAGER_REGISTRY.register("async_subprocess")(AsyncSubprocessEnvManager)
ENV_MANAGER_REGISTRY.register("ray")(RayEnvManager)
ENV_MANAGER_REGISTRY.register("zmq")(ZmqEnvManager)
ENV_MANAGER_REGISTRY.register("thread")(ThreadEnvManager)
ENV_MANAGER_REGISTRY.register("envpool")(EnvPoolEnvManager)
ENV_MANAGER_REGISTRY.register("env_pool")(EnvPoolEnvManager)  # DI-engine's name


def get_env_manager_cls(manager_cfg: Mapping[str, Any]) -> type[BaseEnvManager]:
    """The class ``manager_cfg.type`` names (default ``base``), after importing ``manager_cfg.import_names``.

    >>> get_env_manager_cls({'type': 'async_subprocess'}).__name__
    'AsyncSubprocessEnvManager'
    """
    cfg = dict(manager_cfg or {})
    manager_type = cfg.get("type") or "base"
    modules = cfg.get("import_names", [])
    check_import_names(modules)
    ENV_MANAGER_REGISTRY.import_names(modules)
    cls = ENV_MANAGER_REGISTRY.get(manager_type)
    if manager_type == "ray":
        cls = ray_transport_class(cfg.get("transport", RayEnvManager.config["transport"]))
    return cls


def create_env_manager(manager_cfg: Mapping[str, Any], env_fn: Sequence[EnvFn]) -> BaseEnvManager:
    """Build the manager ``manager_cfg.type`` names (default ``base``) over the env constructors ``env_fn``.

    ``import_names`` (modules that register more manager types) are imported first.

    Example:
        >>> from functools import partial
        >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
        >>> manager = create_env_manager({'type': 'base'}, [partial(CartPoleEnv, cfg={})])
        >>> type(manager).__name__, manager.env_num
        ('BaseEnvManager', 1)
    """
    cls = get_env_manager_cls(manager_cfg)
    cfg = {k: v for k, v in dict(manager_cfg or {}).items() if k not in ("type", "import_names")}
    return cls(env_fn, cfg)
