"""ding's env layer: ``BaseEnv``, ``DingEnvWrapper``, the wrapper collection, env managers and env registries.

It exports what DI-engine's ``ding.envs`` does: the env interface and its checks (see
:mod:`ding.envs.env`), every name of :mod:`ding.envs.env_wrappers` and of
:mod:`ding.envs.env_manager` (whose modules import the env modules by their full names).
"""

from ding.envs import env_manager as _env_manager
from ding.envs import env_wrappers as _env_wrappers
from ding.envs.base_env import BaseEnv
from ding.envs.chained_env import ChainedEnv
from ding.envs.env import (
    check_all,
    check_array_space,
    check_different_memory,
    check_obs_deepcopy,
    check_reset,
    check_space_dtype,
    check_step,
    demonstrate_correct_procedure,
)
from ding.envs.env_manager import *  # noqa: F403  (DI-engine exports every env manager name)
from ding.envs.env_wrappers import *  # noqa: F403  (DI-engine's ding.envs exports every wrapper name)
from ding.envs.gym_env import DingEnvWrapper
from ding.envs.multi_agent import AgentLayout, ParallelEnvWrapper, ParallelEpisodeStatistics, ParallelGymEnv
from ding.envs.registry import ENV_REGISTRY, env_class, get_env_cls, get_vec_env_setting
from ding.envs.spaces import EnvSpaces
from ding.envs.spare_envs import SpareEnvs, SpareEnvsFn, with_spare_envs
from ding.envs.timestep import BaseEnvTimestep

__all__ = [
    "ENV_REGISTRY",
    "AgentLayout",
    "BaseEnv",
    "BaseEnvTimestep",
    "ChainedEnv",
    "DingEnvWrapper",
    "EnvSpaces",
    "ParallelEnvWrapper",
    "ParallelEpisodeStatistics",
    "ParallelGymEnv",
    "SpareEnvs",
    "SpareEnvsFn",
    "check_all",
    "check_array_space",
    "check_different_memory",
    "check_obs_deepcopy",
    "check_reset",
    "check_space_dtype",
    "check_step",
    "demonstrate_correct_procedure",
    "env_class",
    "get_env_cls",
    "get_vec_env_setting",
    "with_spare_envs",
]
__all__ += _env_wrappers.__all__
__all__ += _env_manager.__all__
