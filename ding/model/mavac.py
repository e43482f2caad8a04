"""The MAVAC model (multi-agent value actor-critic): one actor and one critic shared by every agent (MAPPO).

Observations are DI-engine's multi-agent dict: ``agent_state`` ``(batch, agents, agent_obs)`` for the actor,
``global_state`` for the critic (``(batch, agents, global_obs)`` when each agent has its own, or
``(batch, global_obs)`` shared by all), and for discrete actions ``action_mask`` ``(batch, agents, actions)``
(0 forbids an action). Every agent runs through the same weights, so the model's size does not grow with the
number of agents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

from ding.config.agent_shapes import AGENT_SHAPE_KEYS
from ding.errors import ConfigError
from ding.model.common import (
    ACTIVATIONS,
    action_dim,
    as_shape,
    head_sizes,
    init_actor_critic,
    mlp,
    model_kwargs,
    positive_int,
)

MASKED_LOGIT = -1e8
"""The logit of an action the mask forbids: its probability is 0 for every practical purpose."""
MODES = ("compute_actor", "compute_critic", "compute_actor_critic")


def _encoder_pair(encoder: Any) -> tuple[nn.Module, nn.Module]:
    """DI-engine's ``encoder`` argument: ``(actor_encoder, critic_encoder)``, two torch modules."""
    pair = isinstance(encoder, (tuple, list)) and len(encoder) == 2
    if not (pair and all(isinstance(module, nn.Module) for module in encoder)):
        raise ConfigError(
            "MAVAC's encoder must be a pair of torch modules (actor_encoder, critic_encoder), got "
            f"{type(encoder).__name__}"
        )
    return encoder[0], encoder[1]


def _flat_size(shape: Any, key: str) -> int:
    dims = as_shape(shape, key)
    if len(dims) != 1:
        raise ConfigError(f"{key} must be one size (a vector per agent), got {shape!r}")
    return dims[0]


