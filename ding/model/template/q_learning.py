"""DI-engine's ``ding.model.template.q_learning`` (compatibility): ``DQN``, ``C51DQN`` and ``QRDQN`` with DI-engine's
signatures, built as ding's models.

Each is a subclass of ding's model of the same name (the same layers, outputs and checkpoints) whose constructor takes
DI-engine's arguments and defaults: ``activation`` as a torch module, ``norm_type`` None only; ``DQN``'s ``dropout``
and ``init_bias`` None only.

Example:
    >>> import torch
    >>> from torch import nn
    >>> model = QRDQN(4, 2, [64, 64], num_quantiles=8, activation=nn.Tanh())
    >>> sorted(model(torch.zeros(3, 4))), model.num_quantiles
    (['logit', 'q', 'tau'], 8)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from torch import nn

from ding.model import c51, dqn, qrdqn
from ding.model.template.arguments import NO_NORM, activation_name, only

RELU = nn.ReLU()


class DQN(dqn.DQN):
    """ding's :class:`~ding.model.dqn.DQN` with DI-engine's arguments (``noise`` is ding's: a noisy head)."""

    def __init__(
        self,
        obs_shape: int | Sequence[int],
        action_shape: int | Sequence[int],
        encoder_hidden_size_list: Sequence[int] = (128, 128, 64),
        dueling: bool = True,
        head_hidden_size: int | None = None,
        head_layer_num: int = 1,
        activation: Any = RELU,
        norm_type: str | None = None,
        dropout: float | None = None,
        init_bias: float | None = None,
        noise: bool = False,
    ) -> None:
        only("DQN", "norm_type", norm_type, None, NO_NORM)
        only("DQN", "dropout", dropout, None, "ding's DQN has no dropout layers")
        only("DQN", "init_bias", init_bias, None, "ding's DQN head starts with PyTorch's initialization")
        super().__init__(
            obs_shape,
            action_shape,
            encoder_hidden_size_list,
            dueling=dueling,
            head_hidden_size=head_hidden_size,
            head_layer_num=head_layer_num,
            activation=activation_name(activation),
            noise=noise,
        )


class C51DQN(c51.C51DQN):
    """ding's :class:`~ding.model.c51.C51DQN` with DI-engine's arguments."""

    def __init__(
        self,
        obs_shape: int | Sequence[int],
        action_shape: int | Sequence[int],
        encoder_hidden_size_list: Sequence[int] = (128, 128, 64),
        head_hidden_size: int | None = None,
        head_layer_num: int = 1,
        activation: Any = RELU,
        norm_type: str | None = None,
        v_min: float = -10,
        v_max: float = 10,
        n_atom: int = 51,
    ) -> None:
        only("C51DQN", "norm_type", norm_type, None, NO_NORM)
        super().__init__(
            obs_shape,
            action_shape,
            encoder_hidden_size_list,
            head_hidden_size=head_hidden_size,
            head_layer_num=head_layer_num,
            activation=activation_name(activation),
            v_min=v_min,
            v_max=v_max,
            n_atom=n_atom,
        )


class QRDQN(qrdqn.QRDQN):
    """ding's :class:`~ding.model.qrdqn.QRDQN` with DI-engine's arguments."""

    def __init__(
        self,
        obs_shape: int | Sequence[int],
        action_shape: int | Sequence[int],
        encoder_hidden_size_list: Sequence[int] = (128, 128, 64),
        head_hidden_size: int | None = None,
        head_layer_num: int = 1,
        num_quantiles: int = 32,
        activation: Any = RELU,
        norm_type: str | None = None,
    ) -> None:
        only("QRDQN", "norm_type", norm_type, None, NO_NORM)
        super().__init__(
            obs_shape,
            action_shape,
            encoder_hidden_size_list,
            head_hidden_size=head_hidden_size,
            head_layer_num=head_layer_num,
            activation=activation_name(activation),
            num_quantiles=num_quantiles,
        )
