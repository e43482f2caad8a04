"""The VAC model: head shapes for discrete and continuous actions, shared and separate encoders, config errors."""

from __future__ import annotations

import pytest
import torch

from ding.errors import ConfigError
from ding.model.common import ConvEncoder, FCEncoder
from ding.model.vac import VAC, vac_from_config


@pytest.mark.parametrize(
    ("obs_shape", "encoder", "hidden", "batch_shape"),
    [
        (4, FCEncoder, [16, 32], (7, 4)),
        ((3, 4), FCEncoder, [16, 32], (7, 3, 4)),
        ((3, 64, 64), ConvEncoder, [8, 16, 16, 32], (7, 3, 64, 64)),
    ],
)
@pytest.mark.parametrize("share_encoder", [True, False])
def test_discrete_heads_give_one_logit_per_action_and_one_value(
    obs_shape: object, encoder: type, hidden: list[int], batch_shape: tuple[int, ...], share_encoder: bool
) -> None:
    model = VAC(obs_shape, 5, "discrete", share_encoder, hidden)  # type: ignore[arg-type]
    assert isinstance(model.actor_encoder, encoder)
    assert (model.actor_encoder is model.critic_encoder) == share_encoder
    out = model(torch.zeros(batch_shape))
    assert out["logit"].shape == (7, 5) and out["value"].shape == (7,)
    assert model.compute_actor(torch.zeros(batch_shape))["logit"].shape == (7, 5)
    assert model.compute_critic(torch.zeros(batch_shape))["value"].shape == (7,)


@pytest.mark.parametrize("action_shape", [3, (3,), [3]])
def test_continuous_head_is_a_gaussian_with_state_independent_std(action_shape: object) -> None:
    model = VAC(6, action_shape, "continuous", sigma_init=-0.5)  # type: ignore[arg-type]
    obs = torch.randn(4, 6)
    logit = model(obs)["logit"]
    assert logit["mu"].shape == logit["sigma"].shape == (4, 3)
    assert torch.allclose(logit["sigma"], torch.full((4, 3), float(torch.tensor(-0.5).exp())))
    assert model.log_sigma is not None and model.log_sigma.requires_grad
    other = model(torch.randn(4, 6))["logit"]
    assert torch.equal(other["sigma"], logit["sigma"]) and not torch.equal(other["mu"], logit["mu"])


def test_shared_encoder_is_counted_once_and_separate_encoders_double_it() -> None:
    def encoder_params(model: VAC) -> int:
        params = {id(p): p.numel() for m in (model.actor_encoder, model.critic_encoder) for p in m.parameters()}
        return sum(params.values())

    shared, separate = VAC(4, 2, share_encoder=True), VAC(4, 2, share_encoder=False)
    assert encoder_params(separate) == 2 * encoder_params(shared)


def test_layer_sizes_follow_the_config() -> None:
    model = VAC(4, 2, encoder_hidden_size_list=[32, 16], actor_head_hidden_size=8, critic_head_hidden_size=12)
    shapes = [(m.in_features, m.out_features) for m in model.modules() if isinstance(m, torch.nn.Linear)]
    assert shapes == [(4, 32), (32, 16), (16, 8), (8, 2), (16, 12), (12, 1)]
    flat = VAC(4, 2, encoder_hidden_size_list=[32], actor_head_layer_num=0, critic_head_layer_num=0)
    assert flat.actor_out.in_features == flat.critic_out.in_features == 32


def test_the_first_policy_is_near_uniform() -> None:
    logits = VAC(4, 3)(torch.randn(64, 4))["logit"]
    assert logits.abs().max() < 0.1


def test_wrong_observation_shape_is_named() -> None:
    with pytest.raises(ValueError, match=r"obs_shape \(4,\) got a batch of shape \(2, 5\)"):
        VAC(4, 2)(torch.zeros(2, 5))


def test_config_errors() -> None:
    with pytest.raises(ConfigError, match="action_space must be one of"):
        VAC(4, 2, "hybrid")
    with pytest.raises(ConfigError, match="multi-discrete"):
        VAC(4, [2, 3], "discrete")
    with pytest.raises(ConfigError, match="actor_head_hidden_size must be a positive int"):
        VAC(4, 2, actor_head_hidden_size=0)
    with pytest.raises(ConfigError, match=r"keys the VAC model does not take: \['dueling'\]"):
        vac_from_config({"obs_shape": 4, "action_shape": 2, "dueling": True})
    with pytest.raises(ConfigError, match=r"policy\.model\.action_shape is not set"):
        vac_from_config({"obs_shape": 4, "action_shape": None})
    model = vac_from_config({"obs_shape": 3, "action_shape": 1, "action_space": "discrete"}, "continuous")
    assert model.action_space == "continuous"
