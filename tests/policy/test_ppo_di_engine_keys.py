"""DI-engine's PPO keys in ding: value_norm, recompute_adv, gradient clipping types, KL penalty, schedules, and the
keys every DI-engine policy section carries."""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

from ding.config import compile_config
from ding.config.di_engine.policy_keys import without_inert_keys
from ding.errors import ConfigError
from ding.model.vac import VAC
from ding.policy.dqn import DQNPolicy
from ding.policy.ppo import PPOPolicy, gae_advantages
from ding.policy.sac import SACPolicy

MODEL = {"obs_shape": 4, "action_shape": 2}


class Step:
    def __init__(self, obs: Any, reward: float, terminated: bool) -> None:
        self.obs, self.reward, self.terminated = obs, np.array([reward], np.float32), terminated


def collection(policy: PPOPolicy, lengths: list[int], reward: float = 1.0) -> list[dict[str, Any]]:
    """Samples of trajectories of the given lengths (each ends in a termination)."""
    rng = np.random.default_rng(0)
    samples = []
    for length in lengths:
        traj = []
        obs = rng.normal(size=4).astype(np.float32)
        for t in range(length):
            out = policy.collect_mode.forward({0: obs})[0]
            next_obs = rng.normal(size=4).astype(np.float32)
            traj.append(policy.collect_mode.process_transition(obs, out, Step(next_obs, reward, t == length - 1)))
            obs = next_obs
        samples.extend(policy.collect_mode.get_train_sample(traj, True))
    return samples


def learn_epochs(policy: PPOPolicy, samples: list[dict[str, Any]], epochs: int) -> None:
    for epoch in range(epochs):
        policy.learn_mode.prepare_epoch(samples, epoch)
        policy.learn_mode.forward(samples)


def test_di_engines_ppo_defaults() -> None:
    cfg = PPOPolicy.merge_config({})
    assert cfg.recompute_adv is True and cfg.learn.value_norm is True and cfg.learn.grad_clip_type == "clip_norm"
    assert cfg.learn.kl_beta == 0.0 and cfg.learn.pretrained_model_path is None and cfg.load_path is None


def test_recompute_adv_uses_the_critic_as_it_is_now() -> None:
    cfg = {"model": MODEL, "learn": {"value_norm": False}, "collect": {"discount_factor": 0.9, "gae_lambda": 0.8}}
    policy = PPOPolicy({**cfg, "recompute_adv": True}, seed=0)
    samples = collection(policy, [5, 7])
    first = [float(s["adv"]) for s in samples]
    policy.learn_mode.forward(samples)  # the critic moves
    policy.learn_mode.prepare_epoch(samples, 1)
    with torch.no_grad():
        values = policy.model(torch.as_tensor(np.stack([s["obs"] for s in samples])))["value"].numpy()
    expected = []
    for part in (values[:5], values[5:]):  # two terminated trajectories of reward 1
        next_value = np.append(part[1:], 0.0)
        done = np.zeros(len(part))
        done[-1] = 1
        expected.extend(gae_advantages(np.ones(len(part)), part, next_value, done, 0.9, 0.8))
    np.testing.assert_allclose([float(s["adv"]) for s in samples], expected, rtol=1e-5)
    assert not np.allclose(expected, first)
    kept = PPOPolicy({**cfg, "recompute_adv": False}, seed=0)
    samples = collection(kept, [5, 7])
    first = [float(s["adv"]) for s in samples]
    learn_epochs(kept, samples, 3)
    assert [float(s["adv"]) for s in samples] == first  # computed once, at collection


def test_value_norm_scales_the_critic_by_the_running_return_std() -> None:
    policy = PPOPolicy({"model": MODEL, "learn": {"value_norm": True}, "recompute_adv": False}, seed=0)
    samples = collection(policy, [20, 20], reward=10.0)
    returns = np.array([s["return"] for s in samples])
    policy.learn_mode.prepare_epoch(samples, 0)
    scale = policy.state_dict()["return_scale"]
    assert scale["count"] == pytest.approx(len(samples) + 1e-4)
    assert scale["var"] == pytest.approx(float(returns.var()), rel=0.01)
    out = policy.collect_mode.forward({0: samples[0]["obs"]})[0]
    with torch.no_grad():
        raw = float(policy.model(torch.as_tensor(samples[0]["obs"])[None])["value"][0])
    assert out["value"] == pytest.approx(raw * np.sqrt(scale["var"] + 1e-8), rel=1e-5)  # on the returns' scale
    other = PPOPolicy({"model": MODEL}, seed=1)
    other.load_state_dict(policy.state_dict())
    assert other.state_dict()["return_scale"] == scale


