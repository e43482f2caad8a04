from .cartpole_a2c_config import cartpole_a2c_config, cartpole_a2c_create_config
from .cartpole_c51_config import cartpole_c51_config, cartpole_c51_create_config
from .cartpole_dqn_config import cartpole_dqn_config, cartpole_dqn_create_config
from .cartpole_ppo_config import cartpole_ppo_config, cartpole_ppo_create_config
from .cartpole_qrdqn_config import cartpole_qrdqn_config, cartpole_qrdqn_create_config
from .cartpole_sac_config import cartpole_sac_config, cartpole_sac_create_config

__all__ = [
    "cartpole_a2c_config",
    "cartpole_a2c_create_config",
    "cartpole_c51_config",
    "cartpole_c51_create_config",
    "cartpole_dqn_config",
    "cartpole_dqn_create_config",
    "cartpole_ppo_config",
    "cartpole_ppo_create_config",
    "cartpole_qrdqn_config",
    "cartpole_qrdqn_create_config",
    "cartpole_sac_config",
    "cartpole_sac_create_config",
]
