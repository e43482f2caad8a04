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
from ding.model.template.arguments import NO_NORM, Refusals, ding_arguments

RELU = nn.ReLU()
"""DI-engine's default activation."""
NORM_ONLY: Refusals = {"norm_type": (None, NO_NORM)}
DQN_REFUSALS: Refusals = {
    **NORM_ONLY,
    "dropout": (None, "ding's DQN has no dropout layers"),
    "init_bias": (None, "ding's DQN head starts with PyTorch's initialization"),
}


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
        super().__init__(**ding_arguments("DQN", locals(), DQN_REFUSALS))


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
        super().__init__(**ding_arguments("C51DQN", locals(), NORM_ONLY))


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
        super().__init__(**ding_arguments("QRDQN", locals(), NORM_ONLY))
