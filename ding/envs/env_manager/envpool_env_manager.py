"""DI-engine's module ``ding.envs.env_manager.envpool_env_manager``: ``PoolEnvManager``, from ding's modules."""

from ding.envs.env_manager.envpool.manager import EnvPoolEnvManager, PoolEnvManager

__all__ = ["EnvPoolEnvManager", "PoolEnvManager"]
