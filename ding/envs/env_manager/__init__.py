"""Env managers that run batches of envs: serial, subprocess (sync and async), and their configs."""

from ding.envs.env_manager.async_manager import AsyncSubprocessEnvManager
from ding.envs.env_manager.base_manager import BaseEnvManager, ObsBatch
from ding.envs.env_manager.config import MANAGER_DEFAULT_CONFIGS, manager_default_config
from ding.envs.env_manager.factory import ENV_MANAGER_REGISTRY, create_env_manager
from ding.envs.env_manager.gym_vector import ManagerVectorEnv, make_vector_env
from ding.envs.env_manager.ray_manager import RayEnvManager
from ding.envs.env_manager.ray_shm_manager import RayShmEnvManager
from ding.envs.env_manager.ray_zmq_manager import RayZmqEnvManager
from ding.envs.env_manager.state import EnvState
from ding.envs.env_manager.subprocess_manager import SyncSubprocessEnvManager
from ding.envs.env_manager.zmq_manager import ZmqEnvManager

__all__ = [
    "ENV_MANAGER_REGISTRY",
    "MANAGER_DEFAULT_CONFIGS",
    "AsyncSubprocessEnvManager",
    "BaseEnvManager",
    "EnvState",
    "ManagerVectorEnv",
    "ObsBatch",
    "RayEnvManager",
    "RayShmEnvManager",
    "RayZmqEnvManager",
    "SyncSubprocessEnvManager",
    "ZmqEnvManager",
    "create_env_manager",
    "make_vector_env",
    "manager_default_config",
]
