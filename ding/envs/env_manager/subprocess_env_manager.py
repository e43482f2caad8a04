"""DI-engine's module ``ding.envs.env_manager.subprocess_env_manager``: the names it defines, from ding's modules."""

from ding.envs.env_manager.shm_buffer import ShmBuffer
from ding.envs.env_manager.subprocess_manager import AsyncSubprocessEnvManager, SyncSubprocessEnvManager
from ding.envs.env_manager.v2 import SubprocessEnvManagerV2

__all__ = ["AsyncSubprocessEnvManager", "ShmBuffer", "SubprocessEnvManagerV2", "SyncSubprocessEnvManager"]
