"""MuJoCo v5 envs: the declared spaces are gymnasium's, conformance, normalization options, replays, GL backend."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

pytest.importorskip("mujoco")
pytest.importorskip("imageio")  # gymnasium's MuJoCo envs import it

import gymnasium as gym

from ding.config import compile_config
from ding.envs.checks.env_checker import check_ding_env
from ding.errors import ActionError, ConfigError
from dizoo.mujoco.envs import MUJOCO_ENVS, MujocoEnv, mujoco_raw_spaces
from dizoo.mujoco.gl import use_headless_gl
from tests.dizoo.episodes import play_episodes, video_frames_and_size

EXCLUDE = "exclude_current_positions_from_observation"
CFRC = "include_cfrc_ext_in_observation"
EPSILON = 1e-4  # the normalization wrappers' default: std = sqrt(var) + epsilon (DI-engine's)
OPTIONS = [
    (env_id, kwargs)
    for env_id in MUJOCO_ENVS
    for kwargs in (
        {},
        {EXCLUDE: False},
        *(({CFRC: False}, {CFRC: False, EXCLUDE: False}) if env_id == "Ant-v5" else ()),
    )
]


@pytest.mark.parametrize(("env_id", "kwargs"), OPTIONS, ids=[f"{e}-{sorted(k.items())}" for e, k in OPTIONS])
def test_declared_spaces_are_gymnasiums(env_id: str, kwargs: dict[str, Any]) -> None:
    real = gym.make(env_id, **kwargs)
    try:
        declared = mujoco_raw_spaces(env_id, kwargs)
        assert declared.observation == real.observation_space
        assert declared.action == real.action_space
    finally:
        real.close()


@pytest.mark.parametrize("env_id", list(MUJOCO_ENVS))
def test_conformance(env_id: str) -> None:
    check_ding_env(MujocoEnv, {"env_id": env_id, "max_episode_steps": 5}, steps=12)


def test_conformance_with_options() -> None:
    cfg = {"env_id": "Ant-v5", "max_episode_steps": 4, "env_kwargs": {CFRC: False, EXCLUDE: False}}
    check_ding_env(MujocoEnv, cfg, steps=10)
    assert MujocoEnv(cfg).observation_space.shape == (29,)


def _play(cfg: dict[str, Any], steps: int) -> tuple[list[np.ndarray], list[float], list[dict[str, Any]]]:
    """Observations (reset first), rewards and infos of ``steps`` fixed actions from seed 0."""
    env = MujocoEnv(cfg)
    env.seed(0, dynamic_seed=False)
    actions = np.random.default_rng(1).uniform(-1, 1, (steps, *(env.action_space.shape or ()))).astype(np.float32)
    observations, rewards, infos = [env.reset()], [], []
    for action in actions:
        ts = env.step(action)
        observations.append(ts.obs)
        rewards.append(float(ts.reward[0]))
        infos.append(ts.info)
    env.close()
    return observations, rewards, infos


def test_norm_obs_uses_running_mean_and_std_after_warmup() -> None:
    base = {"env_id": "HalfCheetah-v5", "max_episode_steps": 100}
    raw, _, _ = _play(base, 12)
    normed, _, _ = _play({**base, "norm_obs": {"use_norm": True, "warmup": 4, "clip_range": [-2.0, 2.0]}}, 12)
    history = np.asarray(raw, np.float64)
    for i, obs in enumerate(normed):
        assert obs.dtype == np.float32
        if i < 4:  # warm-up: passed through, only clipped
            expected = np.clip(history[i], -2.0, 2.0)
        else:
            seen = history[: i + 1]
            expected = np.clip((history[i] - seen.mean(0)) / (np.sqrt(seen.var(0)) + EPSILON), -2.0, 2.0)
        np.testing.assert_allclose(obs, expected, rtol=1e-4, atol=1e-4, err_msg=f"observation {i}")
    assert np.abs(np.asarray(normed[4:])).max() > 0.5  # not all squashed to zero
    declared = MujocoEnv.spaces_from_config({**base, "norm_obs": {"use_norm": True}}).observation
    assert isinstance(declared, gym.spaces.Box) and declared.high.max() == 5.0


def test_norm_reward_divides_by_return_std_while_training_only() -> None:
    base = {"env_id": "HalfCheetah-v5", "max_episode_steps": 10}
    _, raw, raw_infos = _play(base, 10)
    norm = {"use_norm": True, "warmup": 3, "reward_discount": 0.9}
    _, normed, infos = _play({**base, "norm_reward": norm}, 10)
    returns = np.zeros(len(raw))
    for t, r in enumerate(raw):
        returns[t] = r + (0.9 * returns[t - 1] if t else 0.0)
    for t, (r, n) in enumerate(zip(raw, normed, strict=True)):
        expected = r if t < 3 else r / (np.sqrt(returns[: t + 1].var()) + EPSILON)
        assert n == pytest.approx(expected, rel=1e-4, abs=1e-5), f"reward {t}"
    assert normed[5] != pytest.approx(raw[5], rel=1e-3)
    # the episode's return is the env's own, and evaluation envs get unnormalized rewards
    ret = float(infos[-1]["eval_episode_return"][0])
    assert ret == pytest.approx(sum(raw), rel=1e-5)
    assert ret == pytest.approx(float(raw_infos[-1]["eval_episode_return"][0]))
    _, eval_rewards, _ = _play({**base, "norm_reward": norm, "is_train": False}, 10)
    assert eval_rewards == pytest.approx(raw)


def test_replay_writes_an_mp4_of_each_episode(tmp_path: pathlib.Path) -> None:
    env = MujocoEnv({"env_id": "Hopper-v5", "max_episode_steps": 3, "env_kwargs": {"width": 48, "height": 32}})
    env.enable_save_replay(str(tmp_path))
    env.seed(0)
    play_episodes(env)
    env.close()
    (video,) = tmp_path.glob("*.mp4")
    assert video_frames_and_size(video) == (4, (48, 32))  # the reset frame and one per step


def test_bad_config_values_are_named() -> None:
    with pytest.raises(ConfigError, match=r"env_id 'Hopper-v4' is not a version of Hopper .* set env_id='Hopper-v5'"):
        MujocoEnv.spaces_from_config({"env_id": "Hopper-v4"})
    with pytest.raises(ConfigError, match=r"unknown env_id 'Hoper-v5'; known: Ant-v5, .*Did you mean 'Hopper-v5'"):
        MujocoEnv.spaces_from_config({"env_id": "Hoper-v5"})
    with pytest.raises(ConfigError, match=r"'use_contact_forces'.*call it 'include_cfrc_ext_in_observation'"):
        MujocoEnv.spaces_from_config({"env_id": "Ant-v5", "env_kwargs": {"use_contact_forces": True}})
    with pytest.raises(ConfigError, match=r"'include_cfrc_ext_in_observation' is not accepted for Hopper-v5"):
        MujocoEnv.spaces_from_config({"env_id": "Hopper-v5", "env_kwargs": {CFRC: False}})
    with pytest.raises(
        ConfigError, match=r"config key 'env.norm_obs' must be a dict \(of clip_range, use_norm, warmup\)"
    ):
        MujocoEnv.spaces_from_config({"norm_obs": True})
    with pytest.raises(ConfigError, match=r"max_episode_steps must be a positive int or None \(.*\), got 0"):
        MujocoEnv({"max_episode_steps": 0})
    main = {"env": {"env_id": "Walker2d-v5", "norm_obs": {"use_nrom": True}}, "policy": {}}
    with pytest.raises(ConfigError, match=r"env.norm_obs.use_nrom.*Did you mean 'use_norm'"):
        compile_config(main, {"env": {"type": "mujoco", "import_names": ["dizoo.mujoco.envs"]}}, require_policy=False)


def test_gl_backend_is_set_when_unset_and_kept_when_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MUJOCO_GL", "osmesa")
    assert use_headless_gl() == "osmesa" and os.environ["MUJOCO_GL"] == "osmesa"
    monkeypatch.delenv("MUJOCO_GL")
    monkeypatch.delenv("PYOPENGL_PLATFORM", raising=False)
    chosen = use_headless_gl()
    assert chosen in ("egl", "osmesa") and os.environ["MUJOCO_GL"] == os.environ["PYOPENGL_PLATFORM"] == chosen


def test_software_rendering_stays_on_the_calling_thread_unless_the_user_says_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LP_NUM_THREADS", raising=False)
    use_headless_gl()
    assert os.environ["LP_NUM_THREADS"] == "0", "llvmpipe's own threads would not survive a fork"
    monkeypatch.setenv("LP_NUM_THREADS", "2")
    use_headless_gl()
    assert os.environ["LP_NUM_THREADS"] == "2"


def test_env_module_renders_headless_without_mujoco_gl(tmp_path: pathlib.Path) -> None:
    script = (
        "import os\n"
        "from dizoo.mujoco.envs import MujocoEnv\n"
        "env = MujocoEnv({'env_id': 'HalfCheetah-v5', 'env_kwargs': {'width': 16, 'height': 16}})\n"
        "env.enable_save_replay('.')\n"
        "env.reset()\n"
        "print(os.environ['MUJOCO_GL'], env.render().shape)\n"
    )
    env = {key: value for key, value in os.environ.items() if key not in ("MUJOCO_GL", "PYOPENGL_PLATFORM")}
    env["PYTHONPATH"] = os.pathsep.join([str(pathlib.Path(__file__).resolve().parents[2]), *sys.path])
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.split("\n")[-2] in ("egl (16, 16, 3)", "osmesa (16, 16, 3)")
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()  # MuJoCo's warnings go to logging, not to the cwd


# ----- DI-engine's keys, MujocoDiscEnv and the truncated-observation ids ----------------------------------------
def test_delay_reward_step_releases_summed_rewards_every_k_steps_and_at_the_end() -> None:
    base = {"env_id": "Hopper-v5", "max_episode_steps": 10}
    _, raw, _ = _play(base, 10)
    _, delayed, infos = _play({**base, "delay_reward_step": 4}, 10)
    for t, reward in enumerate(delayed):
        if t in (3, 7):
            assert reward == pytest.approx(sum(raw[t - 3 : t + 1]), rel=1e-5)
        elif t == 9:  # the episode ends: what is held is released
            assert reward == pytest.approx(sum(raw[8:10]), rel=1e-5)
        else:
            assert reward == 0.0
    assert float(infos[-1]["eval_episode_return"][0]) == pytest.approx(sum(raw), rel=1e-5)
    assert [name for name, _ in MujocoEnv.spec_trace({**base, "delay_reward_step": 4})][1:4] == [
        "flat_obs()",
        "eval_episode_return()",
        "delay_reward(delay_reward_step=4)",
    ]
    with pytest.raises(ConfigError, match=r"delay_reward_step must be an int in \[0, 10000\] .* got -1"):
        MujocoEnv.spaces_from_config({"delay_reward_step": -1})


def test_action_clip_clips_what_reaches_the_simulator() -> None:
    env = MujocoEnv({"env_id": "Hopper-v5", "act_scale": False, "action_clip": True})
    env.seed(0)
    env.reset()
    env.step(np.full(3, 5.0, np.float32))
    np.testing.assert_array_equal(env.env.unwrapped.data.ctrl, [1.0] * 3)
    env.close()


def test_without_action_clip_an_action_outside_the_bounds_is_refused() -> None:
    env = MujocoEnv({"env_id": "Hopper-v5", "act_scale": False})
    env.seed(0)
    env.reset()
    with pytest.raises(ActionError, match=r"outside the bounds of Box\(-1\.0, 1\.0, \(3,\), float32\)"):
        env.step(np.full(3, 5.0, np.float32))
    np.testing.assert_array_equal(env.env.unwrapped.data.ctrl, [0.0] * 3)  # nothing reached the simulator
    env.close()


def test_action_bins_per_branch_makes_each_dimension_a_choice_of_values() -> None:
    cfg = {"env_id": "Hopper-v5", "action_bins_per_branch": 5}
    env = MujocoEnv(cfg)
    assert env.action_space == MujocoEnv.spaces_from_config(cfg).action == gym.spaces.MultiDiscrete([5, 5, 5])
    env.seed(0)
    env.reset()
    env.step(np.array([0, 2, 4]))
    np.testing.assert_allclose(env.env.unwrapped.data.ctrl, [-1.0, 0.0, 1.0])
    env.close()
    with pytest.raises(ConfigError, match="action_clip=True with action_bins_per_branch"):
        MujocoEnv.spaces_from_config({**cfg, "action_clip": True})


def test_save_replay_gif_writes_a_gif_of_each_episode(tmp_path: pathlib.Path) -> None:
    iio = pytest.importorskip("imageio.v3")
    cfg = {
        "env_id": "Hopper-v5",
        "max_episode_steps": 3,
        "env_kwargs": {"width": 24, "height": 16},
        "save_replay_gif": True,
        "replay_path_gif": str(tmp_path),
    }
    env = MujocoEnv(cfg)
    env.seed(0)
    play_episodes(env)
    env.close()
    (gif,) = tmp_path.glob("*.gif")
    assert gif.name == "Hopper-v5_episode_0.gif"
    assert iio.imread(gif, index=None).shape[1:] == (16, 24, 3)


def test_mujoco_disc_env_acts_on_a_grid_of_the_action_box() -> None:
    from ding.envs import ENV_REGISTRY
    from dizoo.mujoco.envs import MujocoDiscEnv

    assert ENV_REGISTRY.get("mujoco-disc") is MujocoDiscEnv
    cfg = {"env_id": "Hopper-v5", "each_dim_disc_size": 3, "delay_reward_step": 2}
    env = MujocoDiscEnv(cfg)
    assert env.action_space == MujocoDiscEnv.spaces_from_config(cfg).action == gym.spaces.Discrete(27)
    assert env._raw_action_space == gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
    env.seed(0)
    env.reset()
    for index, ctrl in [(0, [-1, -1, -1]), (5, [-1, 0, 1]), (26, [1, 1, 1])]:
        env.step(np.array([index]))
        np.testing.assert_allclose(env.env.unwrapped.data.ctrl, ctrl)
    env.close()
    check_ding_env(MujocoDiscEnv, {**cfg, "max_episode_steps": 5}, steps=12)


@pytest.mark.parametrize(
    ("cfg", "match"),
    [
        ({}, "each_dim_disc_size is required"),
        ({"each_dim_disc_size": 1}, "each_dim_disc_size must be an int >= 2 or None"),
        ({"each_dim_disc_size": 3, "act_scale": True}, "act_scale=True concerns continuous actions"),
        ({"each_dim_disc_size": 3, "action_clip": True}, "action_clip=True concerns continuous actions"),
        ({"each_dim_disc_size": 3, "action_bins_per_branch": 3}, "action_bins_per_branch is the 'mujoco' env's"),
    ],
)
def test_mujoco_disc_env_rejects_what_does_not_apply(cfg: dict[str, Any], match: str) -> None:
    from dizoo.mujoco.envs import MujocoDiscEnv

    with pytest.raises(ConfigError, match=match):
        MujocoDiscEnv({"env_id": "Hopper-v5", **cfg})


def test_truncated_observation_ids_are_registered_on_v5_envs() -> None:
    from dizoo.mujoco.envs import mujoco_gym_env

    for env_id, (obs, act) in {"AntTruncatedObs-v2": (27, 8), "HumanoidTruncatedObs-v2": (45, 17)}.items():
        assert env_id in mujoco_gym_env.TRUNCATED_OBS_ENVS
        env = gym.make(env_id)
        assert env.observation_space.shape == (obs,) and env.action_space.shape == (act,)
        first, _ = env.reset(seed=0)
        full = gym.make(env_id.replace("TruncatedObs-v2", "-v5"))
        reference, _ = full.reset(seed=0)
        np.testing.assert_array_equal(first, reference[:obs])  # positions and velocities come first in both
        env.close()
        full.close()
