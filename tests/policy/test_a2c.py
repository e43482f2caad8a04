"""A2C: the policy, value and entropy losses by hand, one pass per collection, config keys and CartPole."""

from __future__ import annotations

import math
import pathlib
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

from ding.config import compile_config, read_config
from ding.config.builtin_policies import BUILTIN_POLICY_MODULES
from ding.config.policy_registry import POLICY_REGISTRY
from ding.entry import serial_pipeline_onpolicy
from ding.envs import BaseEnvTimestep
from ding.errors import ConfigError
from ding.policy.a2c import A2CPolicy, a2c_loss
from ding.policy.ppo import gae_advantages, ppo_loss
from ding.worker import load_checkpoint
from tests.ding_cli import run_ding
from tests.entry.test_cli import ROOT

CARTPOLE_A2C = str(ROOT / "dizoo/classic_control/cartpole/config/cartpole_a2c_config.py")
SHAPES = {"obs_shape": 4, "action_shape": 2}


def small_policy(**cfg: Any) -> A2CPolicy:
    return A2CPolicy({"model": {**SHAPES, **cfg.pop("model", {})}, **cfg}, seed=0)


# ----- the loss, by hand -----------------------------------------------------------------------------
def test_losses_by_hand() -> None:
    # two samples: action probabilities 0.75 and 0.25 of the taken actions, advantages 2 and -1
    logp = torch.log(torch.tensor([0.75, 0.25])).requires_grad_(True)
    out = a2c_loss(
        logp,
        advantage=torch.tensor([2.0, -1.0]),
        value=torch.tensor([1.0, 0.0]),
        return_=torch.tensor([3.0, -1.0]),
        entropy=torch.tensor([0.5, 0.7]),
        value_weight=0.5,
        entropy_weight=0.1,
    )
    policy = -(2.0 * math.log(0.75) - 1.0 * math.log(0.25)) / 2
    assert out["policy_loss"].item() == pytest.approx(policy)
    assert out["value_loss"].item() == pytest.approx((2.0**2 + 1.0**2) / 2)  # mean squared error, no 1/2
    assert out["entropy_loss"].item() == pytest.approx(0.6)
    assert out["total_loss"].item() == pytest.approx(policy + 0.5 * 2.5 - 0.1 * 0.6)
    out["total_loss"].backward()
    assert logp.grad is not None
    torch.testing.assert_close(logp.grad, torch.tensor([-1.0, 0.5]))  # -A / batch


def test_the_policy_gradient_is_ppos_at_the_collecting_policy() -> None:
    """Without clipping and at ratio 1, PPO's surrogate has A2C's gradient."""
    logp = torch.tensor([-0.3, -1.2, -0.7])
    adv = torch.tensor([1.5, -0.5, 2.0])
    zeros = torch.zeros(3)
    grads = []
    for loss in (a2c_loss, ppo_loss):
        x = logp.clone().requires_grad_(True)
        if loss is a2c_loss:
            out = a2c_loss(x, adv, zeros, zeros, zeros, 0.0, 0.0)
        else:
            out = ppo_loss(x, logp, adv, zeros, zeros, zeros, 0.2, 0.0, 0.0)
        out["policy_loss"].backward()
        grads.append(x.grad)
    torch.testing.assert_close(grads[0], grads[1])


class FixedActorCritic(nn.Module):
    """Logits ``[0, obs[0]]`` and value ``obs[1]``, plus one parameter so the optimizer has something to move."""

    def __init__(self) -> None:
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(()))

    def forward(self, obs: torch.Tensor) -> dict[str, torch.Tensor]:
        logit = torch.stack([torch.zeros(len(obs)), obs[:, 0]], dim=-1) + self.bias
        return {"logit": logit, "value": obs[:, 1] + self.bias}


@pytest.mark.parametrize("adv_norm", [False, True])
def test_a_learning_step_reports_the_losses_of_its_batch(adv_norm: bool) -> None:
    policy = A2CPolicy(
        {"model": SHAPES, "learn": {"value_weight": 0.25, "entropy_weight": 0.5, "adv_norm": adv_norm}},
        model=FixedActorCritic(),
    )
    ln3 = math.log(3.0)
    # sample 0: probabilities (1/4, 3/4), action 1; sample 1: (1/2, 1/2), action 0
    batch = [
        {"obs": np.array([ln3, 1.0, 0, 0], np.float32), "action": 1, "logp": 0.0, "adv": 2.0, "return": 4.0},
        {"obs": np.array([0.0, -1.0, 0, 0], np.float32), "action": 0, "logp": 0.0, "adv": -1.0, "return": 0.0},
    ]
    stats = policy.learn_mode.forward(batch)
    adv = np.array([2.0, -1.0])
    if adv_norm:
        adv = (adv - adv.mean()) / (adv.std(ddof=1) + 1e-8)
    policy_loss = -(adv[0] * math.log(0.75) + adv[1] * math.log(0.5)) / 2
    value_loss = ((4.0 - 1.0) ** 2 + (0.0 + 1.0) ** 2) / 2
    entropy = (-(0.25 * math.log(0.25) + 0.75 * math.log(0.75)) + math.log(2.0)) / 2
    assert stats["policy_loss"] == pytest.approx(policy_loss, rel=1e-5)
    assert stats["value_loss"] == pytest.approx(value_loss)
    assert stats["entropy_loss"] == pytest.approx(entropy, rel=1e-5)
    assert stats["total_loss"] == pytest.approx(policy_loss + 0.25 * value_loss - 0.5 * entropy, rel=1e-5)
    assert stats["adv_abs_max"] == pytest.approx(np.abs(adv).max(), rel=1e-5)
    assert {"cur_lr", "grad_norm", "value_mean"} <= set(stats) and policy.learn_iter == 1


