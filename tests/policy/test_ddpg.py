"""DDPG and TD3: DI-engine's keys and module names, checks, exploration noise, targets by hand (with smoothing),
delayed actor updates, learning a one-step task, state, and Pendulum through the serial pipeline."""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np
import pytest
import torch

from ding.config import compile_config, read_config
from ding.config.builtin_policies import BUILTIN_POLICY_MODULES
from ding.config.policy_registry import POLICY_REGISTRY, learns_on_policy
from ding.entry import serial_pipeline
from ding.errors import ConfigError
from ding.model.deterministic_qac import DeterministicQAC, deterministic_qac_from_config
from ding.policy.ddpg import DDPGPolicy
from ding.policy.td3 import TD3Policy
from tests.entry.test_cli import ROOT

PENDULUM = ROOT / "dizoo/classic_control/pendulum/config"
MODEL = {"obs_shape": 3, "action_shape": 2, "actor_head_hidden_size": 16, "critic_head_hidden_size": 16}


def small(policy_cls: type[DDPGPolicy] = TD3Policy, seed: int = 0, **sections: Any) -> DDPGPolicy:
    return policy_cls({"model": dict(MODEL), **sections}, seed=seed)


def random_batch(size: int, seed: int = 0) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    return [
        {
            "obs": rng.normal(size=3).astype(np.float32),
            "action": rng.uniform(-1, 1, 2).astype(np.float32),
            "reward": float(rng.normal()),
            "next_obs": rng.normal(size=3).astype(np.float32),
            "done": bool(rng.random() < 0.2),
            "discount": 0.99,
        }
        for _ in range(size)
    ]


def zero_actor(policy: DDPGPolicy) -> None:
    """Make the actor output 0 everywhere (its last linear layer zeroed)."""
    last = policy.model.actor[-2][-1]
    with torch.no_grad():
        last.weight.zero_()
        last.bias.zero_()


# ----- registration and config ---------------------------------------------------------------------
def test_registered_under_di_engine_names_and_modules() -> None:
    assert POLICY_REGISTRY.get("ddpg") is DDPGPolicy and POLICY_REGISTRY.get("td3") is TD3Policy
    assert BUILTIN_POLICY_MODULES["ddpg"] == "ding.policy.ddpg" and BUILTIN_POLICY_MODULES["td3"] == "ding.policy.td3"
    assert learns_on_policy("ddpg") is False and learns_on_policy("td3") is False


def test_defaults_are_di_engine_s() -> None:
    ddpg, td3 = DDPGPolicy.default_config(), TD3Policy.default_config()
    assert (ddpg["model"]["twin_critic"], ddpg["learn"]["actor_update_freq"], ddpg["learn"]["noise"]) == (
        False,
        1,
        False,
    )
    assert (td3["model"]["twin_critic"], td3["learn"]["actor_update_freq"], td3["learn"]["noise"]) == (True, 2, True)
    for cfg in (ddpg, td3):
        assert cfg["random_collect_size"] == 25000 and cfg["collect"]["noise_sigma"] == 0.1
        assert cfg["learn"]["noise_range"] == {"min": -0.5, "max": 0.5} and cfg["learn"]["target_theta"] == 0.005
        assert cfg["model"]["action_space"] == "regression" and cfg["action_space"] == "continuous"


