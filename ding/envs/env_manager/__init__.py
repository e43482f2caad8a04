"""Env managers that run batches of envs: serial, threads, subprocess (sync, async), zmq, Ray, envpool; their configs.

DI-engine's module names work too: ``base_env_manager``, ``subprocess_env_manager`` and ``envpool_env_manager``.
"""

from ding.envs.env_manager.base_manager import BaseEnvManager
from ding.envs.env_manager.batch import BatchTimestep, ObsBatch
from ding.envs.env_manager.channels.ray.manager import RayEnvManager, RayShmEnvManager
from ding.envs.env_manager.channels.zmq.manager import ZmqEnvManager
from ding.envs.env_manager.channels.zmq.ray_manager import RayZmqEnvManager
from ding.envs.env_manager.config import manager_default_config
from ding.envs.env_manager.envpool import EnvPoolEnvManager, PoolEnvManager
from ding.envs.env_manager.factory import ENV_MANAGER_REGISTRY, create_env_manager, get_env_manager_cls
from ding.envs.env_manager.shm_buffer import ShmBuffer
from ding.envs.env_manager.state import EnvState
from ding.envs.env_manager.subprocess_manager import AsyncSubprocessEnvManager, SyncSubprocessEnvManager
from ding.envs.env_manager.thread_manager import ThreadEnvManager
from ding.envs.env_manager.v2 import BaseEnvManagerV2, SubprocessEnvManagerV2
from ding.envs.env_manager.vector import ManagerVectorEnv, make_vector_env

__all__ = [
    "ENV_MANAGER_REGISTRY",
    "AsyncSubprocessEnvManager",
    "BaseEnvManager",
    "BaseEnvManagerV2",
    "BatchTimestep",
    "EnvPoolEnvManager",
    "EnvState",
    "ManagerVectorEnv",
    "ObsBatch",
    "PoolEnvManager",
    "RayEnvManager",
    "RayShmEnvManager",
    "RayZmqEnvManager",
    "ShmBuffer",
    "SubprocessEnvManagerV2",
    "SyncSubprocessEnvManager",
    "ThreadEnvManager",
    "ZmqEnvManager",
    "create_env_manager",
    "get_env_manager_cls",
    "make_vector_env",
    "manager_default_config",
]
