from .lunarlander_continuous_sac_config import (
    lunarlander_continuous_sac_config,
    lunarlander_continuous_sac_create_config,
)
from .lunarlander_dqn_config import lunarlander_dqn_config, lunarlander_dqn_create_config

__all__ = [
    "lunarlander_continuous_sac_config",
    "lunarlander_continuous_sac_create_config",
    "lunarlander_dqn_config",
    "lunarlander_dqn_create_config",
]
