"""The QR-DQN model: a DQN network whose head gives, per action, ``num_quantiles`` quantiles of the return.

Quantile ``i`` is the return's value at level ``tau_i = (2 i + 1) / (2 num_quantiles)`` (the midpoints of equal
slices of probability); an action's value is the mean of its quantiles. The network is ding's
:class:`~ding.model.dqn.DQN` (encoder, optional projection and a plain Q head) with ``num_quantiles`` outputs per
action.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from ding.model.common import model_kwargs, positive_int
from ding.model.dqn import PerActionOutputs
from ding.model.obs_input import INPUT_KEYS


def quantile_levels(num_quantiles: int) -> torch.Tensor:
    """The levels ``tau_i = (2 i + 1) / (2 n)`` the ``n`` quantiles estimate.

    >>> quantile_levels(4).tolist()
    [0.125, 0.375, 0.625, 0.875]
    """
    return (2 * torch.arange(num_quantiles, dtype=torch.float32) + 1) / (2 * num_quantiles)


class QRDQN(PerActionOutputs):
    """Return quantiles for every discrete action, from a vector or image observation.

    ``forward(obs)`` returns

    - ``q``: ``(batch, action_shape, num_quantiles)`` quantile values,
    - ``logit``: ``(batch, action_shape)`` Q-values, the quantiles' means (what acting uses),
    - ``tau``: ``(batch, num_quantiles, 1)`` the quantile levels (DI-engine's output).

    ``encoder_hidden_size_list``, ``head_hidden_size``, ``head_layer_num``, ``activation``, ``noise``, ``obs_dtype``
    and ``obs_range`` are those of :class:`~ding.model.dqn.DQN`; the head is not dueling.

    Example:
        >>> model = QRDQN(obs_shape=4, action_shape=2, encoder_hidden_size_list=[32, 32], num_quantiles=8)
        >>> out = model(torch.zeros(3, 4))
        >>> out['q'].shape, out['logit'].shape, out['tau'].shape
        (torch.Size([3, 2, 8]), torch.Size([3, 2]), torch.Size([3, 8, 1]))
    """

    tau: torch.Tensor

    def __init__(
        self,
        obs_shape: int | Sequence[int],
        action_shape: int | Sequence[int],
        encoder_hidden_size_list: Sequence[int] = (128, 128, 64),
        head_hidden_size: int | None = None,
        head_layer_num: int = 1,
        activation: str = "relu",
        noise: bool = False,
        num_quantiles: int = 32,
        obs_dtype: str | None = None,
        obs_range: Sequence[float] | None = None,
    ) -> None:
        num_quantiles = positive_int(num_quantiles, "num_quantiles")
        super().__init__(
            obs_shape,
            action_shape,
            num_quantiles,
            encoder_hidden_size_list,
            head_hidden_size,
            head_layer_num,
            activation,
            noise,
            obs_dtype,
            obs_range,
        )
        self.num_quantiles = num_quantiles
        self.register_buffer("tau", quantile_levels(num_quantiles))

    def forward(self, obs: torch.Tensor) -> dict[str, torch.Tensor]:
        q = self.per_action(obs)
        return {"q": q, "logit": q.mean(-1), "tau": self.tau.view(1, -1, 1).expand(obs.shape[0], -1, 1)}


QRDQN_KEYS = frozenset(
    {
        "obs_shape",
        "action_shape",
        "encoder_hidden_size_list",
        "head_hidden_size",
        "head_layer_num",
        "activation",
        "noise",
        "num_quantiles",
        *INPUT_KEYS,
    }
)


def qrdqn_from_config(model_cfg: dict[str, Any]) -> QRDQN:
    """A :class:`QRDQN` from a ``policy.model`` config section (unknown keys are a ``ConfigError``).

    >>> qrdqn_from_config({'obs_shape': 4, 'action_shape': 2, 'num_quantiles': 16}).num_quantiles
    16
    """
    return QRDQN(**model_kwargs("QRDQN", model_cfg, QRDQN_KEYS))