# ----- samples and acting -------------------------------------------------------------------------
def episode(policy: A2CPolicy, length: int, terminated: bool) -> list[dict[str, Any]]:
    rng = np.random.default_rng(0)
    obs = rng.standard_normal(4).astype(np.float32)
    traj = []
    for t in range(length):
        out = policy.collect_mode.forward({0: obs})[0]
        next_obs = rng.standard_normal(4).astype(np.float32)
        end = terminated and t == length - 1
        ts = BaseEnvTimestep(next_obs, np.array([1.0], np.float32), end, {}, terminated=end)
        traj.append(policy.collect_mode.process_transition(obs, out, ts))
        obs = next_obs
    return traj


@pytest.mark.parametrize(("ignore_done", "bootstrapped"), [(False, False), (True, True)])
def test_samples_carry_gae_with_di_engines_discount(ignore_done: bool, bootstrapped: bool) -> None:
    policy = small_policy(learn={"ignore_done": ignore_done})
    traj = episode(policy, 5, terminated=True)
    samples = policy.collect_mode.get_train_sample(traj, True)
    value = np.array([t["value"] for t in traj])
    with torch.no_grad():
        last = float(policy.model(torch.as_tensor(traj[-1]["next_obs"])[None])["value"][0])
    next_value = np.append(value[1:], last if bootstrapped else 0.0)
    expected = gae_advantages(np.ones(5), value, next_value, np.zeros(5), 0.9, 0.95)  # DI-engine's defaults
    np.testing.assert_allclose([s["adv"] for s in samples], expected, rtol=1e-5)
    np.testing.assert_allclose([s["return"] for s in samples], expected + value, rtol=1e-5)


def test_discrete_and_continuous_actions_and_a_step_each() -> None:
    policy = small_policy(model={"action_shape": 3})
    obs = {i: np.full(4, i, np.float32) for i in range(3)}
    out = policy.collect_mode.forward(obs)
    assert all(o["action"] in (0, 1, 2) and o["logit"].shape == (3,) for o in out.values())
    greedy = policy.eval_mode.forward(obs)
    assert all(greedy[i]["action"] == int(np.argmax(greedy[i]["logit"])) for i in obs)
    continuous = A2CPolicy({"action_space": "continuous", "model": {"obs_shape": 3, "action_shape": 2}})
    out = continuous.collect_mode.forward({0: np.zeros(3, np.float32)})
    assert out[0]["action"].shape == (2,) and sorted(out[0]["logit"]) == ["mu", "sigma"]
    for learner in (policy, continuous):
        shape = 4 if learner is policy else 3
        traj = []
        for t in range(6):
            o = np.full(shape, t / 6, np.float32)
            act = learner.collect_mode.forward({0: o})[0]
            ts = BaseEnvTimestep(o + 0.1, np.array([1.0], np.float32), t == 5, {}, terminated=t == 5)
            traj.append(learner.collect_mode.process_transition(o, act, ts))
        before = [p.detach().clone() for p in learner.model.parameters()]
        stats = learner.learn_mode.forward(learner.collect_mode.get_train_sample(traj, True))
        assert math.isfinite(stats["total_loss"])
        assert any(not torch.equal(a, b) for a, b in zip(before, learner.model.parameters(), strict=True))


def test_optimizer_settings_come_from_the_config() -> None:
    policy = small_policy(learn={"learning_rate": 0.002, "betas": [0.5, 0.9], "eps": 1e-5})
    group = policy.state_dict()["optimizer"]["param_groups"][0]
    assert (group["lr"], group["betas"], group["eps"]) == (0.002, (0.5, 0.9), 1e-5)
    unclipped = small_policy(learn={"grad_norm": None})
    stats = unclipped.learn_mode.forward(unclipped.collect_mode.get_train_sample(episode(unclipped, 4, True), True))
    assert "grad_norm" not in stats and math.isfinite(stats["total_loss"])


