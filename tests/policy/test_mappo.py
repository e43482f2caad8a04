"""PPO over several agents (``multi_agent``, MAPPO): the MAVAC model, per-agent samples, configs filled from envs."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
import torch

from ding.config import compile_config
from ding.errors import ConfigError
from ding.model.mavac import MASKED_LOGIT, MAVAC, mavac_from_config
from ding.policy.ppo import PPOPolicy

pytest.importorskip("mpe2")

AGENTS, AGENT_OBS, GLOBAL_OBS, ACTIONS = 3, 18, 54, 5
MODEL = {"agent_num": AGENTS, "agent_obs_shape": AGENT_OBS, "global_obs_shape": GLOBAL_OBS, "action_shape": ACTIONS}


def observation(rng: np.random.Generator, mask: np.ndarray | None = None) -> dict[str, np.ndarray]:
    return {
        "agent_state": rng.normal(size=(AGENTS, AGENT_OBS)).astype(np.float32),
        "global_state": rng.normal(size=GLOBAL_OBS).astype(np.float32),
        "action_mask": np.ones((AGENTS, ACTIONS), np.float32) if mask is None else mask,
        "alive": np.ones(AGENTS, np.float32),
    }


class Step:
    def __init__(self, obs: Any, reward: Any, terminated: bool) -> None:
        self.obs, self.reward, self.terminated = obs, reward, terminated


def trajectory(policy: PPOPolicy, length: int, reward: Any, terminated: bool) -> list[dict[str, Any]]:
    rng = np.random.default_rng(0)
    traj = []
    obs = observation(rng)
    for t in range(length):
        out = policy.collect_mode.forward({0: obs})[0]
        next_obs = observation(rng)
        step = Step(next_obs, np.asarray(reward, np.float32), terminated and t == length - 1)
        traj.append(policy.collect_mode.process_transition(obs, out, step))
        obs = next_obs
    return traj


# ----- the model -----------------------------------------------------------------------------------------------
def test_mavac_shares_weights_across_agents_and_masks_actions() -> None:
    model = MAVAC(AGENT_OBS, GLOBAL_OBS, ACTIONS, AGENTS)
    agent_state = torch.randn(2, AGENTS, AGENT_OBS)
    agent_state[:, 1] = agent_state[:, 0]  # two agents seeing the same thing act the same way
    mask = torch.ones(2, AGENTS, ACTIONS)
    mask[:, 2, :4] = 0  # agent 2 may only take action 4
    out = model({"agent_state": agent_state, "global_state": torch.randn(2, GLOBAL_OBS), "action_mask": mask})
    assert out["logit"].shape == (2, AGENTS, ACTIONS) and out["value"].shape == (2, AGENTS)
    torch.testing.assert_close(out["logit"][:, 0], out["logit"][:, 1])
    assert (out["logit"][:, 2, :4] == MASKED_LOGIT).all()
    torch.testing.assert_close(out["value"][:, 0], out["value"][:, 2])  # one global state: the team's value
    per_agent = model.compute_critic({"global_state": torch.randn(2, AGENTS, GLOBAL_OBS)})["value"]
    assert per_agent.shape == (2, AGENTS) and not torch.equal(per_agent[:, 0], per_agent[:, 1])
    assert set(model({"agent_state": agent_state, "action_mask": mask}, "compute_actor")) == {"logit"}


def test_mavac_continuous_and_its_errors() -> None:
    model = MAVAC(4, 6, 2, 2, action_space="continuous")
    logit = model.compute_actor({"agent_state": torch.zeros(5, 2, 4)})["logit"]
    assert logit["mu"].shape == logit["sigma"].shape == (5, 2, 2)
    with pytest.raises(ValueError, match="MAVAC needs a dict observation with 'global_state', got \\['agent_state'\\]"):
        model({"agent_state": torch.zeros(1, 2, 4)})
    with pytest.raises(ValueError, match="agent_state has shape \\(1, 2, 5\\); the model was sized for 4 features"):
        model.compute_actor({"agent_state": torch.zeros(1, 2, 5)})
    with pytest.raises(ValueError, match="mode must be one of"):
        model({}, "compute_q")
    with pytest.raises(ConfigError, match="does not take: \\['encoder_hidden_size_list'\\]; it takes"):
        mavac_from_config({**MODEL, "encoder_hidden_size_list": [64]})
    with pytest.raises(ConfigError, match=r"policy.model.agent_num is not set"):
        mavac_from_config({key: value for key, value in MODEL.items() if key != "agent_num"})


# ----- the policy ----------------------------------------------------------------------------------------------
def test_collect_gives_each_agent_an_action_logp_and_value() -> None:
    policy = PPOPolicy({"multi_agent": True, "model": MODEL}, seed=0)
    mask = np.zeros((AGENTS, ACTIONS), np.float32)
    mask[:, 3] = 1  # only action 3 is allowed
    out = policy.collect_mode.forward({7: observation(np.random.default_rng(0), mask)})[7]
    assert out["action"].dtype == np.int64 and out["action"].tolist() == [3, 3, 3]
    assert out["logp"].shape == out["value"].shape == (AGENTS,)
    np.testing.assert_allclose(out["logp"], 0.0, atol=1e-5)  # the only allowed action is certain
    greedy = policy.eval_mode.forward({0: observation(np.random.default_rng(1))})[0]["action"]
    assert greedy.shape == (AGENTS,) and ((greedy >= 0) & (greedy < ACTIONS)).all()


@pytest.mark.parametrize("reward", [[-1.5], [-1.0, -2.0, -3.0]], ids=["team", "per-agent"])
def test_samples_have_per_agent_advantages_and_learning_changes_the_model(reward: list[float]) -> None:
    policy = PPOPolicy({"multi_agent": True, "model": MODEL, "collect": {"discount_factor": 0.9}}, seed=0)
    traj = trajectory(policy, 6, reward, terminated=True)
    samples = policy.collect_mode.get_train_sample(traj, True)
    assert len(samples) == 6 and samples[0]["adv"].shape == (AGENTS,)
    last = samples[-1]  # a real end: its advantage is reward - value for each agent
    np.testing.assert_allclose(last["adv"], np.broadcast_to(reward, (AGENTS,)) - last["value"], rtol=1e-5)
    np.testing.assert_allclose(last["return"], np.broadcast_to(reward, (AGENTS,)), rtol=1e-5)
    before = [p.detach().clone() for p in policy.model.parameters()]
    policy.learn_mode.prepare_epoch(samples, 0)
    stats = policy.learn_mode.forward(samples)
    assert stats["approx_kl"] == pytest.approx(0.0, abs=1e-6)
    assert any(not torch.equal(a, b) for a, b in zip(before, policy.model.parameters(), strict=True))


def test_agents_out_of_the_episode_add_no_loss() -> None:
    policy = PPOPolicy({"multi_agent": True, "model": MODEL}, seed=0)
    samples = policy.collect_mode.get_train_sample(trajectory(policy, 6, [-1.0], terminated=True), True)
    for sample in samples:
        sample["obs"]["alive"] = np.array([1, 1, 0], np.float32)  # agent 2 had left: its action was ignored
    changed = copy.deepcopy(samples)
    for sample in changed:
        sample["adv"][2] += 100.0
        sample["return"][2] -= 50.0
        sample["action"][2] = (sample["action"][2] + 1) % ACTIONS
    twin = PPOPolicy({"multi_agent": True, "model": MODEL}, seed=0)
    twin.load_state_dict(policy.state_dict())
    first, second = policy.learn_mode.forward(samples), twin.learn_mode.forward(changed)
    for key in ("policy_loss", "value_loss", "entropy_loss", "total_loss"):
        assert first[key] == pytest.approx(second[key], rel=1e-6), key


def test_a_reward_of_another_size_is_refused() -> None:
    policy = PPOPolicy({"multi_agent": True, "model": MODEL}, seed=0)
    with pytest.raises(ValueError, match=r"reward of size 1 or one per agent \(3,\) per step, got shape \(2,\)"):
        trajectory(policy, 1, [1.0, 2.0], terminated=True)


# ----- configs -------------------------------------------------------------------------------------------------
def mappo_config(**model: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    main = {
        "exp_name": "mappo",
        "env": {"env_id": "simple_spread_v3", "agent_specific_global_state": True, "collector_env_num": 2},
        "policy": {"multi_agent": True, "action_space": "discrete", "model": dict(model), "other": {}},
    }
    create = {
        "env": {"type": "petting_zoo", "import_names": ["dizoo.petting_zoo.envs.petting_zoo_simple_spread_env"]},
        "policy": {"type": "ppo"},
    }
    return main, create


def test_compile_fills_the_agent_shapes_from_the_env() -> None:
    cfg = compile_config(*mappo_config(action_space="discrete"), save_cfg=False)
    model = cfg.policy.model
    assert (model.agent_num, model.agent_obs_shape, model.global_obs_shape, model.action_shape) == (3, 18, 48, 5)
    assert model.actor_head_hidden_size == 256 and "obs_shape" not in model  # MAVAC's keys, not VAC's
    policy = PPOPolicy(cfg.policy)
    assert isinstance(policy.model, MAVAC) and policy.model.global_obs_size == 48  # DI-engine's 18 + 30
    given = mappo_config(action_space="discrete", global_obs_shape=48)  # DI-engine's hand-typed value
    assert compile_config(*given, save_cfg=False).policy.model == model
    with pytest.raises(ConfigError, match=r"global_obs_shape is 72, but env 'petting_zoo' gives 48 .*leave"):
        compile_config(*mappo_config(global_obs_shape=72), save_cfg=False)
    with pytest.raises(ConfigError, match=r"unknown config key 'policy.model.obs_shape'"):
        compile_config(*mappo_config(obs_shape=18), save_cfg=False)


def test_multi_agent_needs_the_multi_agent_observation() -> None:
    main, create = mappo_config()
    main["env"] = {"env_id": "simple_spread_v3", "agent_obs_only": True}
    with pytest.raises(ConfigError, match=r"policy.multi_agent needs DI-engine's multi-agent observation dict"):
        compile_config(main, create, save_cfg=False)
