"""dm_control suite envs; importing this package picks a headless ``MUJOCO_GL`` backend before dm_control loads."""

from dizoo.mujoco.gl import use_headless_gl

use_headless_gl()

from dizoo.dmc.envs.dmc_adapter import DMCAdapter, dmc_spaces  # noqa: E402
from dizoo.dmc.envs.dmc_env import DMCEnv  # noqa: E402

__all__ = ["DMCAdapter", "DMCEnv", "dmc_spaces"]
