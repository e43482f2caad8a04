"""QR-DQN: DQN with quantiles of the return per action, learned by the quantile Huber loss."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import torch
from torch import nn

from ding.config.policy_registry import POLICY_REGISTRY
from ding.model.qrdqn import QRDQN, qrdqn_from_config
from ding.policy.dqn import DQNPolicy
from ding.policy.model_keys import ACTIVATION, layers, width, widths
from ding.utils.accepts import count, non_negative, optional


def quantile_huber_loss(quantiles: torch.Tensor, target: torch.Tensor, tau: torch.Tensor, kappa: float) -> torch.Tensor:
    """The mean over the batch of :func:`quantile_huber_losses`.

    >>> tau = torch.tensor([0.25, 0.75])
    >>> quantile_huber_loss(torch.tensor([[0.0, 0.0]]), torch.tensor([[1.0, 1.0]]), tau, 0.0).item()  # under both
    1.0
    >>> quantile_huber_loss(torch.tensor([[0.0, 1.0]]), torch.tensor([[0.0, 1.0]]), tau, 1.0).item() > 0
    True
    """
    return quantile_huber_losses(quantiles, target, tau, kappa).mean()


def quantile_huber_losses(
    quantiles: torch.Tensor, target: torch.Tensor, tau: torch.Tensor, kappa: float
) -> torch.Tensor:
    """The quantile regression loss of ``quantiles`` (``(batch, n)``, at levels ``tau``) against ``target`` samples
    (``(batch, n')``): ``sum_i mean_j |tau_i - 1{u_ij < 0}| * H_kappa(u_ij) / kappa`` with ``u_ij = target_j -
    quantile_i`` and ``H_kappa`` the Huber loss of threshold ``kappa`` (``kappa = 0``: the absolute error, no
    division), one per sample (``(batch,)``: the loss and, with prioritized replay, the new priority).

    >>> tau = torch.tensor([0.25, 0.75])
    >>> quantile_huber_losses(torch.tensor([[0.0, 0.0], [1.0, 1.0]]), torch.tensor([[1.0, 1.0]] * 2), tau, 0.0)
    tensor([1., 0.])
    """
    u = target.unsqueeze(1) - quantiles.unsqueeze(2)  # (batch, n, n'): each target sample minus each quantile
    if kappa > 0:
        size = u.abs()
        huber = torch.where(size <= kappa, 0.5 * u.pow(2), kappa * (size - 0.5 * kappa)) / kappa
    else:
        huber = u.abs()
    weight = (tau.view(1, -1, 1) - (u.detach() < 0).float()).abs()
    return (weight * huber).mean(dim=2).sum(dim=1)


@POLICY_REGISTRY.register("qrdqn")
class QRDQNPolicy(DQNPolicy):
    """Quantile regression DQN, DI-engine's ``qrdqn`` policy and config keys.

    Everything but the value and its loss is :class:`~ding.policy.dqn.DQNPolicy`'s: epsilon-greedy collection on the
    quantiles' means, n-step samples, target model updates, noisy nets, checkpoints. The target quantiles are the
    n-step reward plus the discounted target-model quantiles of the next action the online model rates best (none
    after a real end, unless ``learn.ignore_done``); the loss is :func:`quantile_huber_loss` with ``learn.kappa``.
    ``model.num_quantiles`` sets the number of quantiles.

    Example:
        >>> import numpy as np
        >>> policy = QRDQNPolicy({'model': {'obs_shape': 4, 'action_shape': 2, 'num_quantiles': 8}}, seed=0)
        >>> out = policy.eval_mode.forward({0: np.zeros(4, np.float32)})
        >>> out[0]['action'] in (0, 1), out[0]['logit'].shape
        (True, (2,))
    """

    algorithm = "QRDQN"

    config: ClassVar[dict[str, Any]] = {
        **DQNPolicy.config,
        "model": {
            "encoder_hidden_size_list": widths([128, 128, 64]),
            "head_hidden_size": optional(width()),
            "head_layer_num": layers(1),
            "activation": ACTIVATION,
            "noise": False,
            "num_quantiles": count(32),
        },
        "learn": {**DQNPolicy.config["learn"], "kappa": non_negative(1.0, note="0: the absolute error")},
    }

    @staticmethod
    def _model_from_config(model_cfg: dict[str, Any]) -> nn.Module:
        return qrdqn_from_config(model_cfg)

    def _check_model(self, model: nn.Module) -> None:
        if not isinstance(model, QRDQN):
            raise TypeError(f"a QRDQN policy needs a QRDQN model (quantiles per action), got {type(model).__name__}")

    def target_quantiles(self, data: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """The target quantiles (``(batch, num_quantiles)``) of a collated batch (no gradient)."""
        chosen = self._target_output_of_best_action(data["next_obs"], "q")
        bootstrap = data["discount"] * (1.0 - self._done_mask(data))
        return data["reward"].unsqueeze(-1) + bootstrap.unsqueeze(-1) * chosen

    def _loss(self, data: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, float, float]:
        """Each sample's quantile Huber loss of its taken action's quantiles against :meth:`target_quantiles`."""
        target = self.target_quantiles(data)
        out = self._model(data["obs"])
        quantiles = out["q"][torch.arange(len(data["action"]), device=self._device), data["action"]]
        loss = quantile_huber_losses(quantiles, target, out["tau"][0, :, 0], float(self._cfg.learn.kappa))
        return loss, float(quantiles.mean().item()), float(target.mean().item())
