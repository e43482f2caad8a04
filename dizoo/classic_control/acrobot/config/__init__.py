from .acrobot_dqn_config import acrobot_dqn_config, acrobot_dqn_create_config

__all__ = [
    "acrobot_dqn_config",
    "acrobot_dqn_create_config",
]
