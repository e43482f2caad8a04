from .mountain_car_continuous_sac_config import (
    mountain_car_continuous_sac_config,
    mountain_car_continuous_sac_create_config,
)
from .mountain_car_dqn_config import mountain_car_dqn_config, mountain_car_dqn_create_config

__all__ = [
    "mountain_car_continuous_sac_config",
    "mountain_car_continuous_sac_create_config",
    "mountain_car_dqn_config",
    "mountain_car_dqn_create_config",
]