@pytest.mark.parametrize("clip_type", ["clip_norm", "clip_value", None])
def test_grad_clip_types(clip_type: str | None) -> None:
    policy = PPOPolicy({"model": MODEL, "learn": {"grad_clip_type": clip_type, "grad_clip_value": 1e-3}}, seed=0)
    samples = collection(policy, [10])
    seen: list[float] = []
    optimizer_step = policy._optimizer.step

    def record(*args: Any, **kwargs: Any) -> Any:
        grads = [p.grad.abs().max().item() for p in policy.model.parameters() if p.grad is not None]
        seen.append(max(grads))
        return optimizer_step(*args, **kwargs)

    policy._optimizer.step = record  # type: ignore[method-assign]
    policy.learn_mode.prepare_epoch(samples, 0)
    policy.learn_mode.forward(samples)
    if clip_type == "clip_value":
        assert seen[0] <= 1e-3 + 1e-9
    elif clip_type is None:
        assert seen[0] > 1e-3
    with pytest.raises(
        ConfigError, match=r"grad_clip_type must be one of 'clip_norm', 'clip_value' or None, got 'clip_momentum'"
    ):
        PPOPolicy({"model": MODEL, "learn": {"grad_clip_type": "clip_momentum"}})


def test_kl_penalty_towards_a_pretrained_model(tmp_path: pathlib.Path) -> None:
    reference = PPOPolicy({"model": MODEL}, seed=5)
    path = tmp_path / "pretrained.pth.tar"
    torch.save(reference.state_dict(), path)
    policy = PPOPolicy(
        {"model": MODEL, "learn": {"pretrained_model_path": str(path), "kl_beta": 0.5, "kl_type": "k3"}}, seed=0
    )
    samples = collection(policy, [8])
    policy.learn_mode.prepare_epoch(samples, 0)
    stats = policy.learn_mode.forward(samples)
    assert stats["kl_div"] > 0  # the two models differ
    assert stats["total_loss"] == pytest.approx(
        stats["policy_loss"] + 0.5 * stats["value_loss"] + 0.5 * stats["kl_div"], rel=1e-4
    )
    with pytest.raises(ConfigError, match=r"pretrained_model_path .* cannot be loaded"):
        PPOPolicy({"model": MODEL, "learn": {"pretrained_model_path": str(tmp_path / "none.pth")}})
    with pytest.raises(ConfigError, match=r"kl_type must be one of 'k1', 'k2', 'k3', got 'k4'"):
        PPOPolicy({"model": MODEL, "learn": {"kl_type": "k4"}})


def test_lr_scheduler_lowers_the_rate_per_collection() -> None:
    schedule = {"epoch_num": 4, "min_lr_lambda": 0.5}
    policy = PPOPolicy({"model": MODEL, "learn": {"learning_rate": 0.1, "lr_scheduler": schedule}}, seed=0)
    rates = []
    for _ in range(4):
        samples = collection(policy, [4])
        learn_epochs(policy, samples, 2)
        rates.append(policy._optimizer.param_groups[0]["lr"])
    np.testing.assert_allclose(rates, [0.1, 0.0875, 0.075, 0.0625])
    with pytest.raises(
        ConfigError, match=r"lr_scheduler must be a dict \{'epoch_num': n > 0, 'min_lr_lambda': x in \[0, 1\]\} or None"
    ):
        PPOPolicy({"model": MODEL, "learn": {"lr_scheduler": {"epoch_num": 4}}})


