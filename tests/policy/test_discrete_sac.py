"""Discrete SAC: DI-engine's keys and checks, the model's shapes, acting, soft targets by hand, learning, the
temperature, state, and CartPole through the serial pipeline."""

from __future__ import annotations

import math
import pathlib
from typing import Any

import numpy as np
import pytest
import torch

from ding.config import compile_config, read_config
from ding.config.builtin_policies import BUILTIN_POLICY_MODULES
from ding.config.policy_registry import POLICY_REGISTRY, learns_on_policy
from ding.entry import serial_pipeline
from ding.envs import BaseEnvTimestep
from ding.errors import ConfigError
from ding.model.discrete_qac import DiscreteQAC, discrete_qac_from_config
from ding.policy.discrete_sac import DiscreteSACPolicy
from tests.entry.test_cli import ROOT

CARTPOLE_SAC = ROOT / "dizoo/classic_control/cartpole/config/cartpole_sac_config.py"
MODEL = {"obs_shape": 4, "action_shape": 3, "actor_head_hidden_size": 16, "critic_head_hidden_size": 16}


def small_policy(seed: int = 0, **sections: Any) -> DiscreteSACPolicy:
    cfg: dict[str, Any] = {"model": dict(MODEL)}
    cfg.update(sections)
    return DiscreteSACPolicy(cfg, seed=seed)


def random_batch(size: int, seed: int = 0) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    return [
        {
            "obs": rng.normal(size=4).astype(np.float32),
            "action": int(rng.integers(0, 3)),
            "reward": float(rng.normal()),
            "next_obs": rng.normal(size=4).astype(np.float32),
            "done": bool(rng.random() < 0.2),
            "discount": 0.99,
        }
        for _ in range(size)
    ]


def set_actor_logits(policy: DiscreteSACPolicy, logits: list[float]) -> None:
    """Make the actor give ``logits`` for every observation (its output layer: zero weights, the logits as bias)."""
    out = policy.model.actor[-1][-1]
    with torch.no_grad():
        out.weight.zero_()
        out.bias.copy_(torch.tensor(logits))


# ----- registration and config ---------------------------------------------------------------------
def test_registered_builtin_and_off_policy() -> None:
    assert POLICY_REGISTRY.get("discrete_sac") is DiscreteSACPolicy
    assert BUILTIN_POLICY_MODULES["discrete_sac"] == DiscreteSACPolicy.__module__
    assert learns_on_policy("discrete_sac") is False


def test_default_config_has_di_engine_keys() -> None:
    cfg = DiscreteSACPolicy.default_config()
    assert cfg["random_collect_size"] == 10000 and cfg["transition_with_policy_data"] is True
    assert cfg["model"]["twin_critic"] is True
    assert {k: cfg["learn"][k] for k in ("learning_rate_q", "learning_rate_policy", "learning_rate_alpha")} == {
        "learning_rate_q": 3e-4,
        "learning_rate_policy": 3e-4,
        "learning_rate_alpha": 3e-4,
    }
    assert cfg["learn"]["auto_alpha"] is True and cfg["learn"]["log_space"] is True
    assert cfg["learn"]["target_entropy"] is None and cfg["learn"]["target_theta"] == 0.005