class MAVAC(nn.Module):
    """Actor and critic shared by ``agent_num`` agents (DI-engine's ``mavac`` arguments).

    ``forward(obs)`` returns ``{'logit': ..., 'value': ...}``: ``value`` is ``(batch, agents)`` (a shared global
    state's value is given to every agent); ``logit`` is ``(batch, agents, action_shape)`` with forbidden actions at
    :data:`MASKED_LOGIT`, or for ``'continuous'`` ``{'mu', 'sigma'}`` (each ``(batch, agents, action_shape)``, a
    state-independent log std). The actor is a linear layer to ``actor_head_hidden_size`` then
    ``actor_head_layer_num`` hidden layers; the critic likewise. ``forward(obs, mode)`` also takes DI-engine's
    modes (``'compute_actor'``, ``'compute_critic'``, ``'compute_actor_critic'``).

    ``encoder`` (DI-engine's argument) is a pair of modules ``(actor_encoder, critic_encoder)`` that take the place of
    the actor's and the critic's first linear layer: the first maps ``agent_state`` to ``actor_head_hidden_size``
    features, the second ``global_state`` to ``critic_head_hidden_size`` (observations of any shape, images too).
    ``action_shape`` is the policy head's width, as in DI-engine.

    Example:
        >>> model = MAVAC(agent_obs_shape=18, global_obs_shape=54, action_shape=5, agent_num=3)
        >>> obs = {'agent_state': torch.zeros(2, 3, 18), 'global_state': torch.zeros(2, 54),
        ...        'action_mask': torch.tensor([[1, 1, 1, 1, 0]]).repeat(2, 3, 1)}
        >>> out = model(obs)
        >>> tuple(out['logit'].shape), tuple(out['value'].shape), bool((out['logit'][..., 4] < -1e7).all())
        ((2, 3, 5), (2, 3), True)
    """

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
        activation: str = "relu",
        sigma_init: float = 0.0,
        encoder: tuple[nn.Module, nn.Module] | None = None,
    ) -> None:
        super().__init__()
        if action_space not in ("discrete", "continuous"):
            raise ConfigError(f"action_space must be 'discrete' or 'continuous', got {action_space!r}")
        if activation not in ACTIVATIONS:
            raise ConfigError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        self.action_space = action_space
        self.agent_num = positive_int(agent_num, "agent_num")
        self.action_dim = action_dim(action_space, action_shape)
        self.action_shape = self.action_dim
        actor_size, actor_layers, critic_size, critic_layers = head_sizes(
            actor_head_hidden_size, actor_head_layer_num, critic_head_hidden_size, critic_head_layer_num
        )
        self.agent_obs_size: int | None = None  # the features checked at the input; None with the user's encoders
        self.global_obs_size: int | None = None
        if encoder is None:
            self.agent_obs_size = _flat_size(agent_obs_shape, "agent_obs_shape")
            self.global_obs_size = _flat_size(global_obs_shape, "global_obs_shape")
            self.actor = mlp(self.agent_obs_size, [actor_size] * (1 + actor_layers), activation)
            self.critic = mlp(self.global_obs_size, [critic_size] * (1 + critic_layers), activation)
        else:
            actor_encoder, critic_encoder = _encoder_pair(encoder)
            self.actor = nn.Sequential(actor_encoder, mlp(actor_size, [actor_size] * actor_layers, activation))
            self.critic = nn.Sequential(critic_encoder, mlp(critic_size, [critic_size] * critic_layers, activation))
        self.actor_out = nn.Linear(actor_size, self.action_dim)
        self.critic_out = nn.Linear(critic_size, 1)
        self.log_sigma: nn.Parameter | None = None
        if action_space == "continuous":
            self.log_sigma = nn.Parameter(torch.full((self.action_dim,), float(sigma_init)))
        user_made = (self.actor[0], self.critic[0]) if encoder is not None else ()
        init_actor_critic(self, self.actor_out, self.critic_out, keep=user_made)

    def forward(self, obs: Mapping[str, torch.Tensor], mode: str = "compute_actor_critic") -> dict[str, Any]:
        if mode not in MODES:
            raise ValueError(f"MAVAC mode must be one of {list(MODES)}, got {mode!r}")
        out: dict[str, Any] = {}
        if mode != "compute_critic":
            out.update(self.compute_actor(obs))
        if mode != "compute_actor":
            out.update(self.compute_critic(obs))
        return out

    def compute_actor(self, obs: Mapping[str, torch.Tensor]) -> dict[str, Any]:
        """``{'logit': ...}`` from ``agent_state`` (and ``action_mask`` for discrete actions)."""
        agent_state = self._input(obs, "agent_state", self.agent_obs_size)
        out = self.actor_out(self.actor(agent_state))
        if self.log_sigma is not None:
            return {"logit": {"mu": out, "sigma": self.log_sigma.exp().expand_as(out)}}
        mask = obs.get("action_mask")
        if mask is not None:
            if tuple(mask.shape) != tuple(out.shape):
                raise ValueError(f"action_mask has shape {tuple(mask.shape)}, the logits {tuple(out.shape)}")
            out = out.masked_fill(mask == 0, MASKED_LOGIT)
        return {"logit": out}

    def compute_critic(self, obs: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """``{'value': (batch, agents)}`` from ``global_state``."""
        global_state = self._input(obs, "global_state", self.global_obs_size)
        value = self.critic_out(self.critic(global_state)).squeeze(-1)
        if value.dim() == 1:  # one global state for the team: each agent's value is the team's
            value = value.unsqueeze(-1).expand(-1, self.agent_num)
        return {"value": value}

    @staticmethod
    def _input(obs: Mapping[str, torch.Tensor], key: str, size: int | None) -> torch.Tensor:
        if not isinstance(obs, Mapping) or key not in obs:
            given = sorted(obs) if isinstance(obs, Mapping) else type(obs).__name__
            raise ValueError(f"MAVAC needs a dict observation with {key!r}, got {given}")
        value = obs[key]
        if size is not None and value.shape[-1] != size:
            raise ValueError(f"{key} has shape {tuple(value.shape)}; the model was sized for {size} features")
        return value.float()


MAVAC_KEYS = frozenset(
    {
        "agent_obs_shape",
        "global_obs_shape",
        "action_shape",
        "agent_num",
        "actor_head_hidden_size",
        "actor_head_layer_num",
        "critic_head_hidden_size",
        "critic_head_layer_num",
        "action_space",
        "activation",
        "sigma_init",
    }
)
MULTI_AGENT_SHAPE_KEYS = AGENT_SHAPE_KEYS
"""The ``policy.model`` keys of a multi-agent model filled from the env's spaces."""


def mavac_from_config(model_cfg: Mapping[str, Any], action_space: str | None = None) -> MAVAC:
    """A :class:`MAVAC` from a ``policy.model`` config section; ``action_space`` (the policy's) overrides the model's.

    >>> mavac_from_config({'agent_num': 2, 'agent_obs_shape': 4, 'global_obs_shape': 8, 'action_shape': 3}).agent_num
    2
    """
    kwargs = model_kwargs("MAVAC", model_cfg, MAVAC_KEYS, MULTI_AGENT_SHAPE_KEYS)
    if action_space is not None:
        kwargs["action_space"] = action_space
    return MAVAC(**kwargs)
