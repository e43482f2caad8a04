from .breakout_dqn_config import breakout_dqn_config, breakout_dqn_create_config
from .pong_dqn_config import pong_dqn_config, pong_dqn_create_config
from .pong_dqn_ram_config import pong_dqn_ram_config, pong_dqn_ram_create_config
from .qbert_dqn_config import qbert_dqn_config, qbert_dqn_create_config
from .spaceinvaders_dqn_config import spaceinvaders_dqn_config, spaceinvaders_dqn_create_config

__all__ = [
    "breakout_dqn_config",
    "breakout_dqn_create_config",
    "pong_dqn_config",
    "pong_dqn_create_config",
    "pong_dqn_ram_config",
    "pong_dqn_ram_create_config",
    "qbert_dqn_config",
    "qbert_dqn_create_config",
    "spaceinvaders_dqn_config",
    "spaceinvaders_dqn_create_config",
]
