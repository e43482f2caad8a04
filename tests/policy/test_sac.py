"""SAC: config defaults and checks, acting, learning on a fixed batch, temperature tuning, state, pipeline warm-up."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch

from ding.config import compile_config, read_config
from ding.config.builtin_policies import BUILTIN_POLICY_MODULES
from ding.config.policy_registry import POLICY_REGISTRY
from ding.entry import serial_pipeline
from ding.envs import BaseEnvTimestep
from ding.errors import ConfigError
from ding.policy.sac import SACPolicy
from tests.entry.test_cli import ROOT

PENDULUM_SAC = ROOT / "dizoo/classic_control/pendulum/config/pendulum_sac_config.py"
MODEL = {"obs_shape": 3, "action_shape": 1, "actor_head_hidden_size": 32, "critic_head_hidden_size": 32}


def small_policy(**sections: Any) -> SACPolicy:
    cfg: dict[str, Any] = {"model": dict(MODEL)}
    cfg.update(sections)
    return SACPolicy(cfg, seed=0)


def random_batch(size: int, seed: int = 0, action_size: int = 1) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    return [
        {
            "obs": rng.normal(size=3).astype(np.float32),
            "action": rng.uniform(-1, 1, action_size).astype(np.float32),
            "reward": float(rng.normal()),
            "next_obs": rng.normal(size=3).astype(np.float32),
            "done": bool(rng.random() < 0.1),
            "discount": 0.99,
        }
        for _ in range(size)
    ]


def test_registered_and_builtin() -> None:
    assert POLICY_REGISTRY.get("sac") is SACPolicy
    assert BUILTIN_POLICY_MODULES["sac"] == "ding.policy.sac"


def test_default_config_uses_di_engine_keys_and_is_strict() -> None:
    cfg = SACPolicy.default_config()
    assert cfg["random_collect_size"] == 10000
    assert set(cfg["model"]) >= {"twin_critic", "actor_head_hidden_size", "critic_head_hidden_size"}
    assert set(cfg["learn"]) >= {
        "update_per_collect",
        "batch_size",
        "learning_rate_q",
        "learning_rate_policy",
        "learning_rate_alpha",
        "alpha",
        "auto_alpha",
        "target_theta",
        "discount_factor",
    }
    assert cfg["collect"]["n_sample"] == 1 and "eval_freq" in cfg["eval"]["evaluator"]
    assert "replay_buffer_size" in cfg["other"]["replay_buffer"]
    assert SACPolicy.default_config() is not SACPolicy.default_config()
    with pytest.raises(ConfigError, match="learning_rate"):
        small_policy(learn={"learning_rate": 0.1})
    with pytest.raises(ConfigError, match="random_collect"):
        SACPolicy({"model": dict(MODEL), "random_collect": 5})


@pytest.mark.parametrize(
    "sections, match",
    [
        ({"random_collect_size": -1}, "random_collect_size"),
        ({"learn": {"target_theta": 0.0}}, "target_theta"),
        ({"learn": {"discount_factor": 1.5}}, "discount_factor"),
        ({"learn": {"alpha": 0}}, "learn.alpha"),
        ({"learn": {"batch_size": 0}}, "batch_size"),
        ({"collect": {"unroll_len": 2}}, "unroll_len"),
        ({"priority": True}, "priority"),
        ({"on_policy": True}, "on_policy"),
    ],
)
def test_bad_values_are_config_errors(sections: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        small_policy(**sections)


def test_pendulum_config_compiles_with_shapes_from_the_env() -> None:
    main_config, create_config = read_config(PENDULUM_SAC)
    cfg = compile_config(main_config, create_config=create_config, seed=0)
    assert cfg.policy.model.obs_shape == 3 and cfg.policy.model.action_shape == 1
    assert cfg.policy.random_collect_size == 1000 and cfg.policy.learn.target_theta == 0.005
    policy = SACPolicy(cfg.policy)
    assert policy.model.action_size == 1 and policy.model.twin_critic


def test_collect_eval_actions_are_bounded_arrays() -> None:
    policy = SACPolicy({"model": {"obs_shape": 3, "action_shape": 2}}, seed=0)
    obs = {i: np.random.default_rng(i).normal(size=3).astype(np.float32) * 50 for i in range(4)}
    for out in (policy.collect_mode.forward(obs), policy.collect_mode.forward(obs, random=True)):
        assert sorted(out) == [0, 1, 2, 3]
        for value in out.values():
            assert value["action"].shape == (2,) and value["action"].dtype == np.float32
            assert np.abs(value["action"]).max() <= 1.0
    first, second = policy.eval_mode.forward(obs), policy.eval_mode.forward(obs)
    assert all(np.array_equal(first[i]["action"], second[i]["action"]) for i in obs)  # deterministic
    random_actions = np.stack([policy.collect_mode.forward(obs, random=True)[0]["action"] for _ in range(500)])
    assert random_actions.min() < -0.9 and random_actions.max() > 0.9
    with pytest.raises(ValueError, match="empty"):
        policy.collect_mode.forward({})


def test_collect_kwargs_switch_off_random_actions_after_warmup() -> None:
    policy = small_policy(random_collect_size=100)
    assert policy.collect_mode.collect_kwargs(99) == {"random": True}
    assert policy.collect_mode.collect_kwargs(100) == {"random": False}
    assert small_policy(random_collect_size=0).collect_mode.collect_kwargs(0) == {"random": False}


def test_process_transition_and_train_sample() -> None:
    policy = small_policy()
    obs, next_obs = np.zeros(3, np.float32), np.ones(3, np.float32)
    action = np.array([0.5], np.float32)
    timestep = BaseEnvTimestep(next_obs, np.array([-1.5], np.float32), True, {}, terminated=False, truncated=True)
    transition = policy.collect_mode.process_transition(obs, {"action": action}, timestep)
    assert transition["reward"] == -1.5 and transition["done"] is False  # a time-limit cut is bootstrapped
    samples = policy.collect_mode.get_train_sample([transition], True)
    assert len(samples) == 1 and samples[0]["discount"] == pytest.approx(0.99)
    assert np.array_equal(samples[0]["action"], action)


def test_td_target_uses_done_and_entropy_bonus() -> None:
    torch.manual_seed(0)
    policy = small_policy(learn={"auto_alpha": False, "alpha": 0.5})
    data = policy._collate(random_batch(6))
    data["done"] = torch.ones(6)
    assert torch.allclose(policy.td_target(data), data["reward"])
    ignoring = small_policy(learn={"ignore_done": True})
    assert not torch.allclose(ignoring.td_target(data), data["reward"])


def test_critic_loss_decreases_on_a_fixed_batch() -> None:
    torch.manual_seed(0)
    policy = small_policy(learn={"learning_rate_q": 3e-3, "learning_rate_policy": 1e-3})
    batch = random_batch(64)
    losses = [policy.learn_mode.forward(batch)["critic_loss"] for _ in range(300)]
    assert np.mean(losses[-20:]) < 0.5 * np.mean(losses[:20])
    assert policy.learn_iter == 300
    stats = policy.learn_mode.forward(batch)
    assert {"critic_loss", "policy_loss", "alpha_loss", "alpha", "q_value", "total_loss", "entropy"} <= set(stats)
    assert all(math.isfinite(value) for value in stats.values())


def test_policy_loss_decreases_against_a_fixed_critic() -> None:
    torch.manual_seed(0)
    policy = small_policy(learn={"auto_alpha": False, "learning_rate_q": 1e-12})
    batch = random_batch(64)
    losses = [policy.learn_mode.forward(batch)["policy_loss"] for _ in range(200)]
    assert np.mean(losses[-20:]) < np.mean(losses[:20])


def test_auto_alpha_moves_alpha_towards_the_target_entropy() -> None:
    torch.manual_seed(0)
    batch = random_batch(32)
    # a very low target entropy: the policy is more random than needed, alpha falls
    falling = small_policy(learn={"target_entropy": -10.0, "learning_rate_alpha": 0.01})
    # a very high target entropy: the policy is not random enough, alpha rises
    rising = small_policy(learn={"target_entropy": 10.0, "learning_rate_alpha": 0.01})
    for _ in range(50):
        falling.learn_mode.forward(batch)
        rising.learn_mode.forward(batch)
    assert falling.alpha < 0.2 * 0.8 and rising.alpha > 0.2 * 1.2
    fixed = small_policy(learn={"auto_alpha": False})
    stats = [fixed.learn_mode.forward(batch) for _ in range(5)]
    assert fixed.alpha == pytest.approx(0.2) and "alpha_loss" not in stats[-1]
    linear = small_policy(learn={"log_space": False, "target_entropy": -10.0, "learning_rate_alpha": 0.01})
    for _ in range(50):
        linear.learn_mode.forward(batch)
    assert 0 < linear.alpha < 0.2


def test_single_critic_learns() -> None:
    torch.manual_seed(0)
    policy = SACPolicy({"model": {**MODEL, "twin_critic": False}})
    stats = policy.learn_mode.forward(random_batch(8))
    assert math.isfinite(stats["critic_loss"])


def test_target_critic_moves_by_target_theta() -> None:
    policy = small_policy(learn={"target_theta": 0.5})
    before = [p.detach().clone() for p in policy._target_model.parameters()]
    policy.learn_mode.forward(random_batch(8))
    for old, target, online in zip(before, policy._target_model.parameters(), policy.model.parameters(), strict=True):
        assert torch.allclose(target, 0.5 * old + 0.5 * online, atol=1e-6)


def test_state_dict_round_trip() -> None:
    torch.manual_seed(0)
    policy = small_policy()
    batch = random_batch(16)
    for _ in range(3):
        policy.learn_mode.forward(batch)
    state = policy.learn_mode.state_dict()
    restored = small_policy()
    restored.learn_mode.load_state_dict(state)
    assert restored.learn_iter == 3 and restored.alpha == pytest.approx(policy.alpha)
    for a, b in zip(policy.model.parameters(), restored.model.parameters(), strict=True):
        assert torch.equal(a, b)
    torch.manual_seed(1)
    first = policy.learn_mode.forward(batch)
    torch.manual_seed(1)
    second = restored.learn_mode.forward(batch)
    assert first["critic_loss"] == pytest.approx(second["critic_loss"])
    evaluator_side = small_policy()
    evaluator_side.eval_mode.load_state_dict({"model": state["model"]})
    with pytest.raises(ValueError, match="'model'"):
        evaluator_side.eval_mode.load_state_dict({})


def test_pipeline_collects_random_samples_before_the_first_update(tmp_path: Any) -> None:
    main_config, create_config = read_config(PENDULUM_SAC)
    main_config.policy.random_collect_size = 300
    main_config.policy.learn.update_per_collect = 2
    main_config.policy.learn.batch_size = 16
    main_config.env.collector_env_num = 2
    main_config.env.evaluator_env_num = 1
    main_config.env.n_evaluator_episode = 1
    result = serial_pipeline((main_config, create_config), seed=0, max_train_iter=4, root=tmp_path)
    # 300 warm-up steps, then two collects of 8 samples (2 envs) with 2 updates each
    assert result.train_iter == 4 and result.env_step == 300 + 2 * 8
    assert (result.exp_dir / "ckpt" / "ckpt_best.pth.tar").exists()
