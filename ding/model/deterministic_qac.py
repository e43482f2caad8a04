"""The DDPG / TD3 model: a deterministic actor with actions in ``[-1, 1]`` and one or two Q critics.

Shapes and layout follow DI-engine's ``ContinuousQAC`` with ``action_space='regression'``: ``obs_shape`` is a vector
size (an int or a one-element list/tuple) or a ``(C, H, W)`` image, ``action_shape`` the size ``k`` of a Box ``(k,)``
action, and each head has a first layer then ``*_head_layer_num`` more before its output.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from ding.model.common import head_sizes, layered_head, model_kwargs, optional_encoder
from ding.model.obs_input import INPUT_KEYS, ObsInput
from ding.model.qac import ContinuousCritics, continuous_action_size


class DeterministicQAC(ContinuousCritics):
    """Actor and critics for DDPG and TD3.

    - ``actor``: ``1 + actor_head_layer_num`` hidden layers of width ``actor_head_hidden_size``, then ``tanh`` of one
      output per action dimension: the action in ``[-1, 1]`` (the env maps it to its bounds, e.g. ``act_scale``);
    - ``critic``: one Q network (two with ``twin_critic``) on ``concat(encoded obs, action)``, laid out the same way
      with the ``critic_head_*`` sizes.

    With ``encoder_hidden_size_list`` the actor and the critics first encode observations, each side with its own
    encoder: convolutions for ``(C, H, W)`` images (which need it), an MLP for vectors. ``obs_dtype`` and
    ``obs_range`` describe the observations (:class:`~ding.model.obs_input.ObsInput`).

    ``compute_actor(obs)`` returns ``{'action': (B, k)}``; ``compute_critic(obs, action)`` ``{'q_value': (B,)}``, or
    ``(2, B)`` with twin critics.

    Example:
        >>> model = DeterministicQAC(obs_shape=3, action_shape=1, twin_critic=True)
        >>> action = model(torch.zeros(4, 3), 'compute_actor')['action']
        >>> action.shape, bool(action.abs().max() <= 1)
        (torch.Size([4, 1]), True)
        >>> model(torch.zeros(4, 3), 'compute_critic', action)['q_value'].shape
        torch.Size([2, 4])
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
        self.action_size = continuous_action_size(action_shape)
        self.twin_critic = bool(twin_critic)
        actor_size, actor_layers, critic_size, critic_layers = head_sizes(
            actor_head_hidden_size, actor_head_layer_num, critic_head_hidden_size, critic_head_layer_num
        )
        name = type(self).__name__
        actor_encoder, features = optional_encoder(name, self.obs_shape, encoder_hidden_size_list, activation)
        self.critic_encoder, _ = optional_encoder(name, self.obs_shape, encoder_hidden_size_list, activation)
        self.actor = nn.Sequential(
            actor_encoder, layered_head(features, actor_size, actor_layers, self.action_size, activation), nn.Tanh()
        )
        critic_in = features + self.action_size
        self.critic_heads = nn.ModuleList(
            layered_head(critic_in, critic_size, critic_layers, 1, activation)
            for _ in range(2 if self.twin_critic else 1)
        )

    @property
    def critic(self) -> nn.ModuleList:
        """The critics' encoder and heads (what the critic optimizer updates)."""
        return nn.ModuleList([self.critic_encoder, self.critic_heads])

    def q_heads(self) -> nn.ModuleList:
        return self.critic_heads

    def compute_actor(self, obs: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"action": self.actor(self.obs_input(obs))}


DETERMINISTIC_QAC_MODEL_KEYS = (
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


def deterministic_qac_from_config(model_cfg: dict[str, Any]) -> DeterministicQAC:
    """A :class:`DeterministicQAC` from a ``policy.model`` config section (unknown keys are a ``ConfigError``).

    >>> deterministic_qac_from_config({'obs_shape': 3, 'action_shape': 1, 'twin_critic': True}).twin_critic
    True
    """
    kwargs = model_kwargs("DeterministicQAC", model_cfg, DETERMINISTIC_QAC_MODEL_KEYS)
    return DeterministicQAC(**kwargs)
