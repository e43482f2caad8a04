"""ding's env layer: ``BaseEnv``, ``DingEnvWrapper``, the wrapper collection, env managers and env registries.

The package by role, each group importing only the groups listed after it:

- the face: this module, exporting what DI-engine's ``ding.envs`` does (the env interface and its checks, every
  name of :mod:`ding.envs.env_wrappers` and of :mod:`ding.envs.env_manager`) and ding's own additions;
- :mod:`ding.envs.checks`: conformance checks of env classes (``check_ding_env``, ``ding -m spec --check``);
- :mod:`ding.envs.builtin`: env types ding registers itself (``multitask``, ``spare_envs``, the unittest envs);
- :mod:`ding.envs.sb3`: stable-baselines3's ``VecEnv`` over any env manager;
- :mod:`ding.envs.env_manager`: env managers, which run batches of envs;
- :mod:`ding.envs.from_config`: the env class a config section names, its wrapper chain included (``ChainedEnv``);
- :mod:`ding.envs.multi_agent`: PettingZoo's parallel envs as ding envs;
- :mod:`ding.envs.probe`: the spaces of envs that do not declare them, read from one built instance;
- :mod:`ding.envs.bridges`: one env between APIs, a module per direction (``from_gymnasium``: ``DingEnvWrapper``;
  ``to_gymnasium``: ``GymnasiumEnv``; ``from_old_gym``: gym's APIs run through gymnasium's);
- the env interface: :mod:`~ding.envs.env_registry` (``ENV_REGISTRY``), :mod:`~ding.envs.base_env` (``BaseEnv``),
  then :mod:`ding.envs.env_wrappers`, then the values an env deals in: :mod:`~ding.envs.spaces`,
  :mod:`~ding.envs.timestep`, :mod:`~ding.envs.seeding`, :mod:`~ding.envs.env_state`,
  :mod:`~ding.envs.conversion` (values cast to and checked against their spaces) and
  :mod:`~ding.envs.conformance` (the rules env values follow).

:mod:`ding.envs.env` holds DI-engine's import paths (``ding.envs.env.base_env`` ...): compatibility only, imported
by no module of ding but this face.
"""

from ding.envs import env_manager as _env_manager
from ding.envs import env_wrappers as _env_wrappers
from ding.envs.base_env import BaseEnv
from ding.envs.bridges.from_gymnasium import DingEnvWrapper
from ding.envs.builtin.spare_envs import SpareEnvs, SpareEnvsFn, with_spare_envs
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
from ding.envs.env.base_env import get_env_cls, get_vec_env_setting
from ding.envs.env_manager import *  # noqa: F403  (DI-engine exports every env manager name)
from ding.envs.env_registry import ENV_REGISTRY
from ding.envs.env_wrappers import *  # noqa: F403  (DI-engine's ding.envs exports every wrapper name)
from ding.envs.from_config import ChainedEnv, env_class
from ding.envs.multi_agent import AgentLayout, ParallelEnvWrapper, ParallelEpisodeStatistics, ParallelGymEnv
from ding.envs.spaces import EnvSpaces
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
