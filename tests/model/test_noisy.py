"""Noisy layers: the means when off, factorized noise when on, fresh draws on resampling, learned sigmas; DQN and C51
heads built from them with ``noise``."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ding.model.c51 import c51_from_config
from ding.model.dqn import DQN, model_from_config
from ding.model.noisy import NoisyLinear, noisy_layers, resample_noise, set_noise


def test_off_gives_the_means_and_on_adds_factorized_noise() -> None:
    torch.manual_seed(0)
    layer = NoisyLinear(5, 3)
    x = torch.randn(7, 5)
    torch.testing.assert_close(layer(x), F.linear(x, layer.weight_mu, layer.bias_mu))
    set_noise(layer, True)
    weight = layer.weight_mu + layer.weight_sigma * layer.weight_eps
    torch.testing.assert_close(layer(x), F.linear(x, weight, layer.bias_mu + layer.bias_sigma * layer.bias_eps))
    assert torch.linalg.matrix_rank(layer.weight_eps) == 1  # eps_out eps_in^T
    torch.testing.assert_close(layer.weight_eps[:, 0] / layer.weight_eps[0, 0], layer.bias_eps / layer.bias_eps[0])


def test_resampling_draws_new_noise_reproducibly_from_torch_seed() -> None:
    torch.manual_seed(1)
    layer = NoisyLinear(4, 2)
    set_noise(layer, True)
    x = torch.ones(1, 4)
    before = layer(x).detach().clone()
    torch.manual_seed(2)
    resample_noise(layer)
    after = layer(x).detach().clone()
    assert not torch.equal(before, after)
    torch.manual_seed(2)
    resample_noise(layer)
    torch.testing.assert_close(layer(x).detach(), after)


def test_sigmas_learn_only_while_noise_is_on() -> None:
    layer = NoisyLinear(4, 2)
    layer(torch.ones(3, 4)).sum().backward()
    assert layer.weight_sigma.grad is None or not layer.weight_sigma.grad.any()
    set_noise(layer, True)
    layer(torch.ones(3, 4)).sum().backward()
    assert layer.weight_sigma.grad is not None and layer.weight_sigma.grad.abs().sum() > 0


def test_dqn_and_c51_heads_are_noisy_with_noise_and_plain_without() -> None:
    noisy = model_from_config({"obs_shape": 4, "action_shape": 2, "encoder_hidden_size_list": [16], "noise": True})
    assert isinstance(noisy, DQN) and len(noisy_layers(noisy)) == 4  # dueling: advantage and value, two layers each
    assert not noisy_layers(noisy.encoder) and "head.value.1.weight_sigma" in noisy.state_dict()
    assert not noisy_layers(DQN(4, 2, [16]))
    c51 = c51_from_config({"obs_shape": 4, "action_shape": 2, "encoder_hidden_size_list": [16], "noise": True})
    assert len(noisy_layers(c51)) == 2
    x = torch.randn(3, 4)
    plain = noisy(x)["logit"]
    set_noise(noisy, True)
    assert not torch.equal(noisy(x)["logit"], plain)
