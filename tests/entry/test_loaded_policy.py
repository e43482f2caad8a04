"""``load_policy``: DQN, PPO and SAC trained briefly by the real pipelines, loaded, acting on real env observations
exactly as their eval modes do."""

from __future__ import annotations

import copy
import pathlib
import re
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from ding.config import read_config
from ding.entry import LoadedPolicy, load_policy, serial_pipeline, serial_pipeline_onpolicy
from ding.entry.utils import compile_for_run, create_policy
from ding.envs.from_config import env_class
from ding.errors import ConfigError
from ding.worker import CheckpointError, load_checkpoint
from tests.entry.test_cli import ROOT

CONFIGS = ROOT / "dizoo/classic_control"
RUNS: dict[str, tuple[pathlib.Path, Any, dict[str, Any], int]] = {
    # name: (config file, pipeline, main_config changes, train iterations)
    "dqn": (CONFIGS / "cartpole/config/cartpole_dqn_config.py", serial_pipeline, {}, 20),
    "ppo": (CONFIGS / "cartpole/config/cartpole_ppo_config.py", serial_pipeline_onpolicy, {}, 8),
    "sac": (CONFIGS / "pendulum/config/pendulum_sac_config.py", serial_pipeline, {"random_collect_size": 64}, 10),
}
GYM_IDS = {"dqn": "CartPole-v1", "ppo": "CartPole-v1", "sac": "Pendulum-v1"}


@pytest.fixture(scope="module", params=sorted(RUNS))
def trained(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, pathlib.Path]:
    """A short real training run; returns the algorithm and its experiment directory."""
    name = request.param
    config, pipeline, policy_changes, train_iter = RUNS[name]
    main_config, create_config = read_config(config)
    main_config = copy.deepcopy(dict(main_config))
    main_config["env"].update(collector_env_num=2, evaluator_env_num=2, n_evaluator_episode=2)
    main_config["policy"].update(policy_changes)
    root = tmp_path_factory.mktemp(name)
    result = pipeline((main_config, create_config), max_train_iter=train_iter, root=root, progress=False)
    return name, result.exp_dir


def eval_mode_actions(exp_dir: pathlib.Path, ckpt: pathlib.Path, observations: list[np.ndarray]) -> list[Any]:
    """What the policy's eval mode gives, built the long way from the run's config and checkpoint."""
    cfg, _ = compile_for_run(*read_config(exp_dir / "total_config.py"), None, None)
    policy = create_policy(cfg, cfg.seed)
    policy.eval_mode.load_state_dict(load_checkpoint(ckpt))
    return [policy.eval_mode.forward({0: obs})[0]["action"] for obs in observations]


def env_observations(policy: LoadedPolicy, steps: int = 12) -> list[np.ndarray]:
    """Observations of the run's own (evaluator) env, stepped with the loaded policy's actions."""
    cfg = policy.cfg.env
    env = env_class(cfg)(cfg=env_class(cfg).create_evaluator_env_cfg(cfg)[0])
    env.seed(5)
    observations = [env.reset()]
    for _ in range(steps):
        action = policy.act(observations[-1])
        assert policy.action_space.contains(action), f"{action!r} is not in {policy.action_space}"
        timestep = env.step(action)
        observations.append(env.reset() if timestep.done else timestep.obs)
    env.close()
    return observations


def test_load_and_act_as_the_eval_mode_does(trained: tuple[str, pathlib.Path]) -> None:
    name, exp_dir = trained
    policy = load_policy(exp_dir)
    assert policy.checkpoint == exp_dir / "ckpt" / "ckpt_best.pth.tar" and policy.cfg.policy.type == name
    observations = env_observations(policy)
    expected = eval_mode_actions(exp_dir, policy.checkpoint, observations)
    actions = [policy.act(obs) for obs in observations]
    assert all(isinstance(a, np.ndarray) for a in actions)
    assert all(np.array_equal(a, np.asarray(e)) for a, e in zip(actions, expected, strict=True))
    batch = policy.act_batch(np.stack(observations))
    assert batch.shape == (len(observations), *np.shape(actions[0])) and batch.dtype == actions[0].dtype
    np.testing.assert_allclose(batch, np.stack(actions), rtol=1e-5, atol=1e-6)  # a batch rounds floats its own way
    assert np.array_equal(policy.predict(np.stack(observations))[0], batch)
    single, state = policy.predict(observations[0])
    assert state is None and np.array_equal(single, actions[0])
    # the plain gymnasium env's observations (float32, and as Python lists) work as well
    obs, _ = gym.make(GYM_IDS[name]).reset(seed=0)
    assert np.array_equal(policy.act(obs), policy.act(obs.tolist()))
    assert policy.action_space.contains(policy.act(obs))
    for _ in range(5):  # sampled actions are valid too
        assert policy.action_space.contains(policy.act(obs, deterministic=False).astype(policy.action_space.dtype))


def test_a_checkpoint_path_finds_its_experiment_directory(trained: tuple[str, pathlib.Path]) -> None:
    _, exp_dir = trained
    ckpt = max((exp_dir / "ckpt").glob("iteration_*.pth.tar"))
    policy = load_policy(ckpt)
    observations = env_observations(policy, steps=4)
    expected = eval_mode_actions(exp_dir, ckpt, observations)
    assert all(np.array_equal(policy.act(o), np.asarray(e)) for o, e in zip(observations, expected, strict=True))
    assert policy.env_step == load_checkpoint(ckpt)["last_step"] > 0


def test_errors_name_the_problem(trained: tuple[str, pathlib.Path], tmp_path: pathlib.Path) -> None:
    _, exp_dir = trained
    with pytest.raises(CheckpointError, match=r"does not exist: give an experiment directory or a checkpoint file"):
        load_policy(tmp_path / "missing")
    with pytest.raises(CheckpointError, match=r"has no checkpoint ckpt/ckpt_best\.pth\.tar"):
        load_policy(tmp_path)
    lone = tmp_path / "a" / "b" / "best.pth.tar"
    lone.parent.mkdir(parents=True)
    lone.write_bytes((exp_dir / "ckpt" / "ckpt_best.pth.tar").read_bytes())
    with pytest.raises(ConfigError, match=r"no config .*total_config\.py for checkpoint .*pass config=PATH"):
        load_policy(lone)
    policy = load_policy(lone, config=exp_dir / "total_config.py")
    shape = policy.observation_space.shape
    assert shape is not None
    with pytest.raises(
        ValueError, match=re.escape(f"obs has shape (7,); the policy's observations have shape {shape}")
    ):
        policy.act(np.zeros(7, np.float32))
    with pytest.raises(ValueError, match=r"obs_batch\[1\] has shape \(2,\)"):
        policy.act_batch([np.zeros(shape, np.float32), np.zeros(2, np.float32)])
    with pytest.raises(TypeError, match=r"dtype complex128, which does not cast safely to .* float32"):
        policy.act(np.zeros(shape, np.complex128))
    with pytest.raises(ValueError, match="obs_batch is empty"):
        policy.act_batch([])
