from .cartpole_swingup_pixels_ppo_config import (
    cartpole_swingup_pixels_ppo_config,
    cartpole_swingup_pixels_ppo_create_config,
)
from .cartpole_swingup_pixels_sac_config import (
    cartpole_swingup_pixels_sac_config,
    cartpole_swingup_pixels_sac_create_config,
)
from .cartpole_swingup_sac_config import cartpole_swingup_sac_config, cartpole_swingup_sac_create_config
from .cheetah_run_pixels_sac_config import cheetah_run_pixels_sac_config, cheetah_run_pixels_sac_create_config
from .cheetah_run_sac_config import cheetah_run_sac_config, cheetah_run_sac_create_config
from .walker_walk_pixels_sac_config import walker_walk_pixels_sac_config, walker_walk_pixels_sac_create_config
from .walker_walk_sac_config import walker_walk_sac_config, walker_walk_sac_create_config

__all__ = [
    "cartpole_swingup_pixels_ppo_config",
    "cartpole_swingup_pixels_ppo_create_config",
    "cartpole_swingup_pixels_sac_config",
    "cartpole_swingup_pixels_sac_create_config",
    "cartpole_swingup_sac_config",
    "cartpole_swingup_sac_create_config",
    "cheetah_run_pixels_sac_config",
    "cheetah_run_pixels_sac_create_config",
    "cheetah_run_sac_config",
    "cheetah_run_sac_create_config",
    "walker_walk_pixels_sac_config",
    "walker_walk_pixels_sac_create_config",
    "walker_walk_sac_config",
    "walker_walk_sac_create_config",
]