@pytest.mark.parametrize(
    ("sections", "match"),
    [
        ({"action_space": "hybrid"}, r"policy\.action_space must be 'continuous' \(the actor gives Box actions"),
        ({"multi_agent": True}, r"policy\.multi_agent must be False \(single-agent here\), got True"),
        ({"transition_with_policy_data": True}, r"policy\.transition_with_policy_data must be False"),
        ({"model": {**MODEL, "action_space": "reparameterization"}}, r"model\.action_space must be 'regression'"),
        ({"learn": {"actor_update_freq": 0}}, r"policy\.learn\.actor_update_freq must be a positive int, got 0"),
        (
            {"learn": {"noise_range": {"min": 0.5, "max": -0.5}}},
            r"noise_range\.min 0\.5 exceeds .*noise_range\.max -0\.5",
        ),
        ({"learn": {"noise_range": {"low": -1}}}, r"unknown config key 'policy\.learn\.noise_range\.low'"),
        ({"collect": {"noise_sigma": -0.1}}, r"policy\.collect\.noise_sigma must be a finite number >= 0, got -0\.1"),
        ({"learn": {"learning_rate_q": 0.1}}, r"unknown config key 'policy\.learn\.learning_rate_q'"),
        ({"collect": {"unroll_len": 3}}, r"unroll_len must be 1 \(samples are one step each\), got 3"),
    ],
)
def test_bad_settings_are_config_errors(sections: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        small(**sections)


def test_a_di_engine_style_td3_config_compiles_with_its_module_listed() -> None:
    main, create = read_config(PENDULUM / "pendulum_td3_config.py")
    create.policy.import_names = ["ding.policy.td3"]  # as DI-engine's MuJoCo TD3 configs list it
    main.policy.collect.collector = {"collect_print_freq": 1000}  # DI-engine's collector log interval: dropped
    cfg = compile_config(main, create)
    assert cfg.policy.type == "td3" and (cfg.policy.model.obs_shape, cfg.policy.model.action_shape) == (3, 1)
    assert "collector" not in cfg.policy.collect


# ----- the model -----------------------------------------------------------------------------------
def test_model_layout_and_bad_configs() -> None:
    model = DeterministicQAC(3, 2, twin_critic=True, actor_head_layer_num=2)
    widths = [m.out_features for m in model.actor.modules() if isinstance(m, torch.nn.Linear)]
    assert widths == [64, 64, 64, 2]  # a first layer, two more, then the action
    assert model(torch.zeros(5, 3), "compute_critic", torch.zeros(5, 2))["q_value"].shape == (2, 5)
    with pytest.raises(ValueError, match=r"built for action_shape 2 got actions of shape \(5, 3\)"):
        model.compute_critic(torch.zeros(5, 3), torch.zeros(5, 3))
    with pytest.raises(ConfigError, match=r"does not take: \['sigma_type'\]"):
        deterministic_qac_from_config({"obs_shape": 3, "action_shape": 1, "sigma_type": "fixed"})
    actor = {id(p) for p in model.actor.parameters()}
    assert not actor & {id(p) for p in model.critic.parameters()}


# ----- acting --------------------------------------------------------------------------------------
def test_collection_adds_clipped_gaussian_noise_and_evaluation_none() -> None:
    policy = small(collect={"noise_sigma": 0.1})
    zero_actor(policy)
    obs = {i: np.full(3, i, np.float32) for i in range(4000)}
    actions = np.stack([out["action"] for out in policy.collect_mode.forward(obs).values()])
    assert actions.dtype == np.float32 and abs(actions.mean()) < 0.01 and actions.std() == pytest.approx(0.1, rel=0.05)
    assert all(np.array_equal(out["action"], np.zeros(2)) for out in policy.eval_mode.forward(obs).values())
    wide = small(collect={"noise_sigma": 5.0})
    wide_actions = np.stack([out["action"] for out in wide.collect_mode.forward(obs).values()])
    assert wide_actions.min() == -1.0 and wide_actions.max() == 1.0
    uniform = np.stack([out["action"] for out in policy.collect_mode.forward(obs, random=True).values()])
    assert -1 <= uniform.min() < -0.95 and 0.95 < uniform.max() <= 1 and abs(uniform.mean()) < 0.05


# ----- learning ------------------------------------------------------------------------------------
def test_td_target_by_hand_with_the_smaller_twin() -> None:
    policy = small(learn={"noise": False})
    batch = random_batch(8)
    data = policy._collate(batch)
    target = policy.td_target(data)
    frozen = DeterministicQAC(**MODEL, twin_critic=True)
    frozen.load_state_dict(policy.state_dict()["target_model"])
    with torch.no_grad():
        next_action = frozen.compute_actor(data["next_obs"])["action"]
        q1, q2 = frozen.compute_critic(data["next_obs"], next_action)["q_value"]
    for i, sample in enumerate(batch):
        bootstrap = 0.0 if sample["done"] else 0.99 * min(float(q1[i]), float(q2[i]))
        assert float(target[i]) == pytest.approx(sample["reward"] + bootstrap, abs=1e-5)


def test_target_policy_smoothing_stays_within_the_noise_range_and_the_bounds() -> None:
    policy = small(learn={"noise_sigma": 1.0, "noise_range": {"min": -0.2, "max": 0.3}})
    next_obs = torch.randn(2000, 3)
    with torch.no_grad():
        clean = policy._target_model.compute_actor(next_obs)["action"]
    smoothed = policy.target_action(next_obs)
    shift = smoothed - clean
    inside = (clean > -0.8) & (clean < 0.7)  # where clipping to [-1, 1] cannot bite
    assert shift[inside].min() >= -0.2 - 1e-6 and shift[inside].max() <= 0.3 + 1e-6
    assert shift.abs().max() > 0.1 and smoothed.abs().max() <= 1.0
    plain = small(learn={"noise": False})
    with torch.no_grad():
        torch.testing.assert_close(plain.target_action(next_obs), plain._target_model.compute_actor(next_obs)["action"])


def test_the_actor_moves_every_actor_update_freq_updates_and_the_critic_every_update() -> None:
    policy = small(learn={"actor_update_freq": 2})

    def actor_params() -> list[torch.Tensor]:
        return [p.detach().clone() for p in policy.model.actor.parameters()]

    start = actor_params()
    first = policy.learn_mode.forward(random_batch(16))
    assert "actor_loss" not in first and all(torch.equal(a, b) for a, b in zip(start, actor_params(), strict=True))
    second = policy.learn_mode.forward(random_batch(16, seed=1))
    assert "actor_loss" in second and not all(torch.equal(a, b) for a, b in zip(start, actor_params(), strict=True))
    assert second["total_loss"] == pytest.approx(second["critic_loss"] + second["actor_loss"])
    assert set(second) >= {"cur_lr_actor", "cur_lr_critic", "q_value", "target_q_value"}


@pytest.mark.parametrize("policy_cls", [DDPGPolicy, TD3Policy])
def test_a_one_step_task_is_learned(policy_cls: type[DDPGPolicy]) -> None:
    """Reward -(a - 0.5)^2 in every dimension, every step an end: the actor settles on 0.5."""
    torch.manual_seed(0)
    model = {**MODEL, "critic_head_hidden_size": 64}
    policy = policy_cls({"model": model, "learn": {"learning_rate_actor": 1e-3, "learning_rate_critic": 1e-2}}, seed=0)
    rng = np.random.default_rng(0)
    obs = np.ones(3, np.float32)
    for _ in range(600):
        actions = rng.uniform(-1, 1, (32, 2)).astype(np.float32)
        batch = [
            {
                "obs": obs,
                "action": a,
                "reward": float(-((a - 0.5) ** 2).sum()),
                "next_obs": obs,
                "done": True,
                "discount": 0.99,
            }
            for a in actions
        ]
        policy.learn_mode.forward(batch)
    np.testing.assert_allclose(policy.eval_mode.forward({0: obs})[0]["action"], [0.5, 0.5], atol=0.1)


def test_reward_batch_norm_standardizes_each_batch() -> None:
    data = small(reward_batch_norm=True)._collate(random_batch(64))
    assert float(data["reward"].mean()) == pytest.approx(0.0, abs=1e-5)
    assert float(data["reward"].std(unbiased=False)) == pytest.approx(1.0, abs=1e-4)


def test_state_round_trip() -> None:
    policy = small()
    for seed in range(3):
        policy.learn_mode.forward(random_batch(16, seed))
    other = small(seed=5)
    other.learn_mode.load_state_dict(policy.state_dict())
    obs = {0: np.ones(3, np.float32)}
    np.testing.assert_array_equal(policy.eval_mode.forward(obs)[0]["action"], other.eval_mode.forward(obs)[0]["action"])
    assert other.learn_iter == 3
    with pytest.raises(ValueError, match=r"a TD3 state dict needs a 'model' entry"):
        other.eval_mode.load_state_dict({})


# ----- the pipeline --------------------------------------------------------------------------------
@pytest.mark.parametrize("algo", ["td3", "ddpg"])
def test_pendulum_reaches_the_stop_value(algo: str, tmp_path: pathlib.Path) -> None:
    config = str(PENDULUM / f"pendulum_{algo}_config.py")
    result = serial_pipeline(config, seed=0, max_env_step=20_000, root=tmp_path, progress=False)
    assert result.stop_value_reached, result.summary()
