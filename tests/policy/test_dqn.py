"""DQN: learning on a fixed batch, n-step double-DQN targets, epsilon schedules, config checks, state."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

from ding.config import compile_config, read_config
from ding.config.builtin_policies import BUILTIN_POLICY_MODULES
from ding.config.policy_registry import POLICY_REGISTRY
from ding.envs import BaseEnvTimestep
from ding.errors import ConfigError
from ding.policy.dqn import DQNPolicy
from ding.policy.exploration import epsilon_greedy
from ding.policy.nstep import double_dqn_target, nstep_samples
from tests.entry.test_cli import CARTPOLE

SMALL = {"model": {"obs_shape": 4, "action_shape": 2, "encoder_hidden_size_list": [32, 32]}}


def small_policy(**sections: Any) -> DQNPolicy:
    cfg: dict[str, Any] = {"model": dict(SMALL["model"])}
    for key, value in sections.items():
        cfg[key] = value
    return DQNPolicy(cfg, seed=0)


def random_batch(size: int, seed: int = 0) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    return [
        {
            "obs": rng.normal(size=4).astype(np.float32),
            "action": int(rng.integers(2)),
            "reward": float(rng.normal()),
            "next_obs": rng.normal(size=4).astype(np.float32),
            "done": bool(rng.random() < 0.2),
            "discount": 0.97,
        }
        for _ in range(size)
    ]


class Identity(nn.Module):
    """Q-values equal to the observation (one value per action), so targets can be computed by hand."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.scale = nn.Linear(n, n, bias=False)
        with torch.no_grad():
            self.scale.weight.copy_(torch.eye(n))

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"logit": self.scale(x)}


# ----- registration and config --------------------------------------------------------------------
def test_dqn_is_registered_with_its_declared_defaults() -> None:
    assert POLICY_REGISTRY.get("dqn") is DQNPolicy
    assert BUILTIN_POLICY_MODULES["dqn"] == DQNPolicy.__module__
    defaults = DQNPolicy.default_config()
    assert defaults["learn"]["target_update_freq"] == 100 and defaults["other"]["eps"]["type"] == "exp"
    defaults["learn"]["batch_size"] = 1
    assert DQNPolicy.default_config()["learn"]["batch_size"] == 64  # a fresh copy each time


def test_cartpole_config_compiles_strictly_into_dqn_defaults() -> None:
    main, create = read_config(CARTPOLE)
    cfg = compile_config(main, create)
    policy = cfg.policy
    assert policy.model == {
        "obs_shape": 4,
        "action_shape": 2,
        "obs_dtype": "float32",
        "obs_range": None,
        "encoder_hidden_size_list": [128, 128, 64],
        "dueling": True,
        "head_hidden_size": None,
        "head_layer_num": 1,
        "activation": "relu",
        "noise": False,
    }
    assert policy.learn.target_update_freq == 100 and policy.collect.unroll_len == 1
    main.policy.learn.target_update_frq = 10
    with pytest.raises(ConfigError, match=r"'policy\.learn\.target_update_frq'.*Did you mean 'target_update_freq'"):
        compile_config(main, create)


