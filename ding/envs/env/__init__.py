"""DI-engine's ``ding.envs.env`` import paths, re-exporting ding's env interface.

``BaseEnv``, ``BaseEnvTimestep``, ``DingEnvWrapper``, ``get_vec_env_setting``, ``get_env_cls``,
``get_default_wrappers`` and the env implementation checks (``check_all`` and its parts), each
from the ding module that implements it.
"""

from ding.envs.env.base_env import BaseEnv, BaseEnvTimestep, get_env_cls, get_vec_env_setting
from ding.envs.env.default_wrapper import get_default_wrappers
from ding.envs.env.ding_env_wrapper import DingEnvWrapper
from ding.envs.env.env_implementation_check import (
    check_all,
    check_array_space,
    check_different_memory,
    check_obs_deepcopy,
    check_reset,
    check_space_dtype,
    check_step,
    demonstrate_correct_procedure,
)

__all__ = [
    "BaseEnv",
    "BaseEnvTimestep",
    "DingEnvWrapper",
    "check_all",
    "check_array_space",
    "check_different_memory",
    "check_obs_deepcopy",
    "check_reset",
    "check_space_dtype",
    "check_step",
    "demonstrate_correct_procedure",
    "get_default_wrappers",
    "get_env_cls",
    "get_vec_env_setting",
]
