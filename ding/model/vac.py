"""The VAC model (value actor-critic): a policy head and a state-value head over a shared or separate encoder.

``action_space`` picks the policy head: ``'discrete'`` gives categorical logits (one per action),
``'continuous'`` a Gaussian with a learned mean per action dimension and a state-independent
log standard deviation (one parameter per dimension).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from ding.errors import ConfigError
from ding.model.common import (
    action_dim,
    build_encoder,
    head_sizes,
    hidden_sizes,
    init_actor_critic,
    mlp,
    model_kwargs,
)
from ding.model.obs_input import INPUT_KEYS, ObsInput

ACTION_SPACES = ("discrete", "continuous")


class VAC(nn.Module):
    """Actor and critic for PPO-style policies, sized from ``obs_shape`` and ``action_shape``.

    ``forward(obs)`` returns ``{'logit': ..., 'value': ...}``: ``value`` has shape ``(batch,)``;
    ``logit`` is a ``(batch, action_shape)`` tensor of categorical logits for discrete actions, or
    ``{'mu': ..., 'sigma': ...}`` (each ``(batch, action_dim)``) for continuous ones.
    ``share_encoder=False`` gives the actor and the critic an encoder each. ``encoder`` (DI-engine's argument) is a
    torch module to use as the encoder (a copy of it for the critic when not shared) in place of the one
    ``encoder_hidden_size_list`` builds; its features are the list's last size. Each head has
    ``*_head_layer_num`` hidden layers of width ``*_head_hidden_size`` before its output layer.
    Linear layers start orthogonal (gain sqrt(2)), the policy output with gain 0.01 (a near-uniform
    first policy) and the value output with gain 1. ``bound_type='tanh'`` squashes a continuous mean into
    ``[-1, 1]`` (DI-engine's key; ``sigma_type`` is always ``'independent'``). ``obs_dtype`` and ``obs_range``
    describe the observations
    (:class:`~ding.model.obs_input.ObsInput`: integer frames are made float32 in [0, 1] inside the model).

    Example:
        >>> model = VAC(obs_shape=4, action_shape=2, encoder_hidden_size_list=[64, 64])
        >>> out = model(torch.zeros(3, 4))
        >>> out['logit'].shape, out['value'].shape
        (torch.Size([3, 2]), torch.Size([3]))
        >>> out = VAC(3, 1, 'continuous', share_encoder=False)(torch.zeros(5, 3))
        >>> out['logit']['mu'].shape, out['logit']['sigma'].shape, out['value'].shape
        (torch.Size([5, 1]), torch.Size([5, 1]), torch.Size([5]))
    """

    def __init__(
        self,
        obs_shape: int | Sequence[int],
        action_shape: int | Sequence[int],
        action_space: str = "discrete",
        share_encoder: bool = True,
        encoder_hidden_size_list: Sequence[int] = (64, 64, 128),
        actor_head_hidden_size: int = 64,
        actor_head_layer_num: int = 1,
        critic_head_hidden_size: int = 64,
        critic_head_layer_num: int = 1,
        activation: str = "relu",
        sigma_init: float = 0.0,
        obs_dtype: str | None = None,
        obs_range: Sequence[float] | None = None,
        sigma_type: str = "independent",
        bound_type: str | None = None,
        encoder: nn.Module | None = None,
    ) -> None:
        super().__init__()
        if action_space not in ACTION_SPACES:
            raise ConfigError(f"action_space must be one of {list(ACTION_SPACES)}, got {action_space!r}")
        if sigma_type != "independent":
            raise ConfigError(f"sigma_type must be 'independent' (a state-independent log std), got {sigma_type!r}")
        if bound_type not in (None, "tanh"):
            raise ConfigError(f"bound_type must be None or 'tanh' (the mean squashed into [-1, 1]), got {bound_type!r}")
        self.bound_type = bound_type
        self.action_space = action_space
        self.obs_input = ObsInput(type(self).__name__, obs_shape, obs_dtype, obs_range)
        self.obs_shape = self.obs_input.obs_shape
        self.action_dim = action_dim(action_space, action_shape)
        actor_size, actor_layers, critic_size, critic_layers = head_sizes(
            actor_head_hidden_size, actor_head_layer_num, critic_head_hidden_size, critic_head_layer_num
        )
        self.share_encoder = bool(share_encoder)
        self.actor_encoder, features = self._encoder(encoder, obs_shape, encoder_hidden_size_list, activation)
        self.critic_encoder = (
            self.actor_encoder
            if self.share_encoder
            else self._encoder(copy.deepcopy(encoder), obs_shape, encoder_hidden_size_list, activation)[0]
        )
        self.actor_body = self._body(features, actor_size, actor_layers, activation)
        self.actor_out = nn.Linear(actor_size if actor_layers else features, self.action_dim)
        self.critic_body = self._body(features, critic_size, critic_layers, activation)
        self.critic_out = nn.Linear(critic_size if critic_layers else features, 1)
        self.log_sigma: nn.Parameter | None = None
        if action_space == "continuous":
            self.log_sigma = nn.Parameter(torch.full((self.action_dim,), float(sigma_init)))
        user_made = {self.actor_encoder, self.critic_encoder} if encoder is not None else set()
        init_actor_critic(self, self.actor_out, self.critic_out, keep=list(user_made))

    @staticmethod
    def _encoder(
        encoder: nn.Module | None, obs_shape: Any, hidden_size_list: Sequence[int], act: str
    ) -> tuple[nn.Module, int]:
        """The user's ``encoder`` (its features: the last of ``hidden_size_list``, as DI-engine reads them), or
        the encoder the observation shape calls for."""
        if encoder is None:
            built = build_encoder(obs_shape, hidden_size_list, act)
            return built, built.output_size
        if not isinstance(encoder, nn.Module):
            raise ConfigError(f"VAC's encoder must be a torch module, got {type(encoder).__name__}")
        return encoder, hidden_sizes(hidden_size_list, "encoder_hidden_size_list")[-1]

    @staticmethod
    def _body(features: int, size: int, layers: int, act: str) -> nn.Module:
        return mlp(features, [size] * layers, act) if layers else nn.Identity()

    def compute_actor(self, obs: torch.Tensor) -> dict[str, Any]:
        """``{'logit': ...}`` only."""
        return {"logit": self._actor(self.actor_encoder(self.obs_input(obs)))}

    def compute_critic(self, obs: torch.Tensor) -> dict[str, torch.Tensor]:
        """``{'value': ...}`` only."""
        return {"value": self._critic(self.critic_encoder(self.obs_input(obs)))}

    def forward(self, obs: torch.Tensor) -> dict[str, Any]:
        obs = self.obs_input(obs)
        actor_features = self.actor_encoder(obs)
        critic_features = actor_features if self.share_encoder else self.critic_encoder(obs)
        return {"logit": self._actor(actor_features), "value": self._critic(critic_features)}

    def _actor(self, features: torch.Tensor) -> Any:
        out = self.actor_out(self.actor_body(features))
        if self.log_sigma is None:
            return out
        mu = torch.tanh(out) if self.bound_type == "tanh" else out
        return {"mu": mu, "sigma": self.log_sigma.exp().expand_as(mu)}

    def _critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.critic_out(self.critic_body(features)).squeeze(-1)


VAC_KEYS = frozenset(
    {
        "obs_shape",
        "action_shape",
        "action_space",
        "share_encoder",
        "encoder_hidden_size_list",
        "actor_head_hidden_size",
        "actor_head_layer_num",
        "critic_head_hidden_size",
        "critic_head_layer_num",
        "activation",
        "sigma_init",
        "sigma_type",
        "bound_type",
        *INPUT_KEYS,
    }
)


def vac_from_config(model_cfg: dict[str, Any], action_space: str | None = None) -> VAC:
    """A :class:`VAC` from a ``policy.model`` config section; ``action_space`` (the policy's) overrides the model's.

    >>> vac_from_config({'obs_shape': 4, 'action_shape': 2}).action_space
    'discrete'
    """
    kwargs = model_kwargs("VAC", model_cfg, VAC_KEYS)
    if action_space is not None:
        kwargs["action_space"] = action_space
    return VAC(**kwargs)