@pytest.mark.parametrize(
    ("sections", "match"),
    [
        ({"multi_agent": True}, r"policy\.multi_agent must be False \(discrete SAC here is single-agent\)"),
        ({"transition_with_policy_data": False}, r"policy\.transition_with_policy_data must be True"),
        ({"on_policy": True}, r"policy\.on_policy must be False \(discrete SAC learns off-policy\)"),
        ({"learn": {"learning_rate_q": 0}}, r"policy\.learn\.learning_rate_q must be a finite number > 0, got 0"),
        ({"learn": {"target_theta": 1.5}}, r"policy\.learn\.target_theta must be a number in \(0, 1\], got 1\.5"),
        ({"learn": {"target_entropy": "high"}}, r"policy\.learn\.target_entropy must be a finite number or None"),
        ({"collect": {"unroll_len": 2}}, r"unroll_len must be 1 \(samples are one step each\), got 2"),
        ({"other": {"eps": {"type": "cosine"}}}, r"eps\.type must be one of 'exp', 'linear', got 'cosine'"),
        ({"learn": {"learning_rate": 0.1}}, r"unknown config key 'policy\.learn\.learning_rate'"),
    ],
)
def test_bad_settings_are_config_errors(sections: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        small_policy(**sections)


def test_the_cartpole_config_compiles_with_shapes_from_the_env() -> None:
    cfg = compile_config(*read_config(CARTPOLE_SAC))
    assert cfg.policy.type == "discrete_sac" and cfg.policy.import_names == ["ding.policy.discrete_sac"]
    assert (cfg.policy.model.obs_shape, cfg.policy.model.action_shape) == (4, 2)


# ----- the model -----------------------------------------------------------------------------------
def test_model_shapes_single_and_twin_and_images() -> None:
    obs = torch.zeros(5, 4)
    single = DiscreteQAC(4, 3)
    assert single.compute_actor(obs)["logit"].shape == (5, 3)
    assert single.compute_critic(obs)["q_value"].shape == (5, 3)
    assert DiscreteQAC(4, 3, twin_critic=True).compute_critic(obs)["q_value"].shape == (2, 5, 3)
    pixels = DiscreteQAC((3, 32, 32), 6, twin_critic=True, encoder_hidden_size_list=[8, 8, 16])
    assert pixels(torch.zeros(2, 3, 32, 32), "compute_critic")["q_value"].shape == (2, 2, 6)
    # DI-engine's layout: a first layer, then actor_head_layer_num more, then the logits
    linears = [m for m in DiscreteQAC(4, 3, actor_head_layer_num=2).actor.modules() if isinstance(m, torch.nn.Linear)]
    assert [layer.out_features for layer in linears] == [64, 64, 64, 3]


def test_actor_and_critic_parameters_are_disjoint_and_cover_the_model() -> None:
    model = DiscreteQAC(4, 3, twin_critic=True, encoder_hidden_size_list=[8])
    actor = {id(p) for p in model.actor.parameters()}
    critic = {id(p) for p in model.critic.parameters()}
    assert not actor & critic and actor | critic == {id(p) for p in model.parameters()}


@pytest.mark.parametrize(
    ("cfg", "match"),
    [
        ({"obs_shape": 4, "action_shape": 2, "dueling": True}, r"does not take: \['dueling'\]"),
        ({"obs_shape": 4, "action_shape": [2, 3]}, r"action_shape must be the number of discrete actions"),
        ({"obs_shape": (3, 32, 32), "action_shape": 2}, r"needs encoder_hidden_size_list"),
        ({"obs_shape": None, "action_shape": 2}, r"policy\.model\.obs_shape is not set"),
        ({"obs_shape": 4, "action_shape": 2, "actor_head_layer_num": -1}, r"actor_head_layer_num must be an int >= 0"),
    ],
)
def test_bad_model_configs(cfg: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        discrete_qac_from_config(cfg)


# ----- acting --------------------------------------------------------------------------------------
def test_collection_samples_the_policy_and_evaluation_takes_its_mode() -> None:
    policy = small_policy()
    set_actor_logits(policy, [math.log(0.7), math.log(0.2), math.log(0.1)])
    obs = {i: np.full(4, i, np.float32) for i in range(2000)}
    actions = np.array([out["action"] for out in policy.collect_mode.forward(obs, eps=0.0).values()])
    np.testing.assert_allclose(np.bincount(actions, minlength=3) / len(actions), [0.7, 0.2, 0.1], atol=0.04)
    uniform = np.array([out["action"] for out in policy.collect_mode.forward(obs, eps=1.0).values()])
    np.testing.assert_allclose(np.bincount(uniform, minlength=3) / len(uniform), [1 / 3] * 3, atol=0.04)
    assert {out["action"] for out in policy.eval_mode.forward(obs).values()} == {0}


def test_collection_is_reproducible_from_the_seed() -> None:
    obs = {i: np.zeros(4, np.float32) for i in range(50)}

    def actions(seed: int) -> list[int]:
        torch.manual_seed(0)  # the same weights; the policy's seed alone drives its sampling
        return [out["action"] for out in small_policy(seed=seed).collect_mode.forward(obs, eps=0.3).values()]

    assert actions(3) == actions(3) != actions(4)


def test_random_actions_until_random_collect_size_then_the_eps_schedule() -> None:
    policy = small_policy(
        random_collect_size=100, other={"eps": {"type": "linear", "start": 0.5, "end": 0.1, "decay": 1000}}
    )
    assert policy.collect_mode.collect_kwargs(99) == {"eps": 1.0}
    assert policy.collect_mode.collect_kwargs(100)["eps"] == pytest.approx(0.5 - 0.4 * 0.1)


def test_transitions_keep_a_scalar_reward_and_refuse_others() -> None:
    policy = small_policy()
    step = BaseEnvTimestep(
        np.ones(4, np.float32), np.array([2.0], np.float32), True, {}, terminated=False, truncated=True
    )
    entry = policy.collect_mode.process_transition(np.zeros(4, np.float32), {"action": 2, "logit": np.zeros(3)}, step)
    assert (entry["action"], entry["reward"], entry["done"]) == (2, 2.0, False)  # a time-limit cut is not an end
    bad = BaseEnvTimestep(np.ones(4), np.array([1.0, 2.0]), True, {}, terminated=True)
    with pytest.raises(ValueError, match=r"discrete SAC needs a scalar reward per step, got shape \(2,\)"):
        policy.collect_mode.process_transition(np.zeros(4), {"action": 0}, bad)


# ----- learning ------------------------------------------------------------------------------------
def test_td_target_by_hand() -> None:
    policy = small_policy(learn={"alpha": 0.5, "auto_alpha": False})
    batch = random_batch(6)
    data = {
        "next_obs": torch.tensor(np.stack([s["next_obs"] for s in batch])),
        "reward": torch.tensor([s["reward"] for s in batch], dtype=torch.float32),
        "done": torch.tensor([float(s["done"]) for s in batch]),
        "discount": torch.full((6,), 0.99),
    }
    target = policy.td_target(data).numpy()
    state = policy.state_dict()
    online, frozen = DiscreteQAC(**MODEL, twin_critic=True), DiscreteQAC(**MODEL, twin_critic=True)
    online.load_state_dict(state["model"])
    frozen.load_state_dict(state["target_model"])
    for i, sample in enumerate(batch):
        x = torch.tensor(sample["next_obs"])[None]
        with torch.no_grad():
            prob = torch.softmax(online.compute_actor(x)["logit"][0], -1).numpy().astype(np.float64)
            q1, q2 = (q[0].numpy() for q in frozen.compute_critic(x)["q_value"])
        soft_value = sum(p * (min(a, b) - 0.5 * math.log(p)) for p, a, b in zip(prob, q1, q2, strict=True))
        expected = sample["reward"] + (0.0 if sample["done"] else 0.99 * soft_value)
        assert target[i] == pytest.approx(expected, abs=1e-5)
    ignoring = small_policy(learn={"alpha": 0.5, "auto_alpha": False, "ignore_done": True})
    ignoring.load_state_dict(state)
    ended = [i for i, s in enumerate(batch) if s["done"]]
    assert ended and all(ignoring.td_target(data)[i] != target[i] for i in ended)


def test_a_bandit_is_learned_critics_fit_and_the_policy_prefers_the_best_arm() -> None:
    """One state, three arms paying 0, 1 and 0.5, every step an end: Q fits the payouts, pi picks arm 1."""
    policy = small_policy(
        learn={"alpha": 0.05, "auto_alpha": False, "learning_rate_q": 1e-2, "learning_rate_policy": 1e-2}
    )
    pays = [0.0, 1.0, 0.5]
    obs = np.ones(4, np.float32)
    batch = [
        {"obs": obs, "action": a, "reward": pays[a], "next_obs": obs, "done": True, "discount": 0.99}
        for a in range(3)
        for _ in range(4)
    ]
    first = policy.learn_mode.forward(batch)
    for _ in range(300):
        last = policy.learn_mode.forward(batch)
    assert last["critic_loss"] < 0.01 * first["critic_loss"]
    with torch.no_grad():
        q = policy.model.compute_critic(torch.tensor(obs)[None])["q_value"][:, 0].numpy()
        prob = torch.softmax(policy.model.compute_actor(torch.tensor(obs)[None])["logit"][0], -1).numpy()
    np.testing.assert_allclose(q, [pays, pays], atol=0.05)
    assert prob.argmax() == 1 and prob[1] > 0.9
    assert policy.eval_mode.forward({0: obs})[0]["action"] == 1
    assert policy.learn_iter == 301


@pytest.mark.parametrize(("target_entropy", "rises"), [(0.0, False), (math.log(3), True)])
def test_auto_alpha_moves_towards_the_target_entropy(target_entropy: float, rises: bool) -> None:
    """A near-uniform first policy has entropy near log 3: alpha falls for a lower target and rises for a higher one."""
    policy = small_policy(
        learn={"target_entropy": target_entropy + (0.5 if rises else 0.0), "learning_rate_alpha": 0.05}
    )
    before = policy.alpha
    for _ in range(5):
        stats = policy.learn_mode.forward(random_batch(32))
    assert (policy.alpha > before) == rises and stats["alpha"] == pytest.approx(policy.alpha)
    fixed = small_policy(learn={"auto_alpha": False, "alpha": 0.3})
    stats = fixed.learn_mode.forward(random_batch(32))
    assert fixed.alpha == pytest.approx(0.3) and "alpha_loss" not in stats


def test_state_round_trip_and_soft_target_updates() -> None:
    policy = small_policy(learn={"target_theta": 0.5})
    before = {k: v.clone() for k, v in policy.state_dict()["target_model"].items()}
    policy.learn_mode.forward(random_batch(16))
    state = policy.state_dict()
    for key, old in before.items():  # target moved halfway to the updated online weights
        torch.testing.assert_close(state["target_model"][key], 0.5 * old + 0.5 * state["model"][key])
    other = small_policy(seed=1, learn={"target_theta": 0.5})
    other.learn_mode.load_state_dict(state)
    obs = {0: np.ones(4, np.float32)}
    np.testing.assert_array_equal(policy.eval_mode.forward(obs)[0]["logit"], other.eval_mode.forward(obs)[0]["logit"])
    assert other.learn_iter == 1 and other.alpha == pytest.approx(policy.alpha)
    with pytest.raises(ValueError, match=r"a discrete SAC state dict needs a 'model' entry"):
        other.eval_mode.load_state_dict({"weights": {}})


# ----- the pipeline --------------------------------------------------------------------------------
def test_cartpole_sac_reaches_the_stop_value(tmp_path: pathlib.Path) -> None:
    result = serial_pipeline(str(CARTPOLE_SAC), seed=0, max_env_step=120_000, root=tmp_path, progress=False)
    assert result.stop_value_reached, result.summary()
    assert result.best_eval_return is not None and result.best_eval_return >= 195
