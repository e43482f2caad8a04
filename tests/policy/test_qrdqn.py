"""QR-DQN: the quantile Huber loss and targets by hand, the model's outputs, DI-engine's keys, learning a known
return distribution, noisy nets, state, and CartPole through the serial pipeline."""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np
import pytest
import torch

from ding.config import compile_config, read_config
from ding.config.builtin_policies import BUILTIN_POLICY_MODULES
from ding.config.policy_registry import POLICY_REGISTRY
from ding.entry import serial_pipeline
from ding.errors import ConfigError
from ding.model.noisy import noisy_layers
from ding.model.qrdqn import QRDQN, qrdqn_from_config, quantile_levels
from ding.policy.dqn import DQNPolicy
from ding.policy.qrdqn import QRDQNPolicy, quantile_huber_loss
from tests.entry.test_cli import ROOT

CARTPOLE_QRDQN = ROOT / "dizoo/classic_control/cartpole/config/cartpole_qrdqn_config.py"
MODEL = {"obs_shape": 4, "action_shape": 2, "encoder_hidden_size_list": [32, 32], "num_quantiles": 8}


def small_policy(**sections: Any) -> QRDQNPolicy:
    return QRDQNPolicy({"model": dict(MODEL), **sections}, seed=0)


def by_hand_loss(quantiles: np.ndarray, target: np.ndarray, tau: np.ndarray, kappa: float) -> float:
    total = 0.0
    for row_q, row_t in zip(quantiles, target, strict=True):
        for i, q in enumerate(row_q):
            terms = []
            for t in row_t:
                u = t - q
                huber = (
                    (0.5 * u * u if abs(u) <= kappa else kappa * (abs(u) - 0.5 * kappa)) / kappa if kappa else abs(u)
                )
                terms.append(abs(tau[i] - (1.0 if u < 0 else 0.0)) * huber)
            total += float(np.mean(terms))
    return total / len(quantiles)


@pytest.mark.parametrize("kappa", [0.0, 0.5, 1.0, 3.0])
def test_quantile_huber_loss_by_hand(kappa: float) -> None:
    rng = np.random.default_rng(int(kappa * 10))
    quantiles, target = rng.normal(size=(3, 5)), rng.normal(size=(3, 5)) * 2
    tau = quantile_levels(5).numpy()
    loss = quantile_huber_loss(torch.tensor(quantiles), torch.tensor(target), torch.tensor(tau), kappa)
    assert float(loss) == pytest.approx(by_hand_loss(quantiles, target, tau, kappa), rel=1e-6)


def test_the_loss_is_least_at_the_target_s_quantiles() -> None:
    """Against many samples of a known distribution, the loss is smallest when each quantile sits at its level."""
    samples = torch.linspace(0.0, 1.0, 1001).unsqueeze(0)  # uniform on [0, 1]: the tau-quantile is tau
    tau = quantile_levels(4)
    at_levels = quantile_huber_loss(tau.unsqueeze(0), samples, tau, 0.0)
    for shift in (-0.05, 0.05):
        assert quantile_huber_loss((tau + shift).unsqueeze(0), samples, tau, 0.0) > at_levels


def test_model_outputs_and_keys() -> None:
    model = QRDQN(**MODEL)
    out = model(torch.zeros(3, 4))
    assert out["q"].shape == (3, 2, 8) and out["tau"].shape == (3, 8, 1)
    torch.testing.assert_close(out["logit"], out["q"].mean(-1))
    torch.testing.assert_close(out["tau"][0, :, 0], quantile_levels(8))
    assert len(noisy_layers(qrdqn_from_config({**MODEL, "noise": True}))) == 2
    with pytest.raises(ConfigError, match=r"num_quantiles must be a positive int, got 0"):
        QRDQN(4, 2, num_quantiles=0)
    with pytest.raises(ConfigError, match=r"does not take: \['n_atom'\]"):
        qrdqn_from_config({**MODEL, "n_atom": 51})


