"""Gymnasium's MuJoCo locomotion envs; importing this package picks a headless ``MUJOCO_GL`` backend."""

from dizoo.mujoco.envs.mujoco_disc_env import MujocoDiscEnv
from dizoo.mujoco.envs.mujoco_env import MUJOCO_ENVS, MujocoEnv, mujoco_raw_spaces

__all__ = ["MUJOCO_ENVS", "MujocoDiscEnv", "MujocoEnv", "mujoco_raw_spaces"]