# ----- registration and config ----------------------------------------------------------------------
def test_registered_with_di_engine_keys_and_defaults() -> None:
    assert POLICY_REGISTRY.get("a2c") is A2CPolicy
    assert BUILTIN_POLICY_MODULES["a2c"] == A2CPolicy.__module__
    cfg = A2CPolicy.default_config()
    assert cfg["learn"] | {"learner": None} == {
        "update_per_collect": 1,
        "batch_size": 64,
        "learning_rate": 0.001,
        "betas": (0.9, 0.999),
        "eps": 1e-8,
        "grad_norm": 0.5,
        "value_weight": 0.5,
        "entropy_weight": 0.01,
        "adv_norm": False,
        "ignore_done": False,
        "learner": None,
    }
    assert cfg["collect"] == {"n_sample": 80, "unroll_len": 1, "discount_factor": 0.9, "gae_lambda": 0.95}
    assert cfg["on_policy"] and cfg["action_space"] == "discrete"


def test_the_cartpole_config_compiles_strictly() -> None:
    main, create = read_config(CARTPOLE_A2C)
    cfg = compile_config(main, create)
    assert cfg.policy.type == "a2c" and cfg.exp_name == "cartpole_a2c_seed0"
    assert (cfg.policy.model.obs_shape, cfg.policy.model.action_shape) == (4, 2)
    assert cfg.policy.model.encoder_hidden_size_list == [128, 128, 64]
    assert (cfg.policy.learn.batch_size, cfg.policy.collect.n_sample, cfg.policy.collect.discount_factor) == (
        40,
        80,
        0.9,
    )
    main.policy.learn.clip_ratio = 0.2  # a PPO key
    with pytest.raises(ConfigError, match=r"unknown config key 'policy\.learn\.clip_ratio'"):
        compile_config(main, create)


@pytest.mark.parametrize(
    ("cfg", "match"),
    [
        ({"on_policy": False}, r"A2C learns on-policy"),
        (
            {"priority": True},
            r"policy\.priority must be False \(prioritized replay is for the DQN family: dqn, c51, qrdqn\), got True",
        ),
        ({"action_space": "hybrid"}, r"policy\.action_space must be one of"),
        ({"learn": {"update_per_collect": 4}}, r"update_per_collect must be 1 \(each sample is learned once.*got 4"),
        ({"learn": {"betas": [0.9]}}, r"policy\.learn\.betas must be a pair of numbers in \[0, 1\), got \[0\.9\]"),
        (
            {"learn": {"betas": [0.9, 1.0]}},
            r"policy\.learn\.betas must be a pair of numbers in \[0, 1\), got \[0\.9, 1\.0\]",
        ),
        ({"learn": {"eps": 0}}, r"policy\.learn\.eps must be a finite number > 0, got 0"),
        ({"learn": {"grad_norm": -1}}, r"policy\.learn\.grad_norm must be a finite number > 0 or None"),
        ({"learn": {"batch_size": 0}}, r"policy\.learn\.batch_size must be a positive int, got 0"),
        ({"collect": {"unroll_len": 2}}, r"unroll_len must be 1 \(samples are one step each\), got 2"),
        ({"collect": {"discount_factor": 1.5}}, r"policy\.collect\.discount_factor must be a number in \(0, 1\]"),
        ({"learn": {"epoch_per_collect": 3}}, r"'policy\.learn\.epoch_per_collect'"),
    ],
)
def test_config_errors(cfg: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        small_policy(**cfg)


# ----- the pipeline -------------------------------------------------------------------------------
def test_each_collection_is_learned_once_in_minibatches(tmp_path: pathlib.Path) -> None:
    result = serial_pipeline_onpolicy(CARTPOLE_A2C, seed=0, max_env_step=160, root=tmp_path, progress=False)
    # two collections of 80 steps, each one pass of two minibatches of 40
    assert (result.env_step, result.train_iter) == (160, 4)


def test_cli_smoke_writes_the_experiment_directory(tmp_path: pathlib.Path) -> None:
    result = run_ding("-m", "serial_onpolicy", "-c", CARTPOLE_A2C, "--env-step", "20", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    exp_dir = tmp_path / "cartpole_a2c_seed0"
    assert "seed 0: stopped before stop_value 195" in result.stdout
    main_config, create_config = read_config(exp_dir / "total_config.py")
    assert create_config.policy == {"type": "a2c", "import_names": ["ding.policy.a2c"]}
    assert compile_config(main_config, create_config) == main_config
    final = load_checkpoint(next((exp_dir / "ckpt").glob("iteration_*.pth.tar")))
    assert (final["last_step"], final["last_iter"]) == (80, 2)  # one n_sample batch, learned once


def test_cartpole_a2c_reaches_the_stop_value(tmp_path: pathlib.Path) -> None:
    result = serial_pipeline_onpolicy(CARTPOLE_A2C, seed=0, max_env_step=60000, root=tmp_path, progress=False)
    assert result.stop_value_reached, result.summary()
    assert result.best_eval_return is not None and result.best_eval_return >= 195
