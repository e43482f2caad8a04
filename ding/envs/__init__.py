"""ding's env layer: ``BaseEnv``, ``DingEnvWrapper``, the wrapper collection and env registries."""

from ding.envs.base_env import BaseEnv
from ding.envs.gym_env import DingEnvWrapper
from ding.envs.registry import ENV_REGISTRY, env_class, get_vec_env_setting
from ding.envs.spaces import EnvSpaces
from ding.envs.timestep import BaseEnvTimestep

__all__ = [
    "ENV_REGISTRY",
    "BaseEnv",
    "BaseEnvTimestep",
    "DingEnvWrapper",
    "EnvSpaces",
    "env_class",
    "get_vec_env_setting",
]
