"""The synthetic benchmark env: declared spaces match real observations, and runs are deterministic."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import textwrap
import warnings
from functools import partial
from typing import Any

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from bench.envs import BANK_SIZE, OBS_KINDS, GymSyntheticEnv, SyntheticEnv
from ding.envs import ENV_REGISTRY
from ding.envs.env_manager import create_env_manager
from ding.errors import ConfigError

ACTIONS = [0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1]


def rollout(env: SyntheticEnv, actions: list[int]) -> list[np.ndarray]:
    """Observations of a reset followed by ``actions`` (resetting at each episode end)."""
    observations = [env.reset()]
    for action in actions:
        timestep = env.step(action)
        observations.append(timestep.obs)
        if timestep.done:
            observations.append(env.reset())
    return observations


def test_registered_as_synthetic() -> None:
    assert ENV_REGISTRY.get("synthetic") is SyntheticEnv


@pytest.mark.parametrize("kind", OBS_KINDS)
def test_declared_spaces_match_the_instance_and_every_observation(kind: str) -> None:
    cfg = {"obs_kind": kind, "episode_len": 5}
    declared = SyntheticEnv.spaces_from_config(cfg)
    env = SyntheticEnv(cfg)
    assert (env.observation_space, env.action_space, env.reward_space) == tuple(declared)
    assert declared.shapes == ((4,) if kind == "vector4" else (4, 84, 84), 2, (1,))
    raw = SyntheticEnv.raw_spaces(env._cfg).observation
    assert raw.dtype == (np.float32 if kind == "vector4" else np.uint8)
    env.seed(1)
    for obs in rollout(env, ACTIONS):
        assert obs.dtype == raw.dtype
        assert declared.observation.contains(obs)
    timestep = env.step(1)
    assert declared.reward.contains(timestep.reward)


def test_episode_ends_truncated_at_episode_len() -> None:
    env = SyntheticEnv({"episode_len": 3})
    env.reset()
    steps = [env.step(0) for _ in range(3)]
    assert [ts.done for ts in steps] == [False, False, True]
    assert (steps[-1].terminated, steps[-1].truncated) == (False, True)
    with pytest.raises(RuntimeError, match="episode_len=3"):
        env.step(0)


def test_step_before_reset_and_bad_action_are_rejected() -> None:
    env = SyntheticEnv({})
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(0)
    env.reset()
    with pytest.raises(ValueError, match="got 2"):
        env.step(2)


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        ({"obs_kind": "rgb"}, "obs_kind must be one of .* got 'rgb'"),
        ({"step_cost_us": -1}, "step_cost_us must be an int >= 0, got -1"),
        ({"episode_len": 0}, "episode_len must be an int >= 1, got 0"),
        ({"hang_at_step": 0}, "hang_at_step must be an int >= 1, got 0"),
    ],
)
def test_config_errors_name_the_value(cfg: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        SyntheticEnv(cfg)
    with pytest.raises(ConfigError, match=message):
        SyntheticEnv.spaces_from_config(cfg)


@pytest.mark.parametrize("kind", OBS_KINDS)
def test_same_seed_same_observations(kind: str) -> None:
    cfg = {"obs_kind": kind, "episode_len": 4, "step_cost_us": 5, "reset_cost_us": 5}
    first, second = SyntheticEnv(cfg), SyntheticEnv(cfg)
    first.seed(7)
    second.seed(7)
    for a, b in zip(rollout(first, ACTIONS), rollout(second, ACTIONS), strict=True):
        np.testing.assert_array_equal(a, b)


def test_seed_and_actions_change_the_observations() -> None:
    env = SyntheticEnv({})
    env.seed(0, dynamic_seed=False)
    base = rollout(env, [0, 0])
    env.seed(1, dynamic_seed=False)
    assert not np.array_equal(base[0], env.reset())
    env.seed(0, dynamic_seed=False)
    other = rollout(env, [1, 0])
    np.testing.assert_array_equal(base[0], other[0])
    assert not np.array_equal(base[1], other[1])
    assert len({obs.tobytes() for obs in rollout(env, [0] * BANK_SIZE)}) > 1


def test_observations_are_fresh_arrays() -> None:
    env = SyntheticEnv({})
    obs = env.reset()
    obs[:] = 99.0
    env.seed(0, dynamic_seed=False)
    assert not np.any(env.reset() == 99.0)


@pytest.mark.parametrize("kind", OBS_KINDS)
def test_gymnasium_face_passes_the_env_checker_and_matches_the_ding_face(kind: str) -> None:
    cfg = {"obs_kind": kind, "episode_len": 5}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the checker warns that an env made without gym.make has no spec
        check_env(GymSyntheticEnv(cfg))
    gym_env = GymSyntheticEnv(cfg)
    assert gym_env.observation_space == SyntheticEnv.spaces_from_config(cfg).observation
    ding_env = SyntheticEnv(cfg)
    ding_env.seed(11, dynamic_seed=False)
    gym_obs, _ = gym_env.reset(seed=11)
    np.testing.assert_array_equal(gym_obs, ding_env.reset())
    for action in ACTIONS[:4]:
        obs, reward, terminated, truncated, _ = gym_env.step(action)
        timestep = ding_env.step(action)
        np.testing.assert_array_equal(obs, timestep.obs)
        assert (reward, terminated, truncated) == (1.0, False, timestep.truncated)
    with pytest.raises(ConfigError, match="unknown keys \\['cost'\\]"):
        GymSyntheticEnv({"cost": 1})


def test_subprocess_manager_reproduces_the_in_process_run() -> None:
    fns = [partial(SyntheticEnv, cfg={"obs_kind": "image", "episode_len": 3}) for _ in range(2)]
    runs = []
    for cfg in ({"type": "base"}, {"type": "subprocess", "envs_per_worker": 2}):
        manager = create_env_manager(cfg, fns)
        with manager:
            assert manager.observation_space == SyntheticEnv.spaces_from_config({"obs_kind": "image"}).observation
            manager.seed(3)
            manager.launch()
            seen = [manager.ready_obs[0].copy()]
            for action in ACTIONS[:7]:
                timesteps = manager.step({0: action, 1: 1 - action})
                seen += [timesteps[0].obs.copy(), manager.ready_obs[1].copy()]
        runs.append(seen)
    for a, b in zip(*runs, strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_peers_child_steps_the_same_synthetic_env_without_ding() -> None:
    """The files a peer's venv imports (no ding there) stand alone and give the ding face's observations."""
    bench = pathlib.Path(__file__).resolve().parents[2] / "bench"
    ding_env = SyntheticEnv({"obs_kind": "vector4", "episode_len": 5})
    ding_env.seed(11, dynamic_seed=False)
    expected = [ding_env.reset(), *(ding_env.step(action).obs for action in ACTIONS[:4])]
    script = textwrap.dedent(
        f"""
        import json, sys
        sys.path.insert(0, {str(bench)!r})
        import peer_pools
        env = peer_pools.gym_env_fn({{"synthetic": {{"obs_kind": "vector4", "episode_len": 5}}}})()
        seen = [env.reset(seed=11)[0].tolist(), *(env.step(a)[0].tolist() for a in {ACTIONS[:4]!r})]
        assert not [name for name in sys.modules if name == "ding" or name.startswith(("ding.", "bench"))]
        print(json.dumps(seen))
        """
    )
    done = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True, cwd="/", timeout=60)
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(np.array(json.loads(done.stdout), np.float32), np.array(expected))
