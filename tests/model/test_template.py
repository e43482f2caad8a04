"""DI-engine's ``ding.model.template``: ding's models under DI-engine's names, signatures and call forms; arguments
ding has no counterpart for refused by name; a user's encoders used and left as they were made."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import torch
from torch import nn

from ding import model as ding_model
from ding.entry import serial_pipeline
from ding.errors import ConfigError
from ding.model import deterministic_qac, discrete_qac, qac
from ding.model.template import C51DQN, DQN, MAVAC, QAC, QRDQN, VAC, ContinuousQAC, DiscreteQAC
from tests.entry.test_serial import cartpole

RELU = "nn.ReLU()"
NOT_A_PAIR: Any = [nn.Linear(4, 8)]
DI_ENGINE_SIGNATURES: dict[Any, list[tuple[str, Any]]] = {
    DQN: [
        ("obs_shape", None),
        ("action_shape", None),
        ("encoder_hidden_size_list", [128, 128, 64]),
        ("dueling", True),
        ("head_hidden_size", None),
        ("head_layer_num", 1),
        ("activation", RELU),
        ("norm_type", None),
        ("dropout", None),
        ("init_bias", None),
    ],
    C51DQN: [
        ("obs_shape", None),
        ("action_shape", None),
        ("encoder_hidden_size_list", [128, 128, 64]),
        ("head_hidden_size", None),
        ("head_layer_num", 1),
        ("activation", RELU),
        ("norm_type", None),
        ("v_min", -10),
        ("v_max", 10),
        ("n_atom", 51),
    ],
    QRDQN: [
        ("obs_shape", None),
        ("action_shape", None),
        ("encoder_hidden_size_list", [128, 128, 64]),
        ("head_hidden_size", None),
        ("head_layer_num", 1),
        ("num_quantiles", 32),
        ("activation", RELU),
        ("norm_type", None),
    ],
    ContinuousQAC: [
        ("obs_shape", None),
        ("action_shape", None),
        ("action_space", None),
        ("twin_critic", False),
        ("actor_head_hidden_size", 64),
        ("actor_head_layer_num", 1),
        ("critic_head_hidden_size", 64),
        ("critic_head_layer_num", 1),
        ("activation", RELU),
        ("norm_type", None),
        ("encoder_hidden_size_list", None),
        ("share_encoder", False),
    ],
    DiscreteQAC: [
        ("obs_shape", None),
        ("action_shape", None),
        ("twin_critic", False),
        ("actor_head_hidden_size", 64),
        ("actor_head_layer_num", 1),
        ("critic_head_hidden_size", 64),
        ("critic_head_layer_num", 1),
        ("activation", RELU),
        ("norm_type", None),
        ("encoder_hidden_size_list", None),
        ("share_encoder", False),
    ],
    VAC: [
        ("obs_shape", None),
        ("action_shape", None),
        ("action_space", "discrete"),
        ("share_encoder", True),
        ("encoder_hidden_size_list", [128, 128, 64]),
        ("actor_head_hidden_size", 64),
        ("actor_head_layer_num", 1),
        ("critic_head_hidden_size", 64),
        ("critic_head_layer_num", 1),
        ("activation", RELU),
        ("norm_type", None),
        ("sigma_type", "independent"),
        ("fixed_sigma_value", 0.3),
        ("bound_type", None),
        ("encoder", None),
        ("impala_cnn_encoder", False),
    ],
    MAVAC: [
        ("agent_obs_shape", None),
        ("global_obs_shape", None),
        ("action_shape", None),
        ("agent_num", None),
        ("actor_head_hidden_size", 256),
        ("actor_head_layer_num", 2),
        ("critic_head_hidden_size", 512),
        ("critic_head_layer_num", 1),
        ("action_space", "discrete"),
        ("activation", RELU),
        ("norm_type", None),
        ("sigma_type", "independent"),
        ("bound_type", None),
        ("encoder", None),
    ],
}
"""DI-engine 0.5.3's constructor arguments, in order, and their defaults (None for a required one)."""


def _default(parameter: inspect.Parameter) -> Any:
    value = parameter.default
    if value is inspect.Parameter.empty:
        return None
    if isinstance(value, nn.ReLU):
        return RELU
    return list(value) if isinstance(value, tuple) else value


@pytest.mark.parametrize("model", list(DI_ENGINE_SIGNATURES), ids=lambda m: m.__name__)
def test_each_model_takes_di_engines_arguments_in_order_with_its_defaults(model: Any) -> None:
    parameters = list(inspect.signature(model).parameters.values())
    expected = DI_ENGINE_SIGNATURES[model]
    assert [(p.name, _default(p)) for p in parameters[: len(expected)]] == expected


def test_models_are_dings_own_and_qrdqn_is_exported_by_ding_model() -> None:
    assert ding_model.QRDQN is QRDQN.__mro__[1]
    assert isinstance(DQN(4, 2), ding_model.DQN) and isinstance(MAVAC(4, 8, 2, 2), ding_model.MAVAC)
    assert QAC is ContinuousQAC
    assert isinstance(ContinuousQAC(3, 1, "regression"), deterministic_qac.DeterministicQAC)
    assert isinstance(ContinuousQAC(3, 1, "reparameterization"), qac.QAC)
    assert isinstance(DiscreteQAC(4, 2), discrete_qac.DiscreteQAC)


