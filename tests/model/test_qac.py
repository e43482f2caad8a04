"""QAC: shapes from obs_shape / action_shape, bounded reparameterized actions, the squashed log-density."""

from __future__ import annotations

import math

import pytest
import torch

from ding.errors import ConfigError
from ding.model.qac import QAC, qac_from_config, squashed_log_prob


@pytest.mark.parametrize("obs_shape, action_shape, k", [(3, 1, 1), ([5], (2,), 2), ((11,), [3], 3)])
def test_shapes_follow_obs_and_action_shape(obs_shape: object, action_shape: object, k: int) -> None:
    model = QAC(obs_shape, action_shape, actor_head_hidden_size=16, critic_head_hidden_size=16)  # type: ignore[arg-type]
    n = model.obs_shape[0]
    obs = torch.randn(7, n)
    mu, log_std = model.compute_actor(obs)["logit"]
    assert mu.shape == log_std.shape == (7, k)
    action, log_prob = model.sample(obs)
    assert action.shape == (7, k) and log_prob.shape == (7,)
    assert model.compute_critic(obs, action)["q_value"].shape == (2, 7)
    single = QAC(obs_shape, action_shape, twin_critic=False)  # type: ignore[arg-type]
    assert single.compute_critic(obs, action)["q_value"].shape == (7,)
    assert model(obs)["logit"][0].shape == (7, k)
    assert model(obs, "compute_critic", action)["q_value"].shape == (2, 7)


def test_actions_are_bounded_even_for_extreme_inputs() -> None:
    torch.manual_seed(0)
    model = QAC(3, 2)
    obs = torch.randn(256, 3) * 1000
    action, log_prob = model.sample(obs)
    assert action.abs().max() <= 1.0 and torch.isfinite(log_prob).all()
    assert model.deterministic(obs).abs().max() <= 1.0
    _, log_std = model.compute_actor(obs)["logit"]
    assert log_std.min() >= -20 and log_std.max() <= 2


def test_sample_is_reparameterized() -> None:
    model = QAC(3, 1)
    action, log_prob = model.sample(torch.randn(4, 3))
    (action.sum() + log_prob.sum()).backward()
    assert all(p.grad is not None for p in model.actor.parameters())


def test_squashed_log_prob_matches_change_of_variables() -> None:
    mu, log_std = torch.tensor([[0.3, -0.2]]), torch.tensor([[-0.5, 0.1]])
    u = torch.tensor([[0.7, -1.9]])
    normal = torch.distributions.Normal(mu, log_std.exp())
    expected = (normal.log_prob(u) - torch.log(1 - torch.tanh(u) ** 2)).sum(-1)
    assert torch.allclose(squashed_log_prob(u, mu, log_std), expected, atol=1e-5)
    # a density over [-1, 1]: integrates to about 1 for a 1-D action
    grid = torch.linspace(-0.9999, 0.9999, 20001).unsqueeze(-1)
    density = squashed_log_prob(torch.atanh(grid), torch.zeros(1, 1), torch.zeros(1, 1)).exp()
    assert math.isclose(float(torch.trapezoid(density, grid.squeeze(-1))), 1.0, abs_tol=1e-3)


def test_bad_shapes_and_config_keys_are_errors() -> None:
    with pytest.raises(ConfigError, match="Box"):
        QAC(3, (2, 2))
    with pytest.raises(ConfigError, match=r"image obs_shape \(3, 4, 4\) needs encoder_hidden_size_list"):
        QAC((3, 4, 4), 1)
    with pytest.raises(ConfigError, match="vectors or"):
        QAC((3, 4), 1)
    with pytest.raises(ConfigError, match="does not take"):
        qac_from_config({"obs_shape": 3, "action_shape": 1, "encoder": [8]})
    with pytest.raises(ConfigError, match="action_shape is not set"):
        qac_from_config({"obs_shape": 3, "action_shape": None})
    with pytest.raises(ConfigError, match=r"actor_head_layer_num must be an int >= 0, got -1"):
        QAC(3, 1, actor_head_layer_num=-1)
    model = QAC(3, 1)
    with pytest.raises(ValueError, match="obs_shape"):
        model.compute_actor(torch.zeros(2, 4))
    with pytest.raises(ValueError, match="action_shape"):
        model.compute_critic(torch.zeros(2, 3), torch.zeros(2, 2))


def test_image_observations_are_encoded_by_each_side() -> None:
    model = qac_from_config({"obs_shape": [3, 32, 32], "action_shape": 2, "encoder_hidden_size_list": [8, 16, 32]})
    obs = torch.rand(6, 3, 32, 32)
    action, log_prob = model.sample(obs)
    assert action.shape == (6, 2) and log_prob.shape == (6,)
    assert model.compute_critic(obs, action)["q_value"].shape == (2, 6)
    # the actor's loss reaches the actor encoder only; the critic's, the critic encoder only
    model.sample(obs)[1].sum().backward()
    assert all(p.grad is not None for p in model.actor_encoder.parameters())
    assert all(p.grad is None for p in model.critic_encoder.parameters())
    with pytest.raises(ValueError, match=r"obs_shape \(3, 32, 32\) got a batch of shape \(6, 3, 16, 16\)"):
        model.compute_actor(torch.zeros(6, 3, 16, 16))


def test_vector_encoder_is_optional() -> None:
    plain, encoded = QAC(5, 1), QAC(5, 1, encoder_hidden_size_list=[32, 16])
    assert isinstance(plain.actor_encoder, torch.nn.Identity)
    assert encoded.actor[0][0].in_features == 16
    assert encoded.compute_actor(torch.zeros(2, 5))["logit"][0].shape == (2, 1)


def _linear_widths(module: torch.nn.Module) -> list[int]:
    return [layer.out_features for layer in module.modules() if isinstance(layer, torch.nn.Linear)]


@pytest.mark.parametrize("layer_num", [0, 1, 3])
def test_head_layer_num_counts_the_layers_after_the_first_as_di_engine_and_the_other_models_do(layer_num: int) -> None:
    """A DI-engine SAC config's ``*_head_layer_num`` builds the network DI-engine builds: a first layer of the head
    width, then ``layer_num`` more, then the outputs (mu and log_std of each action dimension; one Q-value)."""
    model = qac_from_config(
        {
            "obs_shape": 3,
            "action_shape": 2,
            "actor_head_hidden_size": 32,
            "actor_head_layer_num": layer_num,
            "critic_head_hidden_size": 16,
            "critic_head_layer_num": layer_num,
        }
    )
    assert _linear_widths(model.actor) == [32] * (1 + layer_num) + [4]
    for critic in model.critic:
        assert _linear_widths(critic) == [16] * (1 + layer_num) + [1]


def test_the_sac_policys_default_model_keeps_two_hidden_layers_of_256() -> None:
    from ding.policy.sac import SACPolicy

    model = SACPolicy({"model": {"obs_shape": 3, "action_shape": 1}}, seed=0).model
    assert _linear_widths(model.actor) == [256, 256, 2]
    assert [_linear_widths(critic) for critic in model.critic] == [[256, 256, 1]] * 2
