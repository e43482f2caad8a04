"""The DQN model: an encoder chosen by the observation's shape and a (dueling) Q-value head."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from ding.errors import ConfigError
from ding.model.common import DiscreteHead, DuelingHead, action_count, action_counts, build_encoder, model_kwargs
from ding.model.obs_input import INPUT_KEYS, ObsInput


class DQN(nn.Module):
    """Q-values for every discrete action, from a vector or image observation.

    ``encoder_hidden_size_list`` gives the encoder's layer widths (for an image ``(C, H, W)``: the conv channels,
    then the output size); ``head_hidden_size`` (default: the encoder's output size) is the width of the head's
    ``head_layer_num`` hidden layers. ``dueling`` splits the head into a state value and action advantages.
    ``noise`` makes the head's layers noisy (:class:`~ding.model.noisy.NoisyLinear`; the policy's ``noisy_net`` turns
    their noise on). ``obs_dtype`` and ``obs_range`` describe the observations
    (:class:`~ding.model.obs_input.ObsInput`: a uint8 frame batch is made float32 in [0, 1] inside ``forward``).
    ``forward`` returns ``{'logit': Q}`` of shape ``(batch, action_shape)``, as DI-engine models do. A multi-discrete
    ``action_shape`` (a list, ``MultiDiscrete``'s ``nvec``) gives one head per branch on the shared encoder, and
    ``logit`` is the list of their Q-values (``(batch, n_i)`` each), as DI-engine's multi-head models give them.

    Example:
        >>> model = DQN(obs_shape=4, action_shape=2, encoder_hidden_size_list=[128, 128, 64])
        >>> model(torch.zeros(5, 4))['logit'].shape
        torch.Size([5, 2])
        >>> DQN((4, 84, 84), 6, [32, 64, 64, 512], dueling=False)(torch.zeros(1, 4, 84, 84))['logit'].shape
        torch.Size([1, 6])
        >>> frames = DQN((4, 84, 84), 6, [32, 64, 64, 512], obs_dtype='uint8', obs_range=[0, 255])
        >>> frames(torch.zeros(1, 4, 84, 84, dtype=torch.uint8))['logit'].shape
        torch.Size([1, 6])
        >>> [q.shape for q in DQN(obs_shape=4, action_shape=[3, 2])(torch.zeros(5, 4))['logit']]
        [torch.Size([5, 3]), torch.Size([5, 2])]
    """

    def __init__(
        self,
        obs_shape: int | Sequence[int],
        action_shape: int | Sequence[int],
        encoder_hidden_size_list: Sequence[int] = (128, 128, 64),
        dueling: bool = True,
        head_hidden_size: int | None = None,
        head_layer_num: int = 1,
        activation: str = "relu",
        noise: bool = False,
        obs_dtype: str | None = None,
        obs_range: Sequence[float] | None = None,
    ) -> None:
        super().__init__()
        self.obs_input = ObsInput(type(self).__name__, obs_shape, obs_dtype, obs_range)
        self.obs_shape = self.obs_input.obs_shape
        self.action_nums = action_counts(action_shape)
        self.action_num = sum(self.action_nums)
        self.action_shape = action_shape
        if not isinstance(head_layer_num, int) or isinstance(head_layer_num, bool) or head_layer_num < 0:
            raise ConfigError(f"head_layer_num must be an int >= 0, got {head_layer_num!r}")
        self.encoder = build_encoder(obs_shape, encoder_hidden_size_list, activation)
        size = self.encoder.output_size
        if head_hidden_size is None:
            head_hidden_size = size
        if not isinstance(head_hidden_size, int) or isinstance(head_hidden_size, bool) or head_hidden_size < 1:
            raise ConfigError(f"head_hidden_size must be a positive int or None, got {head_hidden_size!r}")
        self.projection: nn.Module = nn.Identity() if head_hidden_size == size else nn.Linear(size, head_hidden_size)
        head_cls = DuelingHead if dueling else DiscreteHead
        self.noise = bool(noise)
        heads = [head_cls(head_hidden_size, n, head_layer_num, activation, noise=self.noise) for n in self.action_nums]
        self.multi_discrete = isinstance(action_shape, (list, tuple)) and len(self.action_nums) > 1
        if self.multi_discrete:
            self.heads = nn.ModuleList(heads)
        else:
            self.head = heads[0]

    def forward(self, obs: torch.Tensor) -> dict[str, Any]:
        features = self.projection(self.encoder(self.obs_input(obs)))
        if self.multi_discrete:
            return {"logit": [head(features) for head in self.heads]}
        return {"logit": self.head(features)}


class PerActionOutputs(nn.Module):
    """A :class:`DQN` network (not dueling) with ``outputs_per_action`` outputs for each action, read as a
    ``(batch, actions, outputs_per_action)`` tensor by :meth:`per_action`: the base of the distributional models
    (C51's atom logits, QR-DQN's quantiles). The other arguments are :class:`DQN`'s."""

    def __init__(
        self,
        obs_shape: int | Sequence[int],
        action_shape: int | Sequence[int],
        outputs_per_action: int,
        encoder_hidden_size_list: Sequence[int],
        head_hidden_size: int | None,
        head_layer_num: int,
        activation: str,
        noise: bool,
        obs_dtype: str | None,
        obs_range: Sequence[float] | None,
    ) -> None:
        super().__init__()
        self.obs_input = ObsInput(type(self).__name__, obs_shape, obs_dtype, obs_range)
        self.obs_shape = self.obs_input.obs_shape
        self.action_num = action_count(action_shape)
        self.outputs_per_action = outputs_per_action
        self.net = DQN(
            obs_shape,
            self.action_num * outputs_per_action,
            encoder_hidden_size_list,
            dueling=False,
            head_hidden_size=head_hidden_size,
            head_layer_num=head_layer_num,
            activation=activation,
            noise=noise,
        )

    def per_action(self, obs: torch.Tensor) -> torch.Tensor:
        """The network's outputs for ``obs`` as ``(batch, actions, outputs_per_action)``."""
        return self.net(self.obs_input(obs))["logit"].view(obs.shape[0], self.action_num, self.outputs_per_action)


DQN_KEYS = frozenset(
    {
        "obs_shape",
        "action_shape",
        "encoder_hidden_size_list",
        "dueling",
        "head_hidden_size",
        "head_layer_num",
        "activation",
        "noise",
        *INPUT_KEYS,
    }
)


def model_from_config(model_cfg: dict[str, Any]) -> DQN:
    """A :class:`DQN` from a ``policy.model`` config section (unknown keys are a ``ConfigError``)."""
    kwargs = model_kwargs("DQN", model_cfg, DQN_KEYS)
    return DQN(**kwargs)
