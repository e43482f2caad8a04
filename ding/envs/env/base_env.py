"""DI-engine's ``ding.envs.env.base_env``: the env interface, its timestep and the config-to-env helpers."""

from ding.envs.base_env import BaseEnv
from ding.envs.registry import get_env_cls, get_vec_env_setting
from ding.envs.timestep import BaseEnvTimestep

__all__ = ["BaseEnv", "BaseEnvTimestep", "get_env_cls", "get_vec_env_setting"]
