"""Neural network models sized from a config's ``obs_shape`` and ``action_shape`` (torch)."""

from ding.model.c51 import C51DQN, c51_from_config
from ding.model.common import ConvEncoder, DiscreteHead, DuelingHead, FCEncoder, build_encoder
from ding.model.dqn import DQN, model_from_config
from ding.model.mavac import MAVAC, mavac_from_config
from ding.model.qrdqn import QRDQN, qrdqn_from_config

__all__ = [
    "C51DQN",
    "DQN",
    "MAVAC",
    "QRDQN",
    "ConvEncoder",
    "DiscreteHead",
    "DuelingHead",
    "FCEncoder",
    "build_encoder",
    "c51_from_config",
    "mavac_from_config",
    "model_from_config",
    "qrdqn_from_config",
]
