"""The C51 model: distributions sized from the env's declared spaces, their means, the atoms and bad settings."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from ding.config import compile_config, read_config
from ding.envs.from_config import env_class
from ding.errors import ConfigError
from ding.model import C51DQN, DQN, ConvEncoder, FCEncoder, c51_from_config
from ding.model.c51 import atom_support
from tests.entry.test_cli import ROOT

CONFIGS = {
    "cartpole": "dizoo/classic_control/cartpole/config/cartpole_c51_config.py",
    "acrobot": "dizoo/classic_control/acrobot/config/acrobot_dqn_config.py",
    "pong": "dizoo/atari/config/pong_dqn_config.py",
}


@pytest.mark.parametrize(
    ("name", "obs_shape", "actions", "encoder"),
    [("cartpole", 4, 2, FCEncoder), ("acrobot", 6, 3, FCEncoder), ("pong", (4, 84, 84), 6, ConvEncoder)],
)
def test_outputs_are_sized_from_the_env_spaces(name: str, obs_shape: Any, actions: int, encoder: type) -> None:
    main_config, create_config = read_config(str(ROOT / CONFIGS[name]))
    cfg = compile_config(main_config, create_config, require_policy=False)  # shapes from the declared spaces
    shapes = {key: cfg.policy.model[key] for key in ("obs_shape", "action_shape")}
    assert shapes == {"obs_shape": obs_shape, "action_shape": actions}
    hidden = [32, 32] if encoder is FCEncoder else [8, 16, 16, 32]
    model = c51_from_config({**shapes, "encoder_hidden_size_list": hidden, "n_atom": 11})
    assert isinstance(model.net.encoder, encoder)
    env = env_class(cfg.env)(cfg=dict(cfg.env))
    try:
        env.seed(0)
        observations = [env.reset()] + [env.step(env.random_action()).obs for _ in range(2)]
    finally:
        env.close()
    out = model(torch.as_tensor(np.stack(observations), dtype=torch.float32))
    assert out["logit"].shape == (3, actions)
    assert out["distribution"].shape == out["log_distribution"].shape == (3, actions, 11)


def test_distributions_sum_to_one_and_q_is_their_mean() -> None:
    torch.manual_seed(0)
    model = C51DQN(4, 3, encoder_hidden_size_list=[16], v_min=-2, v_max=6, n_atom=9)
    out = model(torch.randn(5, 4))
    torch.testing.assert_close(out["distribution"].sum(-1), torch.ones(5, 3))
    torch.testing.assert_close(out["log_distribution"].exp(), out["distribution"])
    support = torch.arange(-2.0, 7.0)  # 9 atoms, one apart
    torch.testing.assert_close(model.support, support)
    torch.testing.assert_close(out["logit"], (out["distribution"] * support).sum(-1))
    assert ((out["logit"] >= -2) & (out["logit"] <= 6)).all()


def test_the_network_is_a_plain_dqn_with_n_atom_outputs_per_action() -> None:
    model = C51DQN(4, 2, encoder_hidden_size_list=[128, 128, 64], head_hidden_size=32, head_layer_num=2, n_atom=51)
    assert isinstance(model.net, DQN)
    linears = [(m.in_features, m.out_features) for m in model.modules() if isinstance(m, torch.nn.Linear)]
    # encoder, projection to head_hidden_size, two hidden head layers, then 2 actions x 51 atoms
    assert linears == [(4, 128), (128, 128), (128, 64), (64, 32), (32, 32), (32, 32), (32, 102)]


def test_the_atoms_travel_with_the_state_dict() -> None:
    a = C51DQN(4, 2, v_min=0, v_max=1, n_atom=3)
    assert a.state_dict()["support"].tolist() == [0.0, 0.5, 1.0]
    b = C51DQN(4, 2, v_min=0, v_max=1, n_atom=5)
    with pytest.raises(RuntimeError, match="size mismatch"):
        b.load_state_dict(a.state_dict())


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"v_min": 10, "v_max": -10}, r"v_min must be less than v_max, got v_min=10 and v_max=-10"),
        ({"v_min": float("nan")}, r"v_min must be a finite number, got nan"),
        ({"v_max": "10"}, r"v_max must be a finite number, got '10'"),
        ({"n_atom": 1}, r"n_atom must be an int >= 2, got 1"),
        ({"n_atom": 51.0}, r"n_atom must be an int >= 2, got 51\.0"),
        ({"action_shape": [2, 3]}, r"multi-discrete actions are not supported"),
        ({"obs_shape": (4, 2, 2, 2)}, r"obs_shape \(4, 2, 2, 2\) has 4 dimensions"),
        ({"dueling": True}, r"keys the C51 model does not take: \['dueling'\]"),
        ({"obs_shape": None}, r"policy\.model\.obs_shape is not set"),
    ],
)
def test_bad_settings_are_config_errors(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        c51_from_config({"obs_shape": 4, "action_shape": 2, **kwargs})


def test_an_observation_of_the_wrong_shape_is_named() -> None:
    with pytest.raises(ValueError, match=r"obs_shape \(4,\) got a batch of shape \(2, 5\)"):
        C51DQN(4, 2)(torch.zeros(2, 5))


def test_atom_support_is_evenly_spaced_from_v_min_to_v_max() -> None:
    support = atom_support(-10, 10, 51)
    assert support[0].item() == -10 and support[-1].item() == 10 and len(support) == 51
    torch.testing.assert_close(support.diff(), torch.full((50,), 0.4))
