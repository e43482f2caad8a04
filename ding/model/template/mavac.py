"""DI-engine's ``ding.model.template.mavac`` (compatibility): ``MAVAC`` with DI-engine's signature, built as ding's
model.

``activation`` a torch module; ``encoder`` the pair ``(actor_encoder, critic_encoder)`` (ding's MAVAC takes it);
refused: ``norm_type`` other than None, ``sigma_type`` other than ``'independent'``, ``bound_type`` other than None.

Example:
    >>> import torch
    >>> model = MAVAC(8, 16, 5, 3, actor_head_hidden_size=32, critic_head_hidden_size=32)
    >>> out = model({'agent_state': torch.zeros(2, 3, 8), 'global_state': torch.zeros(2, 3, 16)}, 'compute_actor')
    >>> tuple(out['logit'].shape), model.action_shape
    ((2, 3, 5), 5)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from torch import nn

from ding.model import mavac
from ding.model.template.arguments import Refusals, ding_arguments
from ding.model.template.q_learning import NORM_ONLY, RELU

MAVAC_REFUSALS: Refusals = {
    **NORM_ONLY,
    "sigma_type": ("independent", "ding's MAVAC has a state-independent log std"),
    "bound_type": (None, "ding's MAVAC leaves the mean unbounded"),
}


class MAVAC(mavac.MAVAC):
    """ding's :class:`~ding.model.mavac.MAVAC` with DI-engine's arguments (see the module docstring)."""

    def __init__(
        self,
        agent_obs_shape: int | Sequence[int],
        global_obs_shape: int | Sequence[int],
        action_shape: int | Sequence[int],
        agent_num: int,
        actor_head_hidden_size: int = 256,
        actor_head_layer_num: int = 2,
        critic_head_hidden_size: int = 512,
        critic_head_layer_num: int = 1,
        action_space: str = "discrete",
        activation: Any = RELU,
        norm_type: str | None = None,
        sigma_type: str = "independent",
        bound_type: str | None = None,
        encoder: tuple[nn.Module, nn.Module] | None = None,
    ) -> None:
        super().__init__(**ding_arguments("MAVAC", locals(), MAVAC_REFUSALS))
