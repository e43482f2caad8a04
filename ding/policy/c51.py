"""C51: DQN with a categorical distribution of returns over fixed atoms, learned by cross-entropy."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import torch
from torch import nn

from ding.config.policy_registry import POLICY_REGISTRY
from ding.model.c51 import c51_from_config
from ding.policy.dqn import DQNPolicy
from ding.policy.model_keys import ACTIVATION, layers, width, widths
from ding.utils.accepts import count, number, optional


def categorical_projection(
    next_dist: torch.Tensor,
    reward: torch.Tensor,
    discount: torch.Tensor,
    done: torch.Tensor,
    support: torch.Tensor,
) -> torch.Tensor:
    """The distribution of ``reward + discount * (1 - done) * Z`` projected back onto the atoms ``support``.

    ``next_dist`` (``(batch, n_atom)``) gives the probabilities of ``Z`` on ``support``; ``reward``,
    ``discount`` and ``done`` have shape ``(batch,)``. Each shifted atom is clipped into
    ``[v_min, v_max]`` and its probability split between the two atoms around it in proportion to
    how close it lies to each (all of it to an atom it falls on), so every row keeps a total of 1.

    >>> support = torch.tensor([0.0, 1.0, 2.0])
    >>> next_dist = torch.tensor([[0.5, 0.5, 0.0]])
    >>> categorical_projection(next_dist, torch.tensor([0.5]), torch.ones(1), torch.zeros(1), support).tolist()
    [[0.25, 0.5, 0.25]]
    """
    delta = support[1] - support[0]
    shifted = reward.unsqueeze(-1) + (discount * (1.0 - done)).unsqueeze(-1) * support
    shifted = shifted.clamp(float(support[0]), float(support[-1]))
    # share of shifted atom i that lands on atom j: 1 at j, falling linearly to 0 at the neighbouring atoms
    share = (1.0 - (shifted.unsqueeze(-1) - support).abs() / delta).clamp(min=0.0)
    return torch.einsum("bi,bij->bj", next_dist, share)


def categorical_td_errors(log_dist: torch.Tensor, target_dist: torch.Tensor) -> torch.Tensor:
    """Each sample's cross-entropy ``-sum_j target_j * log p_j`` of its taken action's distribution against its target
    (``(batch,)``: the loss and, with prioritized replay, the new priority).

    >>> categorical_td_errors(torch.log(torch.tensor([[0.5, 0.5], [1.0, 1e-9]])), torch.tensor([[1.0, 0.0]] * 2))
    tensor([0.6931, -0.0000])
    """
    return -(target_dist * log_dist).sum(-1)


def categorical_td_loss(log_dist: torch.Tensor, target_dist: torch.Tensor) -> torch.Tensor:
    """The mean of :func:`categorical_td_errors` over the batch.

    >>> categorical_td_loss(torch.log(torch.tensor([[0.5, 0.5]])), torch.tensor([[1.0, 0.0]])).item()
    0.6931471824645996
    """
    return categorical_td_errors(log_dist, target_dist).mean()


@POLICY_REGISTRY.register("c51")
class C51Policy(DQNPolicy):
    """Distributional DQN with 51 (``model.n_atom``) atoms, DI-engine's ``c51`` policy and config keys.

    Everything but the value and its loss is :class:`~ding.policy.dqn.DQNPolicy`'s: epsilon-greedy
    collection on the distributions' means, n-step samples, target model updates, checkpoints. The
    target is the target model's distribution at the n-step next observation, for the action the
    online model rates best, shifted by the n-step reward and discount (no shift after a real end,
    or always shifted with ``learn.ignore_done``) and projected onto the atoms (see
    :func:`categorical_projection`); the loss is its cross-entropy with the taken action's
    distribution. ``model.v_min``, ``v_max`` and ``n_atom`` set the atoms (the model's ``support``).

    Example:
        >>> import numpy as np
        >>> policy = C51Policy({'model': {'obs_shape': 4, 'action_shape': 2, 'n_atom': 11}}, seed=0)
        >>> out = policy.eval_mode.forward({0: np.zeros(4, np.float32)})
        >>> out[0]['action'] in (0, 1), out[0]['logit'].shape
        (True, (2,))
    """

    algorithm = "C51"

    config: ClassVar[dict[str, Any]] = {
        **DQNPolicy.config,
        "model": {
            "encoder_hidden_size_list": widths([128, 128, 64]),
            "head_hidden_size": optional(width()),
            "head_layer_num": layers(1),
            "activation": ACTIVATION,
            "noise": False,
            "v_min": number(-10),
            "v_max": number(10),
            "n_atom": count(51, low=2),
        },
    }

    @staticmethod
    def _model_from_config(model_cfg: dict[str, Any]) -> nn.Module:
        return c51_from_config(model_cfg)

    def _check_model(self, model: nn.Module) -> None:
        support = getattr(model, "support", None)
        if not isinstance(support, torch.Tensor) or support.ndim != 1 or len(support) < 2:
            raise TypeError(
                f"a C51 model needs a 'support' tensor of its atom values (as C51DQN has), got {support!r} "
                f"on {type(model).__name__}"
            )

    @property
    def support(self) -> torch.Tensor:
        """The atom values, from the model."""
        support = self._model.support
        assert isinstance(support, torch.Tensor)  # checked when the policy was built
        return support

    def target_distribution(self, data: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """The projected target distribution (``(batch, n_atom)``) of a collated batch (no gradient)."""
        chosen = self._target_output_of_best_action(data["next_obs"], "distribution")
        return categorical_projection(chosen, data["reward"], data["discount"], self._done_mask(data), self.support)

    def _loss(self, data: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, float, float]:
        """Each sample's cross-entropy of its taken action's distribution against :meth:`target_distribution`."""
        target = self.target_distribution(data)
        out = self._model(data["obs"])
        rows = torch.arange(len(data["action"]), device=self._device)
        loss = categorical_td_errors(out["log_distribution"][rows, data["action"]], target)
        q_value = float(out["logit"][rows, data["action"]].mean().item())
        return loss, q_value, float((target * self.support).sum(-1).mean().item())
