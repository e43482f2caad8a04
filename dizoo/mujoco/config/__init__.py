from .ant_sac_config import ant_sac_config, ant_sac_create_config
from .halfcheetah_sac_config import halfcheetah_sac_config, halfcheetah_sac_create_config
from .hopper_ppo_config import hopper_ppo_config, hopper_ppo_create_config
from .hopper_sac_config import hopper_sac_config, hopper_sac_create_config
from .walker2d_sac_config import walker2d_sac_config, walker2d_sac_create_config

__all__ = [
    "ant_sac_config",
    "ant_sac_create_config",
    "halfcheetah_sac_config",
    "halfcheetah_sac_create_config",
    "hopper_ppo_config",
    "hopper_ppo_create_config",
    "hopper_sac_config",
    "hopper_sac_create_config",
    "walker2d_sac_config",
    "walker2d_sac_create_config",
]
