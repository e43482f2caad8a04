"""envpool's C++ pools behind ding's manager API (manager type ``envpool``, the ``envpool`` extra)."""

from ding.envs.env_manager.envpool.manager import EnvPoolEnvManager, PoolEnvManager
from ding.envs.env_manager.envpool.spec import pool_spaces, task_options

__all__ = ["EnvPoolEnvManager", "PoolEnvManager", "pool_spaces", "task_options"]
