"""The C51 model: a DQN network whose head gives, per action, a categorical distribution over fixed value atoms.

The atoms are ``n_atom`` values evenly spaced over ``[v_min, v_max]`` (the model's ``support``). The
network is ding's :class:`~ding.model.dqn.DQN` (encoder, optional projection and a plain Q head) with
``n_atom`` outputs per action, read as the logits of that action's distribution.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from ding.errors import ConfigError
from ding.model.common import model_kwargs
from ding.model.dqn import PerActionOutputs
from ding.model.obs_input import INPUT_KEYS


def atom_support(v_min: float, v_max: float, n_atom: int) -> torch.Tensor:
    """The ``n_atom`` atom values ``v_min, v_min + delta, ..., v_max`` of a categorical value distribution.

    >>> atom_support(-1, 1, 5).tolist()
    [-1.0, -0.5, 0.0, 0.5, 1.0]
    >>> atom_support(1, 1, 5)
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: v_min must be less than v_max, got v_min=1 and v_max=1
    """
    for name, value in (("v_min", v_min), ("v_max", v_max)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not float("-inf") < value < float("inf"):
            raise ConfigError(f"{name} must be a finite number, got {value!r}")
    if not v_min < v_max:
        raise ConfigError(f"v_min must be less than v_max, got v_min={v_min!r} and v_max={v_max!r}")
    if isinstance(n_atom, bool) or not isinstance(n_atom, int) or n_atom < 2:
        raise ConfigError(f"n_atom must be an int >= 2, got {n_atom!r}")
    return torch.linspace(float(v_min), float(v_max), n_atom)


class C51DQN(PerActionOutputs):
    """Value distributions for every discrete action, from a vector or image observation.

    ``forward(obs)`` returns

    - ``distribution``: ``(batch, action_shape, n_atom)`` probabilities over the atoms (each row sums to 1),
    - ``log_distribution``: their logarithms (computed stably, for the cross-entropy loss),
    - ``logit``: ``(batch, action_shape)`` Q-values, the distributions' means (what acting uses).

    ``encoder_hidden_size_list``, ``head_hidden_size``, ``head_layer_num``, ``activation``, ``noise``, ``obs_dtype`` and
    ``obs_range`` are those of :class:`~ding.model.dqn.DQN`; the head is not dueling.

    Example:
        >>> model = C51DQN(obs_shape=4, action_shape=2, encoder_hidden_size_list=[64, 64], n_atom=11)
        >>> out = model(torch.zeros(3, 4))
        >>> out['logit'].shape, out['distribution'].shape, model.support.shape
        (torch.Size([3, 2]), torch.Size([3, 2, 11]), torch.Size([11]))
        >>> torch.allclose(out['distribution'].sum(-1), torch.ones(3, 2))
        True
    """

    support: torch.Tensor

    def __init__(
        self,
        obs_shape: int | Sequence[int],
        action_shape: int | Sequence[int],
        encoder_hidden_size_list: Sequence[int] = (128, 128, 64),
        head_hidden_size: int | None = None,
        head_layer_num: int = 1,
        activation: str = "relu",
        noise: bool = False,
        v_min: float = -10,
        v_max: float = 10,
        n_atom: int = 51,
        obs_dtype: str | None = None,
        obs_range: Sequence[float] | None = None,
    ) -> None:
        support = atom_support(v_min, v_max, n_atom)
        super().__init__(
            obs_shape,
            action_shape,
            n_atom,
            encoder_hidden_size_list,
            head_hidden_size,
            head_layer_num,
            activation,
            noise,
            obs_dtype,
            obs_range,
        )
        self.register_buffer("support", support)
        self.n_atom = n_atom

    def forward(self, obs: torch.Tensor) -> dict[str, torch.Tensor]:
        log_distribution = torch.log_softmax(self.per_action(obs), dim=-1)
        distribution = log_distribution.exp()
        return {
            "logit": (distribution * self.support).sum(-1),
            "distribution": distribution,
            "log_distribution": log_distribution,
        }


C51_KEYS = frozenset(
    {
        "obs_shape",
        "action_shape",
        "encoder_hidden_size_list",
        "head_hidden_size",
        "head_layer_num",
        "activation",
        "noise",
        "v_min",
        "v_max",
        "n_atom",
        *INPUT_KEYS,
    }
)


def c51_from_config(model_cfg: dict[str, Any]) -> C51DQN:
    """A :class:`C51DQN` from a ``policy.model`` config section (unknown keys are a ``ConfigError``).

    >>> c51_from_config({'obs_shape': 4, 'action_shape': 2, 'n_atom': 21}).support.shape
    torch.Size([21])
    """
    kwargs = model_kwargs("C51", model_cfg, C51_KEYS)
    return C51DQN(**kwargs)
