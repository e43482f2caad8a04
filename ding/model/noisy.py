"""Noisy networks for exploration: linear layers with learned, factorized Gaussian weight noise.

A :class:`NoisyLinear` computes ``x @ (mu_w + sigma_w * eps_w).T + (mu_b + sigma_b * eps_b)`` while its noise is on,
and ``x @ mu_w.T + mu_b`` while it is off. ``eps_w = f(eps_out) f(eps_in)^T`` and ``eps_b = f(eps_out)`` with
``f(x) = sign(x) sqrt(|x|)`` of standard normal draws (factorized noise: ``in + out`` draws per layer). The sigmas are
learned, so the network learns how much to explore. DI-engine's models take ``noise=True`` for it.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class NoisyLinear(nn.Module):
    """A linear layer with factorized Gaussian noise on its weights and bias (off until :func:`set_noise`).

    ``sigma0`` sets the noise's starting scale: each sigma starts at ``sigma0 / sqrt(in_features)`` (0.5, as in the
    NoisyNet paper).

    Example:
        >>> layer = NoisyLinear(3, 2)
        >>> x = torch.ones(4, 3)
        >>> bool(torch.equal(layer(x), F.linear(x, layer.weight_mu, layer.bias_mu)))  # noise off: the means
        True
        >>> set_noise(layer, True)
        >>> bool(torch.equal(layer(x), F.linear(x, layer.weight_mu, layer.bias_mu)))
        False
    """

    weight_eps: torch.Tensor
    bias_eps: torch.Tensor

    def __init__(self, in_features: int, out_features: int, sigma0: float = 0.5) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / math.sqrt(in_features)
        self.weight_mu = nn.Parameter(torch.empty(out_features, in_features).uniform_(-bound, bound))
        self.bias_mu = nn.Parameter(torch.empty(out_features).uniform_(-bound, bound))
        self.weight_sigma = nn.Parameter(torch.full((out_features, in_features), sigma0 * bound))
        self.bias_sigma = nn.Parameter(torch.full((out_features,), sigma0 * bound))
        self.register_buffer("weight_eps", torch.zeros(out_features, in_features))
        self.register_buffer("bias_eps", torch.zeros(out_features))
        self.noise_on = False
        self.resample()

    @staticmethod
    def _scaled_normal(size: int, device: torch.device) -> torch.Tensor:
        draw = torch.randn(size, device=device)
        return draw.sign() * draw.abs().sqrt()

    def resample(self) -> None:
        """Draw fresh noise (from torch's random generator)."""
        device = self.weight_mu.device
        eps_in = self._scaled_normal(self.in_features, device)
        eps_out = self._scaled_normal(self.out_features, device)
        with torch.no_grad():
            self.weight_eps.copy_(torch.outer(eps_out, eps_in))
            self.bias_eps.copy_(eps_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.noise_on:
            return F.linear(x, self.weight_mu, self.bias_mu)
        weight = self.weight_mu + self.weight_sigma * self.weight_eps
        return F.linear(x, weight, self.bias_mu + self.bias_sigma * self.bias_eps)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, noise_on={self.noise_on}"


def noisy_layers(model: nn.Module) -> list[NoisyLinear]:
    """The model's :class:`NoisyLinear` layers."""
    return [module for module in model.modules() if isinstance(module, NoisyLinear)]


def set_noise(model: nn.Module, on: bool) -> None:
    """Turn the noise of every :class:`NoisyLinear` in ``model`` on or off."""
    for layer in noisy_layers(model):
        layer.noise_on = on


def resample_noise(model: nn.Module) -> None:
    """Draw fresh noise for every :class:`NoisyLinear` in ``model``."""
    for layer in noisy_layers(model):
        layer.resample()
