"""The DQN model and its encoders: sizes follow obs_shape and action_shape; bad shapes are named."""

from __future__ import annotations

import pytest
import torch

from ding.errors import ConfigError
from ding.model import DQN, ConvEncoder, FCEncoder, build_encoder, model_from_config


@pytest.mark.parametrize(
    ("obs_shape", "encoder", "batch_shape"),
    [
        (4, FCEncoder, (7, 4)),
        ([4], FCEncoder, (7, 4)),
        ((3, 4), FCEncoder, (7, 3, 4)),
        ((4, 84, 84), ConvEncoder, (7, 4, 84, 84)),
        ((3, 64, 64), ConvEncoder, (7, 3, 64, 64)),
    ],
)
@pytest.mark.parametrize("dueling", [True, False])
def test_q_values_have_one_column_per_action(
    obs_shape: object, encoder: type, batch_shape: tuple[int, ...], dueling: bool
) -> None:
    hidden = [16, 32] if encoder is FCEncoder else [8, 16, 16, 32]
    model = DQN(obs_shape, 5, encoder_hidden_size_list=hidden, dueling=dueling)  # type: ignore[arg-type]
    assert isinstance(model.encoder, encoder)
    out = model(torch.zeros(batch_shape))
    assert set(out) == {"logit"} and out["logit"].shape == (7, 5)


def test_the_encoder_layers_follow_encoder_hidden_size_list() -> None:
    model = DQN(4, 2, encoder_hidden_size_list=[128, 128, 64], dueling=False)
    linears = [m for m in model.encoder.modules() if isinstance(m, torch.nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linears] == [(4, 128), (128, 128), (128, 64)]
    head = [m for m in model.head.modules() if isinstance(m, torch.nn.Linear)]
    assert [(m.in_features, m.out_features) for m in head] == [(64, 64), (64, 2)]


def test_conv_encoder_uses_channels_then_output_size() -> None:
    encoder = ConvEncoder((4, 84, 84), [32, 64, 64, 512])
    convs = [m for m in encoder.modules() if isinstance(m, torch.nn.Conv2d)]
    assert [(c.in_channels, c.out_channels, c.kernel_size, c.stride) for c in convs] == [
        (4, 32, (8, 8), (4, 4)),
        (32, 64, (4, 4), (2, 2)),
        (64, 64, (3, 3), (1, 1)),
    ]
    assert encoder(torch.zeros(2, 4, 84, 84)).shape == (2, 512)


def test_dueling_head_centres_advantages() -> None:
    torch.manual_seed(0)
    model = DQN(4, 3, encoder_hidden_size_list=[8], dueling=True)
    x = torch.randn(6, 4)
    features = model.encoder(x)
    value = model.head.value(features)
    q = model(x)["logit"]
    torch.testing.assert_close(q.mean(dim=-1, keepdim=True), value)


def test_head_hidden_size_and_layer_num() -> None:
    model = DQN(4, 2, encoder_hidden_size_list=[32], dueling=False, head_hidden_size=16, head_layer_num=2)
    head = [m for m in model.head.modules() if isinstance(m, torch.nn.Linear)]
    assert [(m.in_features, m.out_features) for m in head] == [(16, 16), (16, 16), (16, 2)]
    assert model(torch.zeros(3, 4))["logit"].shape == (3, 2)


def test_model_from_config_takes_a_policy_model_section() -> None:
    model = model_from_config({"obs_shape": 4, "action_shape": 2, "encoder_hidden_size_list": [8], "dueling": False})
    assert model(torch.zeros(1, 4))["logit"].shape == (1, 2)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"obs_shape": 0, "action_shape": 2}, r"obs_shape must be a positive int .* got 0"),
        ({"obs_shape": (1, 2, 3, 4), "action_shape": 2}, r"obs_shape \(1, 2, 3, 4\) has 4 dimensions"),
        ({"obs_shape": 4, "action_shape": [3, 0]}, r"action_shape must be .* or a list of them .* got \[3, 0\]"),
        ({"obs_shape": 4, "action_shape": 0}, r"action_shape must be the number of discrete actions"),
        ({"obs_shape": 4, "action_shape": 2, "encoder_hidden_size_list": []}, r"encoder_hidden_size_list must be"),
        ({"obs_shape": (3, 8, 8), "action_shape": 2, "encoder_hidden_size_list": [16]}, r"at least 2 entries"),
        ({"obs_shape": (3, 6, 6), "action_shape": 2, "encoder_hidden_size_list": [16, 32]}, r"too small"),
        ({"obs_shape": 4, "action_shape": 2, "head_layer_num": -1}, r"head_layer_num must be an int >= 0"),
        ({"obs_shape": 4, "action_shape": 2, "head_hidden_size": 0}, r"head_hidden_size must be a positive int"),
        ({"obs_shape": 4, "action_shape": 2, "activation": "relux"}, r"unknown activation 'relux'; known: gelu"),
    ],
)
def test_bad_model_settings_are_config_errors(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        DQN(**kwargs)  # type: ignore[arg-type]


def test_model_from_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"policy.model.obs_shape is not set"):
        model_from_config({"obs_shape": None, "action_shape": 2})
    with pytest.raises(ConfigError, match=r"keys the DQN model does not take: \['hidden'\]"):
        model_from_config({"obs_shape": 4, "action_shape": 2, "hidden": 3})


def test_conv_encoder_errors() -> None:
    with pytest.raises(ConfigError, match=r"ConvEncoder needs an image obs_shape \(C, H, W\), got 4"):
        ConvEncoder(4, [8, 8])  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"2 conv layers .* need as many kernel sizes and strides"):
        ConvEncoder((1, 32, 32), [8, 8, 16], kernel_size=[3])


def test_a_batch_of_the_wrong_shape_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"DQN built for obs_shape \(4,\) got a batch of shape \(2, 5\)"):
        DQN(4, 2)(torch.zeros(2, 5))
    assert type(build_encoder((2, 3), [4])).__name__ == "FCEncoder"