def test_model_keys_of_di_engine() -> None:
    policy = PPOPolicy(
        {
            "action_space": "continuous",
            "model": {"obs_shape": 3, "action_shape": 1, "action_space": "continuous", "bound_type": "tanh"},
        }
    )
    assert isinstance(policy.model, VAC) and policy.model.bound_type == "tanh"
    mu = policy.model(torch.full((2, 3), 100.0))["logit"]["mu"]
    assert (mu.abs() <= 1).all()
    with pytest.raises(ConfigError, match=r"policy.model.action_space is 'discrete' but policy.action_space is"):
        PPOPolicy({"action_space": "continuous", "model": {**MODEL, "action_space": "discrete"}})
    with pytest.raises(ConfigError, match="sigma_type must be 'independent'"):
        PPOPolicy({"model": {**MODEL, "sigma_type": "conditioned"}})
    default_init = PPOPolicy({"model": MODEL, "learn": {"ppo_param_init": False}}, seed=0)
    orthogonal = PPOPolicy({"model": MODEL}, seed=0)
    out_default, out_orthogonal = default_init.model.actor_out.weight, orthogonal.model.actor_out.weight
    assert out_default.abs().max() > 10 * out_orthogonal.abs().max()  # orthogonal starts the policy near-uniform
    for key, value in (("priority", True), ("nstep_return", True), ("transition_with_policy_data", False)):
        with pytest.raises(ConfigError, match=rf"policy\.{key} must be {not value!r} \("):
            PPOPolicy({"model": MODEL, key: value})


def in_ding_terms(section: dict[str, Any]) -> dict[str, Any]:
    """A PPO section in DI-engine's layout read into ding's terms, as ``compile_config`` reads it."""
    return without_inert_keys(section, PPOPolicy.defaults_for(section))


def test_keys_every_di_engine_policy_section_carries() -> None:
    section = {
        "model": {**MODEL, "activation": nn.Tanh()},
        "load_path": "run/ckpt/ckpt_best.pth.tar",
        "learn": {"multi_gpu": False, "resume_training": False},
        "collect": {"env_num": 8, "collector_env_num": 8},
        "eval": {"env_num": 5, "evaluator_env_num": 5},
        "other": {},
        "command": {},
    }
    cfg = PPOPolicy.merge_config(in_ding_terms(section))
    assert cfg.model.activation == "tanh" and cfg.load_path == "run/ckpt/ckpt_best.pth.tar"
    assert "multi_gpu" not in cfg.learn and "env_num" not in cfg.collect and "other" not in cfg
    assert "collector_env_num" not in cfg.collect and not {"env_num", "evaluator_env_num"} & set(cfg.eval)
    for key in ("multi_gpu", "resume_training"):
        with pytest.raises(ConfigError, match=f"policy.learn.{key} is True: "):
            in_ding_terms({"learn": {key: True}})
    with pytest.raises(ConfigError, match=r"unknown config key 'policy.other'"):
        PPOPolicy.merge_config(in_ding_terms({"other": {"replay_buffer": {}}}))  # a non-empty section is still checked
    with pytest.raises(ConfigError, match=r"unknown config key 'policy.collect.env_num'"):
        PPOPolicy.merge_config({"collect": {"env_num": 8}})  # a policy takes ding's terms; compile_config reads these


def test_random_collect_size_acts_uniformly_first() -> None:
    policy = DQNPolicy({"model": MODEL, "random_collect_size": 100}, seed=0)
    assert policy.collect_mode.collect_kwargs(99) == {"eps": 1.0}
    assert policy.collect_mode.collect_kwargs(100)["eps"] < 1.0
    assert SACPolicy.merge_config({"model": {"action_space": "reparameterization"}}).learn.reparameterization
    with pytest.raises(ConfigError, match=r"policy.learn.reparameterization must be True"):
        SACPolicy({"model": {"obs_shape": 3, "action_shape": 1}, "learn": {"reparameterization": False}})


def test_di_engine_style_ppo_config_compiles() -> None:
    main = {
        "exp_name": "cartpole_ppo",
        "env": {"collector_env_num": 8, "evaluator_env_num": 5, "n_evaluator_episode": 5, "stop_value": 195},
        "policy": {
            "cuda": False,
            "recompute_adv": True,
            "action_space": "discrete",
            "model": {"obs_shape": 4, "action_shape": 2, "action_space": "discrete"},
            "learn": {"epoch_per_collect": 2, "value_norm": True, "resume_training": False, "ignore_done": False},
            "collect": {"n_sample": 256, "discount_factor": 0.9},
            "eval": {"evaluator": {"eval_freq": 100}},
        },
    }
    create = {
        "env": {"type": "cartpole", "import_names": ["dizoo.classic_control.cartpole.envs.cartpole_env"]},
        "env_manager": {"type": "base"},
        "policy": {"type": "ppo"},
        "replay_buffer": {"type": "deque", "import_names": ["ding.data.buffer.deque_buffer_wrapper"]},
    }
    cfg = compile_config(main, create, save_cfg=False)
    assert cfg.policy.learn.value_norm and cfg.policy.model.obs_shape == 4 and cfg.policy.load_path is None
