"""Ding env managers as ``gymnasium.vector.VectorEnv``: :class:`ManagerVectorEnv` and its helpers."""

from ding.envs.env_manager.vector.env_calls import EnvView
from ding.envs.env_manager.vector.passthrough_env import GymnasiumPassthroughEnv, gymnasium_env_fn, vector_env_fn
from ding.envs.env_manager.vector.render import tile_images
from ding.envs.env_manager.vector.vector_env import ManagerVectorEnv, autoreset_mode_of, make_vector_env

__all__ = [
    "EnvView",
    "GymnasiumPassthroughEnv",
    "ManagerVectorEnv",
    "autoreset_mode_of",
    "gymnasium_env_fn",
    "make_vector_env",
    "tile_images",
    "vector_env_fn",
]
