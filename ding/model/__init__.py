"""Neural network models sized from a config's ``obs_shape`` and ``action_shape`` (torch)."""

from ding.model.common import ConvEncoder, DiscreteHead, DuelingHead, FCEncoder, build_encoder
from ding.model.dqn import DQN, model_from_config

__all__ = ["DQN", "ConvEncoder", "DiscreteHead", "DuelingHead", "FCEncoder", "build_encoder", "model_from_config"]