def test_registered_as_a_dqn_with_di_engine_keys() -> None:
    assert POLICY_REGISTRY.get("qrdqn") is QRDQNPolicy and issubclass(QRDQNPolicy, DQNPolicy)
    assert BUILTIN_POLICY_MODULES["qrdqn"] == QRDQNPolicy.__module__
    defaults = QRDQNPolicy.default_config()
    assert defaults["model"]["num_quantiles"] == 32 and defaults["learn"]["kappa"] == 1.0
    cfg = compile_config(*read_config(CARTPOLE_QRDQN))
    assert cfg.policy.type == "qrdqn" and cfg.policy.model.num_quantiles == 64 and cfg.policy.nstep == 3
    assert (cfg.policy.model.obs_shape, cfg.policy.model.action_shape) == (4, 2)
    with pytest.raises(
        ConfigError, match=r"policy\.learn\.kappa must be a finite number >= 0 \(0: the absolute error\), got -1"
    ):
        small_policy(learn={"kappa": -1})
    with pytest.raises(TypeError, match=r"a QRDQN policy needs a QRDQN model"):
        QRDQNPolicy({"model": dict(MODEL)}, model=torch.nn.Linear(4, 2))


def test_target_quantiles_by_hand() -> None:
    policy = small_policy()
    rng = np.random.default_rng(0)
    batch = [
        {
            "obs": rng.normal(size=4).astype(np.float32),
            "action": int(rng.integers(2)),
            "reward": float(rng.normal()),
            "next_obs": rng.normal(size=4).astype(np.float32),
            "done": bool(i % 3 == 0),
            "discount": 0.9,
        }
        for i in range(6)
    ]
    data = policy._collate(batch)
    target = policy.target_quantiles(data).numpy()
    online, frozen = QRDQN(**MODEL), QRDQN(**MODEL)
    state = policy.state_dict()
    online.load_state_dict(state["model"])
    frozen.load_state_dict(state["target_model"])
    for i, sample in enumerate(batch):
        x = torch.tensor(sample["next_obs"])[None]
        with torch.no_grad():
            best = int(online(x)["logit"][0].argmax())
            next_quantiles = frozen(x)["q"][0, best].numpy()
        expected = sample["reward"] + (0.0 if sample["done"] else 0.9 * next_quantiles)
        np.testing.assert_allclose(target[i], np.broadcast_to(expected, (8,)), atol=1e-5)


def test_learning_spreads_the_quantiles_over_a_random_return() -> None:
    """A one-step task paying 0 or 1 with equal odds: the quantiles split into a low half near 0 and a high half
    near 1, and the mean approaches 0.5 (kappa 0: with a threshold of 1 every error here is in the Huber loss's
    quadratic part, which pulls the quantiles towards the mean)."""
    torch.manual_seed(0)
    policy = small_policy(learn={"learning_rate": 3e-3, "kappa": 0.0})  # pure quantile regression
    obs = np.ones(4, np.float32)
    rng = np.random.default_rng(0)
    for _ in range(400):
        batch = [
            {"obs": obs, "action": 0, "reward": float(rng.integers(2)), "next_obs": obs, "done": True, "discount": 0.97}
            for _ in range(64)
        ]
        policy.learn_mode.forward(batch)
    with torch.no_grad():
        quantiles = policy.model(torch.tensor(obs)[None])["q"][0, 0].numpy()
    assert np.all(quantiles[:4] < 0.25) and np.all(quantiles[4:] > 0.75), quantiles
    assert float(quantiles.mean()) == pytest.approx(0.5, abs=0.1)


def test_state_round_trip() -> None:
    policy = small_policy()
    policy.learn_mode.forward(
        [
            {
                "obs": np.ones(4, np.float32),
                "action": 1,
                "reward": 1.0,
                "next_obs": np.ones(4, np.float32),
                "done": False,
                "discount": 0.97,
            }
        ]
        * 8
    )
    other = small_policy()
    other.learn_mode.load_state_dict(policy.learn_mode.state_dict())
    obs = {0: np.ones(4, np.float32)}
    np.testing.assert_array_equal(policy.eval_mode.forward(obs)[0]["logit"], other.eval_mode.forward(obs)[0]["logit"])
    assert other.learn_iter == 1


def test_cartpole_qrdqn_reaches_the_stop_value(tmp_path: pathlib.Path) -> None:
    result = serial_pipeline(str(CARTPOLE_QRDQN), seed=1, max_env_step=80_000, root=tmp_path, progress=False)
    assert result.stop_value_reached, result.summary()
