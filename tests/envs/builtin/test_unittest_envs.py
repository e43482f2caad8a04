"""The unittest envs: declared spaces, the documented optimal returns and values, and a learner that reaches them."""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pytest
from easydict import EasyDict

from ding.entry import serial_pipeline
from ding.envs import env_class
from ding.envs.builtin.unittest_envs import (
    MixedPolicyUnittestEnv,
    PolicyUnittestEnv,
    RNNPolicyUnittestEnv,
    UnittestEnv,
    ValueUnittestEnv,
    optimal_value,
)
from ding.envs.checks.env_checker import check_ding_env
from ding.envs.env_manager import SyncSubprocessEnvManager
from ding.errors import ConfigError

Policy = Callable[[np.ndarray, int], Any]

CONFIGS = [
    ("value_unittest", {}),
    ("value_unittest", {"action_type": "continuous", "obs_dim": 3, "reward_dim": 2}),
    ("policy_unittest", {}),
    ("policy_unittest", {"action_type": "continuous", "obs_dim": 2}),
    ("rnn_policy_unittest", {"episode_length": 6, "gap": 2}),
    ("mixed_policy_unittest", {"episode_length": 4}),
]


def episode(env: UnittestEnv, policy: Policy) -> list[np.ndarray]:
    """One episode's rewards under ``policy(obs, t)``."""
    obs, rewards = env.reset(), []
    for t in range(1000):
        timestep = env.step(policy(obs, t))
        rewards.append(timestep.reward)
        obs = timestep.obs
        if timestep.done:
            assert timestep.terminated and t + 1 == env.episode_length
            np.testing.assert_allclose(timestep.info["eval_episode_return"], np.sum(rewards, axis=0))
            return rewards
    raise AssertionError("the episode did not end")


@pytest.mark.parametrize(("env_type", "cfg"), CONFIGS, ids=str)
def test_registered_envs_pass_the_conformance_checks(env_type: str, cfg: dict[str, Any]) -> None:
    cls = env_class({"type": env_type})
    assert cls.declares_spaces()
    check_ding_env(cls, cfg, steps=30)
    env = cls(cfg)
    declared = cls.spaces_from_config(cfg)
    assert declared.observation.shape == (cfg.get("obs_dim", 1),) and declared.reward.shape == (
        cfg.get("reward_dim", 1),
    )
    assert env.reset().dtype == np.float32


@pytest.mark.parametrize("gamma", [0.0, 0.5, 0.9, 1.0])
def test_value_env_returns_the_stated_value_from_every_state(gamma: float) -> None:
    env = ValueUnittestEnv({"episode_length": 7})
    env.seed(0)
    env.action_space.seed(0)
    observations, rewards = [env.reset()], []
    for _ in range(7):
        timestep = env.step(env.random_action())
        observations.append(timestep.obs)
        rewards.append(float(timestep.reward[0]))
    for t in range(7):
        discounted = sum(gamma**j * r for j, r in enumerate(rewards[t:]))
        assert discounted == pytest.approx(optimal_value(7 - t, gamma))
        assert observations[t][0] == pytest.approx((7 - t) / 7)  # the observation tells the steps left
    assert observations[-1][0] == 0.0


@pytest.mark.parametrize("action_type", ["discrete", "continuous"])
def test_policy_env_pays_the_matching_action(action_type: str) -> None:
    env = PolicyUnittestEnv({"episode_length": 9, "action_type": action_type})
    env.seed(3)
    as_action = (lambda x: int(x)) if action_type == "discrete" else (lambda x: np.float32([x]))
    assert np.sum(episode(env, lambda obs, t: as_action(obs[0]))) == 9.0
    assert np.sum(episode(env, lambda obs, t: as_action(1 - obs[0]))) == 0.0
    if action_type == "continuous":
        assert np.sum(episode(env, lambda obs, t: np.float32([0.5]))) == 4.5


