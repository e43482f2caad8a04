from .carla_sac_config import carla_sac_config, carla_sac_create_config

__all__ = [
    "carla_sac_config",
    "carla_sac_create_config",
]