@pytest.mark.parametrize(
    ("cfg", "match"),
    [
        ({"priority_IS_weight": True}, r"priority_IS_weight is True but policy\.priority is False"),
        ({"other": {"replay_buffer": {"alpha": 0.7}}}, r"replay_buffer\.alpha is 0\.7 but policy\.priority is False"),
        ({"priority": True, "other": {"replay_buffer": {"beta": 1.5}}}, r"replay_buffer\.beta must be a number in"),
        ({"on_policy": True}, r"policy\.on_policy must be False \(DQN and its variants learn off-policy\)"),
        ({"nstep": 0}, r"policy\.nstep must be a positive int, got 0"),
        ({"discount_factor": 0.0}, r"policy\.discount_factor must be a number in \(0, 1\], got 0\.0"),
        ({"collect": {"unroll_len": 2}}, r"unroll_len must be 1 \(samples are one step each\), got 2"),
        ({"collect": {"n_sample": 0}}, r"policy\.collect\.n_sample must be a positive int, got 0"),
        ({"learn": {"batch_size": 0}}, r"policy\.learn\.batch_size must be a positive int, got 0"),
        ({"learn": {"learning_rate": -1.0}}, r"policy\.learn\.learning_rate must be a finite number > 0, got -1\.0"),
        ({"learn": {"target_update_freq": 0}}, r"policy\.learn\.target_update_freq must be a positive int"),
        ({"learn": {"target_theta": 1.5}}, r"policy\.learn\.target_theta must be a number in \(0, 1\] or None"),
        ({"other": {"eps": {"type": "cosine"}}}, r"eps\.type must be one of 'exp', 'linear', got 'cosine'"),
        ({"learn": {"batchsize": 3}}, r"unknown config key 'policy\.learn\.batchsize'.*Did you mean 'batch_size'"),
    ],
)
def test_bad_settings_are_config_errors(cfg: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        small_policy(**cfg)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the fallback on a machine without CUDA")
def test_cuda_without_a_device_runs_on_the_cpu_with_a_warning() -> None:
    with pytest.warns(UserWarning, match=r"policy\.cuda is True but torch sees no CUDA device; running on the CPU"):
        policy = small_policy(cuda=True)
    assert {tensor.device.type for tensor in policy.state_dict()["model"].values()} == {"cpu"}


def test_policy_config_must_be_a_dict() -> None:
    with pytest.raises(ConfigError, match=r"policy config must be a dict, got list"):
        DQNPolicy([1, 2])  # type: ignore[arg-type]


# ----- learning -----------------------------------------------------------------------------------
def test_loss_decreases_on_a_fixed_batch() -> None:
    torch.manual_seed(0)
    policy = small_policy(learn={"learning_rate": 0.003, "target_update_freq": 10**6})
    batch = random_batch(64)
    losses = [policy.learn_mode.forward(batch)["total_loss"] for _ in range(300)]
    assert losses[-1] < 0.05 * losses[0]
    assert all(math.isfinite(loss) for loss in losses)
    stats = policy.learn_mode.forward(batch)
    assert set(stats) == {"cur_lr", "total_loss", "q_value", "target_q_value"} and stats["cur_lr"] == 0.003
    assert policy.learn_iter == 301


def test_hard_target_update_copies_every_target_update_freq_updates() -> None:
    torch.manual_seed(0)
    policy = small_policy(learn={"target_update_freq": 3})
    batch = random_batch(16)

    def same() -> bool:
        state = policy.state_dict()
        return all(torch.equal(state["model"][k], state["target_model"][k]) for k in state["model"])

    assert same()
    policy.learn_mode.forward(batch)
    policy.learn_mode.forward(batch)
    assert not same()
    policy.learn_mode.forward(batch)
    assert same()


def test_soft_target_update_moves_by_target_theta() -> None:
    torch.manual_seed(0)
    policy = small_policy(learn={"target_theta": 0.25})
    before = {k: v.clone() for k, v in policy.state_dict()["target_model"].items()}
    policy.learn_mode.forward(random_batch(16))
    state = policy.state_dict()
    for key, old in before.items():
        torch.testing.assert_close(state["target_model"][key], 0.75 * old + 0.25 * state["model"][key])


# ----- n-step targets -----------------------------------------------------------------------------
def transition(t: int, reward: float, done: bool = False) -> dict[str, Any]:
    return {"obs": t, "action": t % 2, "reward": reward, "next_obs": t + 1, "done": done}


def summary(samples: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(s["obs"], s["action"], s["reward"], s["next_obs"], s["done"], s["discount"]) for s in samples]


def test_nstep_samples_of_a_terminated_episode() -> None:
    traj = [transition(0, 1.0), transition(1, 2.0), transition(2, 4.0, done=True)]
    # gamma 0.5, n = 2: r0 + g r1, r1 + g r2, and the last step alone
    assert summary(nstep_samples(traj, 2, 0.5, episode_over=True)) == [
        (0, 0, 2.0, 2, False, 0.25),
        (1, 1, 4.0, 3, True, 0.25),
        (2, 0, 4.0, 3, True, 0.5),
    ]
    # n = 3 covers the whole episode from step 0
    assert summary(nstep_samples(traj, 3, 0.5, episode_over=True))[0] == (0, 0, 1.0 + 1.0 + 1.0, 3, True, 0.125)
    # n = 1 is the one-step target
    assert [s["reward"] for s in nstep_samples(traj, 1, 0.5, episode_over=True)] == [1.0, 2.0, 4.0]


def test_nstep_samples_wait_for_their_window_while_the_episode_runs() -> None:
    traj = [transition(0, 1.0), transition(1, 1.0)]
    assert nstep_samples(traj, 3, 0.9, episode_over=False) == []
    traj.append(transition(2, 1.0))
    assert summary(nstep_samples(traj, 3, 0.9, episode_over=False)) == [(0, 0, pytest.approx(2.71), 3, False, 0.9**3)]


def test_a_time_limit_cut_is_bootstrapped_with_the_discount_of_the_steps_taken() -> None:
    traj = [transition(0, 1.0), transition(1, 1.0)]  # truncated: the last step is not done
    assert summary(nstep_samples(traj, 5, 0.5, episode_over=True)) == [
        (0, 0, 1.5, 2, False, 0.25),
        (1, 1, 1.0, 2, False, 0.5),
    ]


def test_nstep_must_be_positive() -> None:
    with pytest.raises(ConfigError, match=r"policy\.nstep must be an int >= 1, got 0"):
        nstep_samples([], 0, 0.9, True)


def test_double_dqn_target_by_hand() -> None:
    target = double_dqn_target(
        reward=torch.tensor([1.0, 1.0, 0.5]),
        discount=torch.tensor([0.25, 0.25, 0.5]),
        done=torch.tensor([0.0, 1.0, 0.0]),
        next_q_online=torch.tensor([[1.0, 2.0], [5.0, 0.0], [3.0, 1.0]]),  # picks actions 1, 0, 0
        next_q_target=torch.tensor([[8.0, 4.0], [9.0, 9.0], [2.0, 100.0]]),  # values them 4, (done), 2
    )
    torch.testing.assert_close(target, torch.tensor([1.0 + 0.25 * 4.0, 1.0, 0.5 + 0.5 * 2.0]))


def test_policy_targets_on_a_hand_made_episode() -> None:
    """Transitions through the policy's own processing: n-step sums, double-DQN choice, done mask."""
    online = {"scale.weight": torch.eye(2)}
    target = {"scale.weight": torch.tensor([[10.0, 0.0], [0.0, 20.0]])}
    policy = DQNPolicy(
        {"model": {"obs_shape": 2, "action_shape": 2}, "nstep": 2, "discount_factor": 0.5}, model=Identity(2)
    )
    policy.load_state_dict({"model": online, "target_model": target})
    obs = [np.array(o, dtype=np.float32) for o in ([0, 0], [1, 3], [2, 1], [5, 4])]
    rewards, ends = [1.0, 2.0, 4.0], [False, False, True]
    traj = []
    for t in range(3):
        ts = BaseEnvTimestep(obs[t + 1], np.array([rewards[t]], np.float32), ends[t], {}, terminated=ends[t])
        traj.append(policy.collect_mode.process_transition(obs[t], {"action": t % 2}, ts))
    samples = policy.collect_mode.get_train_sample(traj, True)
    data = policy._collate(samples)
    # sample 0: r = 1 + 0.5 * 2 = 2, next obs [2, 1] -> online picks action 0, target values it 10 * 2 = 20
    # sample 1: r = 2 + 0.5 * 4 = 4, terminated -> 4
    # sample 2: r = 4, terminated -> 4
    torch.testing.assert_close(policy.td_target(data), torch.tensor([2.0 + 0.25 * 20.0, 4.0, 4.0]))
    ignore = DQNPolicy(
        {
            "model": {"obs_shape": 2, "action_shape": 2},
            "nstep": 2,
            "discount_factor": 0.5,
            "learn": {"ignore_done": True},
        },
        model=Identity(2),
    )
    ignore.load_state_dict({"model": online, "target_model": target})
    # next obs [5, 4]: online picks action 0, target values it 50; discounts 0.25 and 0.5
    torch.testing.assert_close(ignore.td_target(data), torch.tensor([7.0, 4.0 + 0.25 * 50.0, 4.0 + 0.5 * 50.0]))


def test_a_reward_with_several_entries_is_rejected() -> None:
    policy = small_policy()
    ts = BaseEnvTimestep(np.zeros(4, np.float32), np.zeros(2, np.float32), False, {})
    with pytest.raises(ValueError, match=r"DQN needs a scalar reward per step, got shape \(2,\)"):
        policy.collect_mode.process_transition(np.zeros(4, np.float32), {"action": 0}, ts)


# ----- exploration --------------------------------------------------------------------------------
def test_exp_and_linear_epsilon_schedules() -> None:
    eps = epsilon_greedy(0.95, 0.1, 10000, "exp")
    assert eps(0) == pytest.approx(0.95)
    assert eps(10000) == pytest.approx(0.1 + 0.85 * math.exp(-1))
    assert eps(10**8) == pytest.approx(0.1)
    values = [eps(step) for step in range(0, 50000, 1000)]
    assert values == sorted(values, reverse=True)
    linear = epsilon_greedy(1.0, 0.0, 100, "linear")
    assert [linear(s) for s in (0, 25, 100, 1000)] == [1.0, 0.75, 0.0, 0.0]


def test_the_policy_reads_its_schedule_from_other_eps() -> None:
    policy = small_policy(other={"eps": {"type": "linear", "start": 0.5, "end": 0.1, "decay": 40}})
    assert [round(policy.collect_mode.collect_kwargs(s)["eps"], 6) for s in (0, 20, 40, 80)] == [0.5, 0.3, 0.1, 0.1]


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((1.5, 0.1, 100, "exp"), r"eps\.start must be a number in \[0, 1\], got 1\.5"),
        ((0.9, -0.1, 100, "exp"), r"eps\.end must be a number in \[0, 1\], got -0\.1"),
        ((0.9, 0.1, 0, "linear"), r"eps\.decay must be a finite number > 0 \(env steps\), got 0"),
        ((0.9, 0.1, 100, "step"), r"eps\.type must be one of 'exp', 'linear', got 'step'"),
    ],
)
def test_bad_epsilon_settings(args: tuple[Any, ...], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        epsilon_greedy(*args)


def test_epsilon_greedy_actions() -> None:
    policy = small_policy()
    obs = {i: np.full(4, i / 10, dtype=np.float32) for i in range(64)}
    greedy = policy.eval_mode.forward(obs)
    collected = policy.collect_mode.forward(obs, eps=0.0)
    assert all(collected[i]["action"] == greedy[i]["action"] == int(np.argmax(greedy[i]["logit"])) for i in obs)
    random_actions = [policy.collect_mode.forward(obs, eps=1.0)[i]["action"] for i in obs]
    assert set(random_actions) == {0, 1}
    with pytest.raises(ValueError, match=r"no observations to act on"):
        policy.eval_mode.forward({})


# ----- state ----------------------------------------------------------------------------------------
def test_state_dict_round_trip() -> None:
    torch.manual_seed(0)
    first = small_policy()
    first.learn_mode.forward(random_batch(16))
    torch.manual_seed(1)
    second = small_policy()
    second.learn_mode.load_state_dict(first.learn_mode.state_dict())
    obs = {0: np.ones(4, np.float32)}
    np.testing.assert_array_equal(first.eval_mode.forward(obs)[0]["logit"], second.eval_mode.forward(obs)[0]["logit"])
    assert second.learn_iter == 1
    with pytest.raises(ValueError, match=r"needs a 'model' entry"):
        second.eval_mode.load_state_dict({"weights": {}})


# ----- noisy networks ---------------------------------------------------------------------------
def noisy_policy(**sections: Any) -> DQNPolicy:
    model = {**SMALL["model"], "noise": True}
    return DQNPolicy({"model": model, "noisy_net": True, **sections}, seed=0)


def test_noisy_net_needs_both_keys() -> None:
    with pytest.raises(ConfigError, match=r"policy\.noisy_net is True but policy\.model\.noise is False"):
        small_policy(noisy_net=True)
    with pytest.raises(ConfigError, match=r"policy\.noisy_net is False but policy\.model\.noise is True"):
        DQNPolicy({"model": {**SMALL["model"], "noise": True}})


def test_noisy_net_acts_on_noise_when_collecting_and_on_the_means_when_evaluating() -> None:
    torch.manual_seed(0)
    policy = noisy_policy()
    obs = {i: np.random.default_rng(i).normal(size=4).astype(np.float32) for i in range(64)}
    evaluated = policy.eval_mode.forward(obs)
    collected = policy.collect_mode.forward(obs, eps=0.0)
    noisy_q = np.stack([out["logit"] for out in collected.values()])
    mean_q = np.stack([out["logit"] for out in evaluated.values()])
    assert not np.allclose(noisy_q, mean_q)
    policy.learn_mode.forward(random_batch(32))  # draws fresh noise
    again = np.stack([out["logit"] for out in policy.collect_mode.forward(obs, eps=0.0).values()])
    assert not np.allclose(again, noisy_q)
    twice = [np.stack([out["logit"] for out in policy.eval_mode.forward(obs).values()]) for _ in range(2)]
    np.testing.assert_array_equal(*twice)  # evaluation is deterministic


def test_noisy_net_learns_its_sigmas() -> None:
    policy = noisy_policy()
    before = {k: v.clone() for k, v in policy.state_dict()["model"].items() if "sigma" in k}
    for _ in range(5):
        policy.learn_mode.forward(random_batch(32))
    after = policy.state_dict()["model"]
    assert before and all(not torch.equal(before[k], after[k]) for k in before)


def test_noisy_dqn_with_an_eps_schedule_reaches_cartpole_stop_value(tmp_path: Any) -> None:
    from ding.entry import serial_pipeline

    main, create = read_config(CARTPOLE)
    main.policy.noisy_net = True
    main.policy.model.noise = True
    result = serial_pipeline((main, create), seed=0, max_env_step=40_000, root=tmp_path, progress=False)
    assert result.stop_value_reached, result.summary()
