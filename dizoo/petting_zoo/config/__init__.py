from .ptz_simple_spread_mappo_config import ptz_simple_spread_mappo_config, ptz_simple_spread_mappo_create_config
from .ptz_simple_spread_ppo_config import ptz_simple_spread_ppo_config, ptz_simple_spread_ppo_create_config

__all__ = [
    "ptz_simple_spread_mappo_config",
    "ptz_simple_spread_mappo_create_config",
    "ptz_simple_spread_ppo_config",
    "ptz_simple_spread_ppo_create_config",
]
