"""What SAC and discrete SAC add to the replay actor-critics: the entropy temperature and its tuning."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from ding.policy.replay_actor_critic import ReplayActorCritic
from ding.policy.temperature import Temperature
from ding.utils.accepts import fraction, number, optional, positive

SOFT_ACTOR_CRITIC_LEARN: dict[str, Any] = {
    "learning_rate_q": positive(3e-4),
    "learning_rate_policy": positive(3e-4),
    "learning_rate_alpha": positive(3e-4),
    "target_theta": fraction(0.005),
    "discount_factor": fraction(0.99),
    "alpha": positive(0.2),
    "auto_alpha": True,
    "log_space": True,
    "target_entropy": optional(number(), note="None: the policy's default"),
    "ignore_done": False,
}
"""The ``learn`` keys SAC and discrete SAC share: learning rates, target updates and the temperature."""


class SoftActorCritic(ReplayActorCritic):
    """Base of the soft actor-critics: :class:`~ding.policy.replay_actor_critic.ReplayActorCritic` with the
    temperature (:class:`~ding.policy.temperature.Temperature`, from ``learn.alpha``, ``auto_alpha``, ``log_space``
    and ``learning_rate_alpha``) tuned towards ``learn.target_entropy`` (:meth:`_default_target_entropy` when None).
    """

    def __init__(self, cfg: Mapping[str, Any] | None = None, model: nn.Module | None = None, seed: int = 0) -> None:
        super().__init__(cfg, model, seed)
        learn = self._cfg.learn
        self._temperature = Temperature(
            learn.alpha, learn.auto_alpha, learn.log_space, learn.learning_rate_alpha, self._device
        )
        target_entropy = learn.target_entropy
        self._target_entropy = float(self._default_target_entropy() if target_entropy is None else target_entropy)

    @abstractmethod
    def _default_target_entropy(self) -> float: ...

    @property
    def alpha(self) -> float:
        """The current entropy temperature."""
        return self._temperature.value

    def _finish_update(self, stats: dict[str, float], entropy_gap: torch.Tensor) -> dict[str, float]:
        """After the critic and actor steps: tune the temperature on ``entropy_gap`` (the batch's mean of
        ``log pi + target_entropy``), then :meth:`_end_update`; ``stats`` with ``alpha`` too."""
        if self._temperature.auto:
            stats["alpha_loss"] = self._temperature.update(entropy_gap)
        stats["alpha"] = self.alpha
        return self._end_update(stats)

    def _extra_state(self) -> dict[str, Any]:
        return self._temperature.state_dict()

    def _load_extra_state(self, state: Mapping[str, Any]) -> None:
        self._temperature.load_state_dict(state)
