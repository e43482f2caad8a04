"""The discrete SAC model: a categorical actor and (twin) critics giving one Q-value per action.

Shapes follow DI-engine's ``DiscreteQAC``: ``obs_shape`` is a vector size (an int or a one-element list/tuple) or a
``(C, H, W)`` image, and ``action_shape`` the number ``n`` of a ``Discrete(n)`` action.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from ding.model.common import action_count, head_sizes, layered_head, model_kwargs, optional_encoder
from ding.model.obs_input import INPUT_KEYS, ObsInput


class DiscreteQAC(nn.Module):
    """Actor and critics for discrete SAC.

    - ``actor``: ``1 + actor_head_layer_num`` hidden layers of width ``actor_head_hidden_size``, then one logit per
      action (DI-engine's layout: a first layer, then a head of ``actor_head_layer_num`` layers);
    - ``critic``: one Q network (two with ``twin_critic``) laid out the same way with the ``critic_head_*`` sizes,
      giving ``Q(s, a)`` for every action ``a`` at once.

    With ``encoder_hidden_size_list`` the actor and the critics first encode observations, each side with its own
    encoder (the twin critics share one): convolutions for ``(C, H, W)`` images (which need it), an MLP for vectors.
    ``obs_dtype`` and ``obs_range`` describe the observations (:class:`~ding.model.obs_input.ObsInput`).

    ``compute_actor(obs)`` returns ``{'logit': (B, n)}``; ``compute_critic(obs)`` ``{'q_value': (B, n)}``, or
    ``(2, B, n)`` with twin critics, as DI-engine's model does.

    Example:
        >>> model = DiscreteQAC(obs_shape=4, action_shape=2, twin_critic=True)
        >>> model(torch.zeros(3, 4), 'compute_actor')['logit'].shape
        torch.Size([3, 2])
        >>> model(torch.zeros(3, 4), 'compute_critic')['q_value'].shape
        torch.Size([2, 3, 2])
    """

    def __init__(
        self,
        obs_shape: int | Sequence[int],
        action_shape: int | Sequence[int],
        twin_critic: bool = False,
        actor_head_hidden_size: int = 64,
        actor_head_layer_num: int = 1,
        critic_head_hidden_size: int = 64,
        critic_head_layer_num: int = 1,
        activation: str = "relu",
        encoder_hidden_size_list: Sequence[int] | None = None,
        obs_dtype: str | None = None,
        obs_range: Sequence[float] | None = None,
    ) -> None:
        super().__init__()
        self.obs_input = ObsInput(type(self).__name__, obs_shape, obs_dtype, obs_range)
        self.obs_shape = self.obs_input.obs_shape
        self.action_num = action_count(action_shape)
        self.twin_critic = bool(twin_critic)
        actor_size, actor_layers, critic_size, critic_layers = head_sizes(
            actor_head_hidden_size, actor_head_layer_num, critic_head_hidden_size, critic_head_layer_num
        )
        actor_encoder, features = optional_encoder(
            type(self).__name__, self.obs_shape, encoder_hidden_size_list, activation
        )
        critic_encoder, _ = optional_encoder(type(self).__name__, self.obs_shape, encoder_hidden_size_list, activation)
        self.actor = nn.Sequential(actor_encoder, self._head(features, actor_size, actor_layers, activation))
        self.critic_encoder = critic_encoder
        self.critic_heads = nn.ModuleList(
            self._head(features, critic_size, critic_layers, activation) for _ in range(2 if self.twin_critic else 1)
        )

    @property
    def critic(self) -> nn.ModuleList:
        """The critics' encoder and heads (what the critic optimizer updates)."""
        return nn.ModuleList([self.critic_encoder, self.critic_heads])

    def _head(self, features: int, size: int, layers: int, activation: str) -> nn.Sequential:
        return layered_head(features, size, layers, self.action_num, activation)

    def compute_actor(self, obs: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"logit": self.actor(self.obs_input(obs))}

    def compute_critic(self, obs: torch.Tensor) -> dict[str, torch.Tensor]:
        features = self.critic_encoder(self.obs_input(obs))
        q = torch.stack([head(features) for head in self.critic_heads])
        return {"q_value": q if self.twin_critic else q[0]}

    def forward(self, obs: torch.Tensor, mode: str = "compute_actor") -> dict[str, torch.Tensor]:
        """DI-engine's mode dispatch: ``model(obs, 'compute_actor')`` / ``model(obs, 'compute_critic')``."""
        if mode == "compute_actor":
            return self.compute_actor(obs)
        if mode == "compute_critic":
            return self.compute_critic(obs)
        raise ValueError(f"unknown DiscreteQAC mode {mode!r}; use 'compute_actor' or 'compute_critic'")


DISCRETE_QAC_MODEL_KEYS = (
    "obs_shape",
    "action_shape",
    "twin_critic",
    "actor_head_hidden_size",
    "actor_head_layer_num",
    "critic_head_hidden_size",
    "critic_head_layer_num",
    "activation",
    "encoder_hidden_size_list",
    *INPUT_KEYS,
)


def discrete_qac_from_config(model_cfg: dict[str, Any]) -> DiscreteQAC:
    """A :class:`DiscreteQAC` from a ``policy.model`` config section (unknown keys are a ``ConfigError``).

    >>> discrete_qac_from_config({'obs_shape': 4, 'action_shape': 2}).action_num
    2
    """
    kwargs = model_kwargs("DiscreteQAC", model_cfg, DISCRETE_QAC_MODEL_KEYS)
    return DiscreteQAC(**kwargs)