def test_di_engines_positional_call_forms_and_outputs() -> None:
    obs = torch.zeros(5, 4)
    q = QRDQN(4, 3, [32, 32], 16, 1, 8, nn.Tanh())  # num_quantiles is DI-engine's sixth argument
    assert q.num_quantiles == 8 and tuple(q(obs)["q"].shape) == (5, 3, 8)
    c51 = C51DQN(4, 3, [32], None, 1, nn.ReLU(), None, -5, 5, 11)
    assert tuple(c51(obs)["distribution"].shape) == (5, 3, 11)
    assert tuple(DQN(4, 3, [32, 16], False)(obs)["logit"].shape) == (5, 3)
    sac = ContinuousQAC(4, 2, "reparameterization", twin_critic=True)
    mu, log_std = sac(obs, "compute_actor")["logit"]
    assert tuple(mu.shape) == tuple(log_std.shape) == (5, 2)
    critic = sac({"obs": obs, "action": torch.zeros(5, 2)}, mode="compute_critic")
    assert tuple(critic["q_value"].shape) == (2, 5)
    assert tuple(DiscreteQAC(4, 3, True)(obs, "compute_critic")["q_value"].shape) == (2, 5, 3)


def _linear_widths(module: nn.Module) -> list[int]:
    return [layer.out_features for layer in module.modules() if isinstance(layer, nn.Linear)]


def test_continuous_qac_is_laid_out_as_di_engines_a_first_layer_then_the_head_layers() -> None:
    for action_space in ("regression", "reparameterization"):
        model = ContinuousQAC(3, 1, action_space, actor_head_hidden_size=32, actor_head_layer_num=1)
        widths = _linear_widths(model.actor)
        assert widths[:2] == [32, 32] and len(widths) == 3, (action_space, widths)  # first, one head layer, out


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: DQN(4, 2, norm_type="BN"), r"DQN\(norm_type='BN'\) is not supported: ding's models have no norm"),
        (lambda: DQN(4, 2, dropout=0.1), r"DQN\(dropout=0\.1\) is not supported: ding's DQN has no dropout"),
        (lambda: DQN(4, 2, init_bias=0.0), r"DQN\(init_bias=0\.0\) is not supported"),
        (lambda: QRDQN(4, 2, activation=nn.ELU()), r"activation must be one of nn\.ReLU\(\), nn\.Tanh\(\)"),
        (lambda: ContinuousQAC(3, 1, "hybrid"), r"action_space='hybrid'\) is not supported"),
        (lambda: ContinuousQAC(3, 1, "regression", share_encoder=True), r"share_encoder=True\) is not supported"),
        (lambda: VAC(4, 2, impala_cnn_encoder=True), r"VAC\(impala_cnn_encoder=True\) is not supported"),
        (lambda: VAC(4, 2, fixed_sigma_value=0.5), r"fixed_sigma_value=0\.5\) is not supported: it is read with"),
        (lambda: VAC(4, 2, "continuous", sigma_type="fixed"), r"sigma_type must be 'independent'"),
        (lambda: MAVAC(4, 8, 2, 2, bound_type="tanh"), r"MAVAC\(bound_type='tanh'\) is not supported"),
        (lambda: MAVAC(4, 8, 2, 2, encoder=NOT_A_PAIR), r"MAVAC's encoder must be a pair of torch modules"),
    ],
)
def test_arguments_ding_has_no_counterpart_for_are_refused_by_name(build: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build()


class PerAgentConv(nn.Module):
    """A user's image encoder: a conv net over every agent's ``(C, H, W)`` frame, batch and agents kept."""

    def __init__(self, channels: int, features: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(channels, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, features))

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        return self.net(frames.flatten(0, 1)).unflatten(0, frames.shape[:2])


def test_mavac_takes_di_engines_encoder_pair_for_image_observations_and_keeps_its_weights() -> None:
    actor_encoder, critic_encoder = PerAgentConv(3, 16), PerAgentConv(3, 32)
    made = {name: t.clone() for name, t in actor_encoder.state_dict().items()}
    model = MAVAC((3, 8, 8), (3, 8, 8), 4, 2, 16, 1, 32, 1, encoder=(actor_encoder, critic_encoder))
    assert all(torch.equal(made[name], t) for name, t in actor_encoder.state_dict().items())
    obs = {"agent_state": torch.zeros(5, 2, 3, 8, 8), "global_state": torch.zeros(5, 2, 3, 8, 8)}
    out = model(obs, "compute_actor_critic")
    assert tuple(out["logit"].shape) == (5, 2, 4) and tuple(out["value"].shape) == (5, 2)
    assert model.action_shape == 4 and actor_encoder in model.modules()


def test_vac_uses_the_users_encoder_shared_or_copied_for_the_critic() -> None:
    first = nn.Linear(4, 24)
    encoder = nn.Sequential(first, nn.Tanh())
    made = first.weight.clone()
    shared = VAC(4, 2, encoder=encoder, encoder_hidden_size_list=[24])
    assert shared.actor_encoder is encoder and shared.critic_encoder is encoder
    assert torch.equal(first.weight, made)  # not re-initialized
    separate = VAC(4, 2, share_encoder=False, encoder=encoder, encoder_hidden_size_list=[24])
    copied = [layer for layer in separate.critic_encoder.modules() if isinstance(layer, nn.Linear)]
    assert separate.critic_encoder is not encoder and torch.equal(copied[0].weight, made)
    assert tuple(separate(torch.zeros(3, 4))["value"].shape) == (3,)


def test_a_template_model_trains_in_dings_pipeline(tmp_path: Any) -> None:
    """DI-engine's form: the model built by the user and handed to the pipeline."""
    main_config, create_config = cartpole()
    model = DQN(4, 2, [32, 32], activation=nn.ReLU())
    result = serial_pipeline((main_config, create_config), seed=0, max_env_step=300, root=tmp_path, model=model)
    assert result.env_step >= 300 and result.train_iter > 0
