"""SAC's entropy temperature ``alpha``: fixed, or tuned so that the policy's entropy approaches a target."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch


class Temperature:
    """``alpha``, from ``learn.alpha``; with ``learn.auto_alpha`` :meth:`update` tunes it by Adam at
    ``learn.learning_rate_alpha``, on ``log alpha`` with ``learn.log_space`` (else on alpha itself, kept positive).

    Example:
        >>> temperature = Temperature(alpha=0.2, auto=True, log_space=True, learning_rate=0.1, device='cpu')
        >>> round(temperature.value, 4)
        0.2
        >>> loss = temperature.update(torch.tensor(1.0))  # log-probabilities above -target: entropy is too low
        >>> temperature.value > 0.2
        True
    """

    def __init__(self, alpha: float, auto: bool, log_space: bool, learning_rate: float, device: Any) -> None:
        self.auto = bool(auto)
        self._log_space = bool(log_space)
        initial = math.log(alpha) if self._log_space else float(alpha)
        self._param = torch.tensor([initial], dtype=torch.float32, device=device, requires_grad=True)
        self._optimizer = torch.optim.Adam([self._param], lr=learning_rate)

    def tensor(self) -> torch.Tensor:
        """``alpha`` as a one-element tensor (with its gradient)."""
        return self._param.exp() if self._log_space else self._param.clamp(min=1e-8)

    @property
    def value(self) -> float:
        return float(self.tensor().item())

    def update(self, entropy_gap: torch.Tensor) -> float:
        """One step on ``-alpha_term * entropy_gap``, where ``entropy_gap`` is the batch's mean of
        ``log pi + target_entropy`` (no gradient): alpha rises while the entropy is below its target. Returns the
        loss."""
        alpha_term = self._param if self._log_space else self.tensor()
        loss = -(alpha_term * entropy_gap.detach()).sum()
        self._optimizer.zero_grad()
        loss.backward()
        self._optimizer.step()
        if not self._log_space:
            with torch.no_grad():
                self._param.clamp_(min=1e-8)
        return float(loss.item())

    def state_dict(self) -> dict[str, Any]:
        return {"optimizer_alpha": self._optimizer.state_dict(), "alpha_param": self._param.detach().clone()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`state_dict` gave (either entry may be missing)."""
        if "optimizer_alpha" in state:
            self._optimizer.load_state_dict(state["optimizer_alpha"])
        if "alpha_param" in state:
            with torch.no_grad():
                self._param.copy_(torch.as_tensor(state["alpha_param"], dtype=torch.float32))
