"""DI-engine's ``ding.model.template.vac`` (compatibility): ``VAC`` with DI-engine's signature, built as ding's model.

DI-engine's defaults (``encoder_hidden_size_list=[128, 128, 64]``); ``activation`` a torch module; ``encoder`` a
torch module used as the encoder (its features: the list's last size). Refused: ``norm_type`` other than None,
``impala_cnn_encoder=True``, ``sigma_type`` other than ``'independent'`` (ding's continuous head has a
state-independent log std) and so a ``fixed_sigma_value`` other than its default, ``action_space='hybrid'``.

Example:
    >>> import torch
    >>> model = VAC(4, 2, encoder=torch.nn.Sequential(torch.nn.Linear(4, 64), torch.nn.ReLU()),
    ...             encoder_hidden_size_list=[64])
    >>> out = model(torch.zeros(3, 4))
    >>> tuple(out['logit'].shape), tuple(out['value'].shape), model.action_shape
    ((3, 2), (3,), 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from torch import nn

from ding.model import vac
from ding.model.template.arguments import Refusals, ding_arguments
from ding.model.template.q_learning import NORM_ONLY, RELU

VAC_REFUSALS: Refusals = {
    **NORM_ONLY,
    "impala_cnn_encoder": (False, "ding's image encoder is its ConvEncoder"),
    "fixed_sigma_value": (0.3, "it is read with sigma_type='fixed' only"),
}


class VAC(vac.VAC):
    """ding's :class:`~ding.model.vac.VAC` with DI-engine's arguments (see the module docstring)."""

    def __init__(
        self,
        obs_shape: int | Sequence[int],
        action_shape: int | Sequence[int],
        action_space: str = "discrete",
        share_encoder: bool = True,
        encoder_hidden_size_list: Sequence[int] = (128, 128, 64),
        actor_head_hidden_size: int = 64,
        actor_head_layer_num: int = 1,
        critic_head_hidden_size: int = 64,
        critic_head_layer_num: int = 1,
        activation: Any = RELU,
        norm_type: str | None = None,
        sigma_type: str = "independent",
        fixed_sigma_value: float = 0.3,
        bound_type: str | None = None,
        encoder: nn.Module | None = None,
        impala_cnn_encoder: bool = False,
    ) -> None:
        super().__init__(**ding_arguments("VAC", locals(), VAC_REFUSALS))
        self.action_shape = self.action_dim
