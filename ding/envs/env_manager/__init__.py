"""Env managers that run batches of envs (serial, subprocess, async); their config declarations."""

from ding.envs.env_manager.base_manager import BaseEnvManager, ObsBatch
from ding.envs.env_manager.config import MANAGER_DEFAULT_CONFIGS, manager_default_config
from ding.envs.env_manager.state import EnvState

__all__ = ["MANAGER_DEFAULT_CONFIGS", "BaseEnvManager", "EnvState", "ObsBatch", "manager_default_config"]
