"""A2C: on-policy advantage actor-critic; each collected sample is learned from once (DI-engine's ``a2c``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import torch
from torch import nn

from ding.config.policy_registry import POLICY_REGISTRY
from ding.config.policy_sections import NO_PRIORITY, evaluator_section, learner_section
from ding.model.vac import ACTION_SPACES
from ding.policy.model_keys import width
from ding.policy.ppo import PPOPolicy
from ding.utils.accepts import count, fixed, fraction, non_negative, one_of, optional, positive, satisfying
from ding.utils.value_rules import UnitFloat, conforms

ADAM_BETAS = tuple[UnitFloat, UnitFloat]
"""Adam's two decay rates (each below 1, which :data:`A2CPolicy.config` adds)."""


def a2c_loss(
    logp: torch.Tensor,
    advantage: torch.Tensor,
    value: torch.Tensor,
    return_: torch.Tensor,
    entropy: torch.Tensor,
    value_weight: float,
    entropy_weight: float,
) -> dict[str, torch.Tensor]:
    """A2C's losses of a batch: ``total = policy + value_weight * value - entropy_weight * entropy``.

    ``policy`` is ``-mean(logp * A)`` (the policy gradient with advantages ``A``), ``value`` is
    ``mean((return - value) ** 2)`` and ``entropy`` the mean entropy of the action distributions.

    >>> out = a2c_loss(torch.log(torch.tensor([0.5])), torch.tensor([2.0]), torch.tensor([1.0]), torch.tensor([3.0]),
    ...                torch.tensor([0.7]), 0.5, 0.01)
    >>> [round(out[key].item(), 4) for key in ('policy_loss', 'value_loss', 'entropy_loss', 'total_loss')]
    [1.3863, 4.0, 0.7, 3.3793]
    """
    policy_loss = -(logp * advantage).mean()
    value_loss = (return_ - value).pow(2).mean()
    entropy_loss = entropy.mean()
    total = policy_loss + value_weight * value_loss - entropy_weight * entropy_loss
    return {"total_loss": total, "policy_loss": policy_loss, "value_loss": value_loss, "entropy_loss": entropy_loss}


@POLICY_REGISTRY.register("a2c")
class A2CPolicy(PPOPolicy):
    """Advantage actor-critic for discrete or continuous actions (DI-engine's ``a2c`` config keys).

    Acting, the model (:class:`~ding.model.vac.VAC`) and the samples are PPO's: actions are drawn
    from the current policy, a trajectory becomes samples when its episode ends or the on-policy
    pipeline cuts it, and advantages are GAE (``collect.discount_factor``, ``collect.gae_lambda``),
    bootstrapped with the critic's value unless the episode terminated (``learn.ignore_done``:
    bootstrapped after real ends too). Learning differs: every collection is learned once
    (``learn.update_per_collect`` is 1), in shuffled minibatches of ``learn.batch_size``, with the
    plain policy-gradient loss (no ratio, no clipping; see :func:`a2c_loss`), advantages
    normalized per minibatch when ``adv_norm``, Adam with ``betas`` and ``eps`` and the gradient
    norm clipped to ``grad_norm`` (None: no clipping).

    Example:
        >>> import numpy as np
        >>> policy = A2CPolicy({'model': {'obs_shape': 4, 'action_shape': 2}}, seed=0)
        >>> out = policy.collect_mode.forward({0: np.zeros(4, np.float32)})
        >>> out[0]['action'] in (0, 1), policy.learn_mode.update_per_collect
        (True, 1)
    """

    algorithm = "A2C"

    config: ClassVar[dict[str, Any]] = {
        "cuda": False,
        "on_policy": fixed(True, note="A2C learns on-policy"),
        "priority": fixed(False, note=NO_PRIORITY),
        "priority_IS_weight": fixed(False, note=NO_PRIORITY),
        "action_space": one_of(*ACTION_SPACES, default="discrete"),
        "model": {
            **PPOPolicy.config["model"],
            "actor_head_hidden_size": width(64),
            "critic_head_hidden_size": width(64),
        },
        "learn": {
            "update_per_collect": fixed(
                1, note="each sample is learned once; PPO learns several epochs per collection"
            ),
            "batch_size": count(64),
            "learning_rate": positive(0.001),
            "betas": satisfying(
                "a pair of numbers in [0, 1)", lambda v: conforms(ADAM_BETAS, v) and max(v) < 1.0, default=(0.9, 0.999)
            ),
            "eps": positive(1e-8),
            "grad_norm": optional(positive(0.5), note="None: no clipping"),
            "value_weight": non_negative(0.5),
            "entropy_weight": non_negative(0.01),
            "adv_norm": False,
            "ignore_done": False,
            **learner_section(log_show_after_iter=100),
        },
        "collect": {**PPOPolicy.config["collect"], "n_sample": count(80), "discount_factor": fraction(0.9)},
        "eval": evaluator_section(eval_freq=1000),
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None, model: nn.Module | None = None, seed: int = 0) -> None:
        super().__init__(cfg, model=model, seed=seed)
        learn = self._cfg.learn
        self._optimizer = torch.optim.Adam(
            self._model.parameters(), lr=learn.learning_rate, betas=tuple(learn.betas), eps=learn.eps
        )

    def _update_per_collect(self) -> int:
        return int(self._cfg.learn.update_per_collect)

    def _forward_learn(self, batch: list[dict[str, Any]]) -> dict[str, float]:
        if not batch:
            raise ValueError("cannot learn from an empty batch")
        learn = self._cfg.learn
        data = self._collate(batch)
        advantage = data["adv"]
        if learn.adv_norm and len(batch) > 1:
            advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
        out = self._model(data["obs"])
        dist = self._distribution(out["logit"])
        losses = a2c_loss(
            dist.log_prob(data["action"]),
            advantage,
            out["value"],
            data["return"],
            dist.entropy(),
            float(learn.value_weight),
            float(learn.entropy_weight),
        )
        self._optimizer.zero_grad()
        losses["total_loss"].backward()
        grad_norm = None
        if learn.grad_norm is not None:
            grad_norm = nn.utils.clip_grad_norm_(self._model.parameters(), float(learn.grad_norm))
        self._optimizer.step()
        self._learn_iter += 1
        stats = {key: float(value.item()) for key, value in losses.items()}
        if grad_norm is not None:
            stats["grad_norm"] = float(grad_norm)
        return {
            "cur_lr": float(self._optimizer.param_groups[0]["lr"]),
            **stats,
            "adv_abs_max": float(advantage.abs().max().item()),
            "value_mean": float(out["value"].mean().item()),
        }
