"""The SAC model: a tanh-squashed Gaussian actor and (twin) Q critics for continuous actions.

Shapes follow DI-engine's ``ContinuousQAC``: ``obs_shape`` is a vector size (an int or a one-element
list/tuple) or a ``(C, H, W)`` image, and ``action_shape`` the size ``k`` of a Box ``(k,)`` action. Actions lie
in ``[-1, 1]`` (the env maps them to its bounds, e.g. Pendulum's ``act_scale``).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

from ding.errors import ConfigError
from ding.model.common import hidden_sizes, mlp, model_kwargs, optional_encoder
from ding.model.obs_input import INPUT_KEYS, ObsInput

LOG_STD_MIN = -20.0
LOG_STD_MAX = 2.0
_LOG_2 = math.log(2.0)


def continuous_action_size(action_shape: Any) -> int:
    """The size ``k`` of a continuous action (an int, or a one-element list or tuple).

    >>> continuous_action_size(1), continuous_action_size((3,))
    (1, 3)
    >>> continuous_action_size((2, 3))
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: action_shape must be the size of a Box (k,) action (an int > 0), got (2, 3)
    """
    if isinstance(action_shape, (list, tuple)) and len(action_shape) == 1:
        action_shape = action_shape[0]
    if isinstance(action_shape, int) and not isinstance(action_shape, bool) and action_shape > 0:
        return int(action_shape)
    raise ConfigError(f"action_shape must be the size of a Box (k,) action (an int > 0), got {action_shape!r}")


def squashed_log_prob(pre_tanh: torch.Tensor, mu: torch.Tensor, log_std: torch.Tensor) -> torch.Tensor:
    """Log-density of ``tanh(pre_tanh)`` where ``pre_tanh ~ N(mu, exp(log_std))``, summed over action dims.

    The tanh correction ``log(1 - tanh(u)^2)`` is computed as ``2 (log 2 - u - softplus(-2u))`` (stable).

    >>> zero = torch.zeros(1, 1)
    >>> round(float(squashed_log_prob(zero, zero, zero)), 4)  # standard normal density at 0, no squashing
    -0.9189
    """
    normal_log_prob = -0.5 * ((pre_tanh - mu) / log_std.exp()) ** 2 - log_std - 0.5 * math.log(2 * math.pi)
    correction = 2.0 * (_LOG_2 - pre_tanh - nn.functional.softplus(-2.0 * pre_tanh))
    return (normal_log_prob - correction).sum(dim=-1)


class ContinuousCritics(nn.Module, ABC):
    """Q critics over ``concat(encoded obs, action)`` for a Box ``(k,)`` action, and DI-engine's mode dispatch.

    A model with this base sets ``obs_input``, ``critic_encoder``, ``action_size``, ``twin_critic`` and its critic
    heads (:meth:`q_heads`), and defines ``compute_actor``.
    """

    obs_input: ObsInput
    critic_encoder: nn.Module
    action_size: int
    twin_critic: bool

    @abstractmethod
    def q_heads(self) -> nn.ModuleList:
        """The critic heads, one per critic."""

    @abstractmethod
    def compute_actor(self, obs: torch.Tensor) -> dict[str, Any]:
        """The actor's output for ``obs`` (what ``model(obs)`` returns)."""

    def compute_critic(self, obs: torch.Tensor, action: torch.Tensor) -> dict[str, torch.Tensor]:
        """``{'q_value': Q(obs, action)}``: shape ``(B,)``, or ``(2, B)`` with twin critics."""
        obs = self.obs_input(obs)
        if action.dim() != 2 or action.shape != (obs.shape[0], self.action_size):
            raise ValueError(
                f"{type(self).__name__} built for action_shape {self.action_size} got actions of shape "
                f"{tuple(action.shape)} for {obs.shape[0]} observations"
            )
        x = torch.cat([self.critic_encoder(obs), action], dim=-1)
        q = torch.stack([head(x).squeeze(-1) for head in self.q_heads()])
        return {"q_value": q if self.twin_critic else q[0]}

    def forward(self, obs: Any, mode: str = "compute_actor", action: torch.Tensor | None = None) -> Any:
        """DI-engine's mode dispatch: ``model(obs)`` / ``model(obs, 'compute_critic', action)``, or DI-engine's
        ``model({'obs': obs, 'action': action}, 'compute_critic')``."""
        if mode == "compute_actor":
            return self.compute_actor(obs)
        if mode == "compute_critic":
            if action is None and isinstance(obs, Mapping) and {"obs", "action"} <= set(obs):
                obs, action = obs["obs"], obs["action"]
            if action is None:
                raise ValueError("compute_critic needs an action batch")
            return self.compute_critic(obs, action)
        raise ValueError(f"unknown {type(self).__name__} mode {mode!r}; use 'compute_actor' or 'compute_critic'")


