"""DI-engine's ``ding.model.template`` (compatibility): the models ding has, under DI-engine's names and signatures.

Each builds ding's model (:mod:`ding.model`): the same layers, outputs and checkpoints as ding's own, with DI-engine's
arguments and defaults; an argument ding has no counterpart for is accepted at DI-engine's default only and refused
otherwise with a :class:`~ding.errors.ConfigError` naming it. DI-engine models ding does not have (``RainbowDQN``,
``IQN``, ``DRQN``, ``QMix``, ...) are not here.

Example:
    >>> import torch
    >>> from torch import nn
    >>> model = DQN(obs_shape=4, action_shape=2, activation=nn.ReLU())
    >>> model(torch.zeros(1, 4))['logit'].shape
    torch.Size([1, 2])
"""

from ding.model.template.mavac import MAVAC
from ding.model.template.q_learning import C51DQN, DQN, QRDQN
from ding.model.template.qac import QAC, ContinuousQAC, DiscreteQAC
from ding.model.template.vac import VAC

__all__ = ["C51DQN", "DQN", "MAVAC", "QAC", "QRDQN", "VAC", "ContinuousQAC", "DiscreteQAC"]
