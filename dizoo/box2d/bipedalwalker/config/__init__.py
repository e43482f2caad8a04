from .bipedalwalker_sac_config import bipedalwalker_sac_config, bipedalwalker_sac_create_config

__all__ = [
    "bipedalwalker_sac_config",
    "bipedalwalker_sac_create_config",
]
