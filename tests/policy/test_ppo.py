"""The PPO policy: GAE against a hand computation, the clipped loss, shapes, trajectory cuts and config checks."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch

from ding.config.builtin_policies import BUILTIN_POLICY_MODULES
from ding.config.policy_registry import POLICY_REGISTRY
from ding.errors import ConfigError
from ding.policy.ppo import PPOPolicy, gae_advantages, ppo_loss


def test_gae_matches_a_hand_computation() -> None:
    gamma, lam = 0.9, 0.8
    reward = np.array([1.0, 0.0, 2.0])
    value = np.array([0.5, 1.0, 1.5])
    next_value = np.array([1.0, 1.5, 3.0])
    done = np.array([0.0, 0.0, 0.0])
    # deltas: 1 + 0.9*1 - 0.5 = 1.4;  0 + 0.9*1.5 - 1 = 0.35;  2 + 0.9*3 - 1.5 = 3.2
    # A2 = 3.2;  A1 = 0.35 + 0.72*3.2 = 2.654;  A0 = 1.4 + 0.72*2.654 = 3.31088
    expected = [3.31088, 2.654, 3.2]
    np.testing.assert_allclose(gae_advantages(reward, value, next_value, done, gamma, lam), expected)
    # a termination at t=1 stops both the bootstrap and the advantage flowing back from t=2
    done = np.array([0.0, 1.0, 0.0])
    # deltas: 1.4;  0 - 1 = -1;  3.2 ->  A2 = 3.2, A1 = -1, A0 = 1.4 + 0.72*(-1) = 0.68
    np.testing.assert_allclose(gae_advantages(reward, value, next_value, done, gamma, lam), [0.68, -1.0, 3.2])
    # lambda = 1 gives discounted returns minus values
    returns = gae_advantages(reward, value, next_value, np.zeros(3), 0.5, 1.0) + value
    np.testing.assert_allclose(returns, [1 + 0.5 * (0 + 0.5 * (2 + 0.5 * 3.0)), 0.5 * (2 + 0.5 * 3.0), 2 + 0.5 * 3.0])


def test_gae_rejects_arrays_of_different_lengths() -> None:
    with pytest.raises(ValueError, match=r"value and next_value of one shape \(T,\) or \(T, agents\)"):
        gae_advantages(np.zeros(2), np.zeros(3), np.zeros(2), np.zeros(2), 0.9, 0.9)


@pytest.mark.parametrize(
    ("ratio", "adv", "policy_loss", "clipped"),
    [
        (1.5, 1.0, -1.2, True),  # positive advantage: the ratio is capped at 1 + eps
        (1.1, 1.0, -1.1, False),
        (0.5, 1.0, -0.5, True),  # min keeps the unclipped (smaller) objective
        (0.5, -1.0, 0.8, True),  # negative advantage: the ratio is floored at 1 - eps
        (1.5, -1.0, 1.5, True),  # ... and the unclipped, more pessimistic term is kept
    ],
)
def test_clipped_surrogate(ratio: float, adv: float, policy_loss: float, clipped: bool) -> None:
    logp = torch.tensor([math.log(ratio)], requires_grad=True)
    out = ppo_loss(
        logp, torch.zeros(1), torch.tensor([adv]), torch.zeros(1), torch.zeros(1), torch.zeros(1), 0.2, 0.5, 0.0
    )
    assert out["policy_loss"].item() == pytest.approx(policy_loss)
    assert out["clipfrac"].item() == float(clipped)
    out["total_loss"].backward()
    assert logp.grad is not None
    # the gradient vanishes exactly where the clipped term is the one kept
    kept_clipped = (adv > 0 and ratio > 1.2) or (adv < 0 and ratio < 0.8)
    assert (logp.grad.abs().item() == 0.0) == kept_clipped


def test_total_loss_combines_value_and_entropy_terms() -> None:
    out = ppo_loss(
        torch.zeros(2),
        torch.zeros(2),
        torch.tensor([1.0, -1.0]),
        torch.tensor([0.0, 1.0]),
        torch.tensor([2.0, 1.0]),
        torch.tensor([0.5, 0.7]),
        clip_ratio=0.2,
        value_weight=0.5,
        entropy_weight=0.1,
    )
    assert out["policy_loss"].item() == pytest.approx(0.0)
    assert out["value_loss"].item() == pytest.approx(0.5 * (4 + 0) / 2)
    assert out["entropy_loss"].item() == pytest.approx(0.6)
    assert out["total_loss"].item() == pytest.approx(0.5 * 1.0 - 0.1 * 0.6)
    assert out["approx_kl"].item() == pytest.approx(0.0)


def timestep(obs: Any, reward: float, terminated: bool = False, truncated: bool = False) -> SimpleNamespace:
    return SimpleNamespace(obs=obs, reward=np.array([reward]), terminated=terminated, done=terminated or truncated)


def trajectory(policy: PPOPolicy, length: int, terminated: bool) -> list[dict[str, Any]]:
    rng = np.random.default_rng(0)
    traj = []
    obs = rng.standard_normal(4).astype(np.float32)
    for t in range(length):
        out = policy.collect_mode.forward({0: obs})[0]
        next_obs = rng.standard_normal(4).astype(np.float32)
        last = t == length - 1
        traj.append(policy.collect_mode.process_transition(obs, out, timestep(next_obs, 1.0, terminated and last)))
        obs = next_obs
    return traj


@pytest.mark.parametrize("terminated", [True, False])
def test_train_samples_carry_gae_with_the_right_bootstrap(terminated: bool) -> None:
    policy = PPOPolicy({"model": {"obs_shape": 4, "action_shape": 2}, "collect": {"discount_factor": 0.9}})
    traj = trajectory(policy, 5, terminated)
    assert policy.collect_mode.get_train_sample(traj, False) == []  # not over: wait for the end
    samples = policy.collect_mode.get_train_sample(traj, True)
    assert len(samples) == 5
    assert sorted(samples[0]) == ["action", "adv", "done", "logp", "obs", "return", "reward", "traj", "value"]
    assert {s["traj"] for s in samples} == {samples[0]["traj"]}  # one trajectory, for recomputing its advantages
    last_obs = samples[-1]["bootstrap_obs"]
    assert last_obs is None if terminated else np.array_equal(last_obs, traj[-1]["next_obs"])
    value = np.array([t["value"] for t in traj])
    with torch.no_grad():
        last = float(policy.model(torch.as_tensor(traj[-1]["next_obs"])[None])["value"][0])
    bootstrap = 0.0 if terminated else last
    expected = gae_advantages(np.ones(5), value, np.append(value[1:], bootstrap), np.zeros(5), 0.9, 0.95)
    np.testing.assert_allclose([s["adv"] for s in samples], expected, rtol=1e-6)
    np.testing.assert_allclose([s["return"] for s in samples], expected + value, rtol=1e-6)


def test_discrete_outputs_and_a_learning_step() -> None:
    policy = PPOPolicy({"model": {"obs_shape": 4, "action_shape": 3}, "learn": {"entropy_weight": 0.01}}, seed=1)
    obs = {i: np.full(4, i, np.float32) for i in range(3)}
    out = policy.collect_mode.forward(obs)
    assert set(out) == {0, 1, 2}
    assert all(o["action"] in (0, 1, 2) and o["logit"].shape == (3,) and o["logp"] <= 0 for o in out.values())
    greedy = policy.eval_mode.forward(obs)
    assert all(greedy[i]["action"] == int(np.argmax(greedy[i]["logit"])) for i in obs)
    samples = policy.collect_mode.get_train_sample(trajectory(policy, 8, True), True)
    before = [p.detach().clone() for p in policy.model.parameters()]
    stats = policy.learn_mode.forward(samples)
    assert {"total_loss", "policy_loss", "value_loss", "entropy_loss", "approx_kl", "clipfrac", "cur_lr"} <= set(stats)
    assert stats["approx_kl"] == pytest.approx(0.0, abs=1e-6)  # the first update is at the collecting policy
    assert policy.learn_iter == 1
    assert any(not torch.equal(a, b) for a, b in zip(before, policy.model.parameters(), strict=True))


def test_continuous_outputs_and_a_learning_step() -> None:
    policy = PPOPolicy({"action_space": "continuous", "model": {"obs_shape": 3, "action_shape": 2}})
    out = policy.collect_mode.forward({0: np.zeros(3, np.float32), 5: np.ones(3, np.float32)})
    assert out[5]["action"].shape == (2,) and out[5]["action"].dtype == np.float32
    assert sorted(out[5]["logit"]) == ["mu", "sigma"]
    greedy = policy.eval_mode.forward({0: np.zeros(3, np.float32)})[0]
    np.testing.assert_array_equal(greedy["action"], greedy["logit"]["mu"])
    traj = []
    for t in range(6):
        obs = np.full(3, t, np.float32)
        o = policy.collect_mode.forward({0: obs})[0]
        traj.append(policy.collect_mode.process_transition(obs, o, timestep(obs + 1, -1.0)))
    stats = policy.learn_mode.forward(policy.collect_mode.get_train_sample(traj, True))
    assert math.isfinite(stats["total_loss"]) and stats["approx_kl"] == pytest.approx(0.0, abs=1e-6)


def test_same_seed_same_actions() -> None:
    obs = {0: np.zeros(4, np.float32)}
    runs = []
    for _ in range(2):
        torch.manual_seed(0)
        policy = PPOPolicy({"model": {"obs_shape": 4, "action_shape": 2}}, seed=3)
        runs.append([policy.collect_mode.forward(obs)[0]["action"] for _ in range(30)])
    assert runs[0] == runs[1] and len(set(runs[0])) == 2


def test_state_dict_round_trip() -> None:
    cfg = {"model": {"obs_shape": 4, "action_shape": 2}}
    a, b = PPOPolicy(cfg, seed=0), PPOPolicy(cfg, seed=1)
    b.load_state_dict(a.state_dict())
    obs = {0: np.ones(4, np.float32)}
    np.testing.assert_array_equal(a.eval_mode.forward(obs)[0]["logit"], b.eval_mode.forward(obs)[0]["logit"])
    with pytest.raises(ValueError, match="needs a 'model' entry"):
        b.eval_mode.load_state_dict({})


def test_registered_with_di_engine_keys() -> None:
    assert POLICY_REGISTRY.get("ppo") is PPOPolicy
    assert BUILTIN_POLICY_MODULES["ppo"] == PPOPolicy.__module__
    cfg = PPOPolicy.default_config()
    assert cfg["action_space"] == "discrete"
    assert {"encoder_hidden_size_list", "actor_head_hidden_size", "critic_head_hidden_size"} <= set(cfg["model"])
    assert {
        "epoch_per_collect",
        "batch_size",
        "learning_rate",
        "value_weight",
        "entropy_weight",
        "clip_ratio",
        "adv_norm",
        "grad_clip_value",
    } <= set(cfg["learn"])
    assert {"n_sample", "unroll_len", "discount_factor", "gae_lambda"} <= set(cfg["collect"])
    assert "eval_freq" in cfg["eval"]["evaluator"]


@pytest.mark.parametrize(
    ("cfg", "match"),
    [
        ({"on_policy": False}, r"policy\.on_policy must be True \(PPO learns on-policy\)"),
        ({"action_space": "hybrid"}, "policy.action_space must be one of"),
        ({"learn": {"clip_ratio": 0}}, "policy.learn.clip_ratio must be a finite number > 0, got 0"),
        ({"learn": {"epoch_per_collect": 0}}, "policy.learn.epoch_per_collect must be a positive int, got 0"),
        ({"collect": {"unroll_len": 2}}, r"unroll_len must be 1 \(samples are one step each\), got 2"),
        ({"collect": {"gae_lambda": 1.5}}, r"policy\.collect\.gae_lambda must be a number in \[0, 1\], got 1\.5"),
        ({"learn": {"nstep": 3}}, "nstep"),
    ],
)
def test_config_errors(cfg: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        PPOPolicy({"model": {"obs_shape": 4, "action_shape": 2}, **cfg})