class QAC(ContinuousCritics):
    """Actor and critics for SAC.

    - ``actor``: an MLP of ``1 + actor_head_layer_num`` hidden layers of width ``actor_head_hidden_size``
      giving ``mu`` and ``log_std`` (clamped to ``[-20, 2]``) of a Gaussian over pre-tanh actions (DI-engine's
      layout, as every ding actor-critic model: a first layer, then a head of ``actor_head_layer_num`` layers).
    - ``critic``: one Q network (two with ``twin_critic``) on ``concat(obs, action)``, each an MLP of
      ``1 + critic_head_layer_num`` hidden layers of width ``critic_head_hidden_size``.

    With ``encoder_hidden_size_list`` the actor and the critics first encode observations, each side with its
    own encoder (the twin critics share one): convolutions for ``(C, H, W)`` images (which need it), an MLP for
    vectors. Without it, vectors go straight into the heads. ``obs_dtype`` and ``obs_range`` describe the
    observations (:class:`~ding.model.obs_input.ObsInput`: uint8 frames are made float32 in [0, 1] in the model).

    ``compute_actor(obs)`` returns ``{'logit': (mu, log_std)}``, ``compute_critic(obs, action)``
    ``{'q_value': Q}`` (shape ``(batch,)``, or ``(2, batch)`` with twin critics), as DI-engine's model does.
    ``sample(obs)`` draws a reparameterized action with its log-probability; ``deterministic(obs)`` is
    ``tanh(mu)``.

    Example:
        >>> model = QAC(obs_shape=3, action_shape=1)
        >>> action, log_prob = model.sample(torch.zeros(4, 3))
        >>> action.shape, log_prob.shape, bool(action.abs().max() <= 1)
        (torch.Size([4, 1]), torch.Size([4]), True)
        >>> model.compute_critic(torch.zeros(4, 3), action)['q_value'].shape
        torch.Size([2, 4])
        >>> pixels = QAC(obs_shape=(3, 32, 32), action_shape=2, encoder_hidden_size_list=[8, 16, 32])
        >>> pixels.compute_critic(torch.zeros(5, 3, 32, 32), torch.zeros(5, 2))['q_value'].shape
        torch.Size([2, 5])
    """

    def __init__(
        self,
        obs_shape: int | Sequence[int],
        action_shape: int | Sequence[int],
        twin_critic: bool = True,
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
        self.actor_encoder, features = optional_encoder(
            type(self).__name__, self.obs_shape, encoder_hidden_size_list, activation
        )
        self.critic_encoder, _ = optional_encoder(
            type(self).__name__, self.obs_shape, encoder_hidden_size_list, activation
        )
        actor_sizes = _layers(actor_head_hidden_size, actor_head_layer_num, "actor_head")
        critic_sizes = _layers(critic_head_hidden_size, critic_head_layer_num, "critic_head")
        self.actor = nn.Sequential(
            mlp(features, actor_sizes, activation), nn.Linear(actor_sizes[-1], 2 * self.action_size)
        )
        critic_in = features + self.action_size
        self.critic = nn.ModuleList(
            nn.Sequential(mlp(critic_in, critic_sizes, activation), nn.Linear(critic_sizes[-1], 1))
            for _ in range(2 if self.twin_critic else 1)
        )

    def compute_actor(self, obs: torch.Tensor) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
        mu, log_std = self.actor(self.actor_encoder(self.obs_input(obs))).chunk(2, dim=-1)
        return {"logit": (mu, log_std.clamp(LOG_STD_MIN, LOG_STD_MAX))}

    def q_heads(self) -> nn.ModuleList:
        return self.critic

    def sample(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """A reparameterized action in ``[-1, 1]`` and its log-probability (gradients flow through both)."""
        mu, log_std = self.compute_actor(obs)["logit"]
        pre_tanh = mu + log_std.exp() * torch.randn_like(mu)
        return torch.tanh(pre_tanh), squashed_log_prob(pre_tanh, mu, log_std)

    def deterministic(self, obs: torch.Tensor) -> torch.Tensor:
        """The actor's mean action ``tanh(mu)``."""
        return torch.tanh(self.compute_actor(obs)["logit"][0])


def _layers(size: Any, layer_num: Any, what: str) -> list[int]:
    """The hidden widths of a head: a first layer, then ``layer_num`` more (DI-engine's layout)."""
    if not isinstance(layer_num, int) or isinstance(layer_num, bool) or layer_num < 0:
        raise ConfigError(f"{what}_layer_num must be an int >= 0, got {layer_num!r}")
    return hidden_sizes([size] * (1 + layer_num), f"{what}_hidden_size")


QAC_MODEL_KEYS = (
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


def qac_from_config(model_cfg: dict[str, Any]) -> QAC:
    """A :class:`QAC` from a ``policy.model`` config section (unknown keys are a ``ConfigError``).

    >>> qac_from_config({'obs_shape': 3, 'action_shape': 1, 'twin_critic': False}).twin_critic
    False
    """
    kwargs = model_kwargs("QAC", model_cfg, QAC_MODEL_KEYS)
    return QAC(**kwargs)
