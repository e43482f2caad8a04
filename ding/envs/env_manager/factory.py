"""``create_env_manager``: build the manager a config names."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ding.envs.env_manager.async_manager import AsyncSubprocessEnvManager
from ding.envs.env_manager.base_manager import BaseEnvManager
from ding.envs.env_manager.config import MANAGER_DEFAULT_CONFIGS
from ding.envs.env_manager.env_fn import EnvFn
from ding.envs.env_manager.ray_manager import RayEnvManager
from ding.envs.env_manager.ray_transports import ray_transport_class
from ding.envs.env_manager.subprocess_manager import SyncSubprocessEnvManager
from ding.envs.env_manager.zmq_manager import ZmqEnvManager
from ding.utils.registry import Registry

ENV_MANAGER_REGISTRY: Registry[type[BaseEnvManager]] = Registry("env manager")
ENV_MANAGER_REGISTRY.register("base")(BaseEnvManager)
ENV_MANAGER_REGISTRY.register("subprocess")(SyncSubprocessEnvManager)
ENV_MANAGER_REGISTRY.register("async_subprocess")(AsyncSubprocessEnvManager)
ENV_MANAGER_REGISTRY.register("ray")(RayEnvManager)
ENV_MANAGER_REGISTRY.register("zmq")(ZmqEnvManager)


def create_env_manager(manager_cfg: Mapping[str, Any], env_fns: Sequence[EnvFn]) -> BaseEnvManager:
    """Build the manager ``manager_cfg.type`` names (default ``base``) over ``env_fns``.

    Example:
        >>> from functools import partial
        >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
        >>> manager = create_env_manager({'type': 'base'}, [partial(CartPoleEnv, cfg={})])
        >>> type(manager).__name__, manager.env_num
        ('BaseEnvManager', 1)
    """
    cfg = dict(manager_cfg or {})
    manager_type = cfg.pop("type", None) or "base"
    cls = ENV_MANAGER_REGISTRY.get(manager_type)
    if manager_type == "ray":
        cls = ray_transport_class(cfg.get("transport", MANAGER_DEFAULT_CONFIGS["ray"]["transport"]))
    return cls(env_fns, cfg)