def test_rnn_env_pays_only_a_policy_that_remembers_the_first_bit() -> None:
    env = RNNPolicyUnittestEnv({"episode_length": 8, "gap": 3})
    env.seed(5)
    remembered: list[int] = []

    def with_memory(obs: np.ndarray, t: int) -> int:
        if t == 0:
            remembered[:] = [int(obs[0])]
        return remembered[0]

    returns = [np.sum(episode(env, with_memory)) for _ in range(20)]
    assert returns == [5.0] * 20  # episode_length - gap
    memoryless = [np.sum(episode(env, lambda obs, t: int(obs[0] > 0.5))) for _ in range(200)]
    assert 0.35 * 5 < np.mean(memoryless) < 0.65 * 5  # after the first step it can only guess


def test_mixed_env_pays_a_consistent_pair() -> None:
    env = MixedPolicyUnittestEnv({"episode_length": 5})
    assert np.sum(episode(env, lambda obs, t: (t % 2, np.float32([0.2 + 0.6 * (t % 2)])))) == 5.0
    assert np.sum(episode(env, lambda obs, t: (1, np.float32([0.1])))) == 0.0


def test_bad_configs_and_actions_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"env\.episode_length must be a positive int, got 0"):
        ValueUnittestEnv({"episode_length": 0})
    with pytest.raises(ConfigError, match=r"env\.action_type must be one of 'discrete', 'continuous', got 'binary'"):
        PolicyUnittestEnv({"action_type": "binary"})
    with pytest.raises(ConfigError, match="gap must be below episode_length=3; got gap=3"):
        RNNPolicyUnittestEnv.spaces_from_config({"episode_length": 3, "gap": 3})
    with pytest.raises(ConfigError, match=r"the action is a \(discrete, continuous\) pair"):
        MixedPolicyUnittestEnv({"action_type": "continuous"})
    with pytest.raises(ConfigError, match=r"unknown config key 'env\.episode_len'"):
        ValueUnittestEnv({"episode_len": 3})
    env = PolicyUnittestEnv({})
    env.reset()
    with pytest.raises(ValueError, match=r"action 2 is outside Discrete\(2\)"):
        env.step(2)
    mixed = MixedPolicyUnittestEnv({})
    mixed.reset()
    with pytest.raises(ValueError, match=r"action must be a \(discrete, continuous\) pair; got 1"):
        mixed.step(1)


def test_optimal_actions_earn_one_per_step_through_a_subprocess_manager() -> None:
    fns = [partial(PolicyUnittestEnv, cfg={"episode_length": 6})] * 3
    with SyncSubprocessEnvManager(fns, {"shared_memory": True, "episode_num": 2}) as manager:
        manager.seed(0)
        manager.launch()
        total = 0.0
        while not manager.done:
            actions = {i: np.array([int(obs[0])]) for i, obs in manager.ready_obs.items()}
            for timestep in manager.step(actions).values():
                assert timestep.reward.tolist() == [1.0]
                total += float(timestep.reward[0])
    assert total == 3 * 2 * 6


def test_dqn_reaches_the_optimum_of_the_policy_env(tmp_path: pathlib.Path) -> None:
    main_config = {
        "exp_name": "policy_unittest_dqn",
        "env": {"collector_env_num": 4, "evaluator_env_num": 2, "n_evaluator_episode": 4, "stop_value": 8},
        "policy": {
            "cuda": False,
            "model": {"encoder_hidden_size_list": [32, 32]},
            "discount_factor": 0.9,
            "learn": {"update_per_collect": 4, "batch_size": 32, "learning_rate": 0.003},
            "collect": {"n_sample": 32},
            "eval": {"evaluator": {"eval_freq": 20}},
            "other": {"eps": {"type": "exp", "start": 0.9, "end": 0.05, "decay": 1000}},
        },
    }
    main_config["env"]["episode_length"] = 8  # the optimum: 8 per episode
    create_config = {"env": {"type": "policy_unittest"}, "env_manager": {"type": "base"}, "policy": {"type": "dqn"}}
    result = serial_pipeline(
        (EasyDict(main_config), EasyDict(create_config)), seed=0, max_env_step=5000, root=tmp_path, progress=False
    )
    assert result.stop_value_reached and result.best_eval_return == 8.0
