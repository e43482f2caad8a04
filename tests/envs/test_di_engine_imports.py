"""DI-engine's import paths for the env layer: ``ding.envs.env.*`` and what ``ding.envs`` exports."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import ding.envs
from ding.envs import env_manager, env_wrappers
from ding.envs.base_env import BaseEnv
from ding.envs.bridges.from_gymnasium import DingEnvWrapper
from ding.envs.timestep import BaseEnvTimestep

# name -> module of DI-engine 0.5.3's ding.envs.env package that defines it
ENV_PACKAGE = {
    "BaseEnv": "base_env",
    "BaseEnvTimestep": "base_env",
    "get_vec_env_setting": "base_env",
    "get_env_cls": "base_env",
    "DingEnvWrapper": "ding_env_wrapper",
    "get_default_wrappers": "default_wrapper",
    "check_space_dtype": "env_implementation_check",
    "check_array_space": "env_implementation_check",
    "check_reset": "env_implementation_check",
    "check_step": "env_implementation_check",
    "check_different_memory": "env_implementation_check",
    "check_obs_deepcopy": "env_implementation_check",
    "check_all": "env_implementation_check",
    "demonstrate_correct_procedure": "env_implementation_check",
}

# what DI-engine's own code, its dizoo env files and its users import from ding.envs
FROM_DING_ENVS = [
    *ENV_PACKAGE,
    "BaseEnvManager",
    "BaseEnvManagerV2",
    "SubprocessEnvManagerV2",
    "get_env_manager_cls",
    "SyncSubprocessEnvManager",
    "AsyncSubprocessEnvManager",
    "create_env_manager",
    "update_shape",
    "EvalEpisodeReturnWrapper",
    "FrameStackWrapper",
    "WarpFrameWrapper",
    "ObsNormWrapper",
    "RewardNormWrapper",
    "NoopResetWrapper",
    "MaxAndSkipWrapper",
    "FireResetWrapper",
    "EpisodicLifeWrapper",
    "DelayRewardWrapper",
    "ObsPlusPrevActRewWrapper",
    "AllinObsWrapper",
]


@pytest.mark.parametrize(("name", "module"), sorted(ENV_PACKAGE.items()))
def test_ding_envs_env_modules_re_export_ding_objects(name: str, module: str) -> None:
    package = importlib.import_module("ding.envs.env")
    submodule = importlib.import_module(f"ding.envs.env.{module}")
    assert getattr(submodule, name) is getattr(package, name) is getattr(ding.envs, name)


def test_they_are_ding_objects_not_copies() -> None:
    from ding.envs.env import BaseEnv as EnvBaseEnv
    from ding.envs.env import BaseEnvTimestep as EnvTimestep
    from ding.envs.env import DingEnvWrapper as EnvWrapper
    from ding.envs.env import get_default_wrappers

    assert (EnvBaseEnv, EnvTimestep, EnvWrapper) == (BaseEnv, BaseEnvTimestep, DingEnvWrapper)
    assert get_default_wrappers is env_wrappers.get_default_wrappers


def test_ding_envs_exports_di_engines_names_and_every_wrapper_and_manager_name() -> None:
    missing = [name for name in FROM_DING_ENVS if name not in ding.envs.__all__]
    assert missing == []
    for module in (env_wrappers, env_manager):
        assert [name for name in module.__all__ if getattr(ding.envs, name) is not getattr(module, name)] == []
    assert len(ding.envs.__all__) == len(set(ding.envs.__all__))


def test_star_import_and_any_import_order_work() -> None:
    for first in ("ding.envs.env_manager", "ding.envs.env.base_env", "ding.envs.env", "ding.config", "ding.utils"):
        code = f"import {first}\nfrom ding.envs import *\nassert DingEnvWrapper and BaseEnvManager and check_all"
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert result.returncode == 0, (first, result.stderr)
