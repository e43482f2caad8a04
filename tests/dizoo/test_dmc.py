"""dm_control envs: declared spaces equal the adapter's, conformance, frame skip, pixel layouts, replays, errors."""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

pytest.importorskip("dm_control")

from ding.envs.checks.env_checker import check_ding_env
from ding.errors import ConfigError
from dizoo.dmc.envs import DMCAdapter, DMCEnv, dmc_spaces
from dizoo.dmc.envs.dmc_adapter import DMC_STATE_SIZES
from tests.dizoo.episodes import play_episodes, video_frames_and_size

SMALL = {"height": 24, "width": 32}  # pixel tests render few, small frames: rendering runs in software


@pytest.mark.parametrize(("domain", "task"), [*DMC_STATE_SIZES, ("cartpole", "two_poles")])
def test_declared_state_spaces_are_the_tasks(domain: str, task: str) -> None:
    env = DMCAdapter(domain, task)
    try:
        assert dmc_spaces(domain, task) == (env.observation_space, env.action_space)
        obs, _ = env.reset(seed=0)
        assert obs.shape == env.observation_space.shape and obs.dtype == np.float64
    finally:
        env.close()


def test_state_observations_become_float32_in_the_first_step_of_the_chain() -> None:
    cfg = {"domain_name": "cheetah", "task_name": "run"}
    trace = DMCEnv.spec_trace(cfg)
    assert trace[0][1].observation == spaces.Box(-np.inf, np.inf, (17,), np.float64)  # dm_control's own values
    assert trace[1][0] == "flat_obs()" and trace[-1][1].observation == spaces.Box(-np.inf, np.inf, (17,), np.float32)
    env, adapter = DMCEnv(cfg), DMCAdapter("cheetah", "run")
    env.seed(0, dynamic_seed=False)  # every reset passes seed 0 to the simulator
    obs, (raw_first, _) = env.reset(), adapter.reset(seed=0)
    assert obs.dtype == np.float32 and np.array_equal(obs, raw_first.astype(np.float32))
    env.close()
    adapter.close()


@pytest.mark.parametrize("channels_first", [True, False])
def test_declared_pixel_spaces_are_the_frames(channels_first: bool) -> None:
    env = DMCAdapter("cheetah", "run", from_pixels=True, channels_first=channels_first, height=24, width=32)
    try:
        declared = dmc_spaces("cheetah", "run", True, channels_first=channels_first, height=24, width=32)
        assert declared == (env.observation_space, env.action_space)
        obs, _ = env.reset(seed=0)
        assert obs.shape == ((3, 24, 32) if channels_first else (24, 32, 3)) and obs.dtype == np.uint8
        assert env.observation_space.contains(obs) and obs.std() > 0  # a real picture, not a blank frame
    finally:
        env.close()


@pytest.mark.parametrize(
    "cfg",
    [
        {"domain_name": "cartpole", "task_name": "swingup"},
        {"domain_name": "cheetah", "task_name": "run", "frame_skip": 2},
        {"domain_name": "walker", "task_name": "walk", "act_scale": False},
    ],
    ids=["cartpole-swingup", "cheetah-run-skip2", "walker-walk-unscaled"],
)
def test_state_conformance(cfg: dict[str, Any]) -> None:
    check_ding_env(DMCEnv, {**cfg, "max_episode_steps": 5}, steps=12)


def test_pixel_conformance() -> None:
    cfg = {"from_pixels": True, "grayscale": True, "frame_stack": 3, "max_episode_steps": 3, **SMALL}
    check_ding_env(DMCEnv, cfg, steps=4)


def test_frame_skip_repeats_the_action_and_sums_rewards() -> None:
    one, three = DMCAdapter("cartpole", "swingup"), DMCAdapter("cartpole", "swingup", frame_skip=3)
    np.testing.assert_array_equal(one.reset(seed=5)[0], three.reset(seed=5)[0])
    for action in np.linspace(-1, 1, 4, dtype=np.float32)[:, None]:
        steps = [one.step(action) for _ in range(3)]
        obs, reward, _, _, _ = three.step(action)
        assert reward == pytest.approx(sum(step[1] for step in steps)) and reward > 0
        np.testing.assert_array_equal(obs, steps[-1][0])
    assert three.metadata["render_fps"] == round(one.metadata["render_fps"] / 3)
    one.close()
    three.close()


def test_episode_is_truncated_at_the_tasks_limit_with_the_return() -> None:
    env = DMCEnv({"domain_name": "cartpole", "task_name": "balance", "frame_skip": 8})
    env.seed(0)
    env.reset()
    rewards, steps = [], 0
    while True:
        ts = env.step(np.zeros(1, np.float32))
        rewards.append(float(ts.reward[0]))
        steps += 1
        if ts.done:
            break
    env.close()
    assert steps == 125 and ts.truncated and not ts.terminated  # 1000 control steps / 8
    assert float(ts.info["eval_episode_return"][0]) == pytest.approx(sum(rewards), rel=1e-5)
    assert 100 < sum(rewards) <= 1000  # balance from the upright start earns nearly 1 a control step


@pytest.mark.parametrize(
    ("options", "shape"),
    [
        ({"channels_first": True}, (3, 24, 32)),
        ({"channels_first": False}, (24, 32, 3)),
        ({"grayscale": True}, (1, 24, 32)),
        ({"grayscale": True, "channels_first": False}, (24, 32, 1)),
        ({"grayscale": True, "frame_stack": 2}, (2, 24, 32)),
        ({"frame_stack": 2}, (2, 3, 24, 32)),
    ],
)
def test_pixel_observations(options: dict[str, Any], shape: tuple[int, ...]) -> None:
    env = DMCEnv({"from_pixels": True, **SMALL, **options})
    assert env.observation_space == spaces.Box(0, 255, shape, np.uint8)  # frames stay uint8 up to the model
    env.seed(0)
    first = env.reset()
    obs = env.step(np.ones(1, np.float32)).obs
    assert obs.shape == shape and obs.dtype == np.uint8
    if not options.get("grayscale") and options.get("frame_stack", 1) == 1:
        frame = env.render()  # the camera's (H, W, 3) frame at this state
        expected = frame.transpose(2, 0, 1) if options["channels_first"] else frame
        np.testing.assert_array_equal(obs, expected)
    if options.get("frame_stack") == 2:
        np.testing.assert_array_equal(obs[0], first[-1])  # the previous frame moved one slot back
    env.close()


def test_replay_writes_an_mp4_of_each_episode(tmp_path: pathlib.Path) -> None:
    env = DMCEnv({"domain_name": "walker", "task_name": "walk", "max_episode_steps": 3, **SMALL})
    env.enable_save_replay(str(tmp_path))
    env.seed(0)
    play_episodes(env)
    env.close()
    (video,) = tmp_path.glob("*.mp4")
    assert video_frames_and_size(video) == (4, (32, 24))  # the reset frame and one per step


def test_bad_config_values_are_named() -> None:
    with pytest.raises(ConfigError, match=r"unknown dm_control domain 'chetah'.*Did you mean 'cheetah'"):
        DMCEnv.spaces_from_config({"domain_name": "chetah", "task_name": "run"})
    with pytest.raises(ConfigError, match=r"unknown dm_control task of domain 'walker' 'wlak'.*Did you mean 'walk'"):
        DMCAdapter("walker", "wlak")
    with pytest.raises(ConfigError, match=r"grayscale needs from_pixels=True"):
        DMCEnv.spaces_from_config({"grayscale": True})
    with pytest.raises(ConfigError, match=r"frame_stack must be an int in \[1, 256\], got 0"):
        DMCEnv.spaces_from_config({"frame_stack": 0})
    with pytest.raises(ConfigError, match=r"height must be an int in \[1, 480\] \(.*\), got -1"):
        DMCEnv.spaces_from_config({"from_pixels": True, "height": -1})
    with pytest.raises(ConfigError, match=r"frame_skip must be a positive int, got 1.5"):
        DMCAdapter("cartpole", "swingup", frame_skip=1.5)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"env_id 'cheetah-run'.*domain_name and task_name"):
        DMCEnv({"env_id": "cheetah-run"})
    env = DMCAdapter("cartpole", "swingup")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action of shape \(2,\) does not fit"):
        env.step(np.zeros(2))
    env.close()


def test_fork_workers_render_after_this_process_rendered() -> None:
    """Issue F7: Mesa's rasterizer threads do not survive a fork; headless GL keeps rendering on the caller."""
    from functools import partial

    from ding.envs.env_manager import create_env_manager

    cfg = {"domain_name": "cartpole", "task_name": "swingup", "from_pixels": True, "height": 48, "width": 48}
    parent = DMCEnv(cfg)
    parent.reset()  # renders here, before the workers are forked
    parent.close()
    manager = create_env_manager(
        {"type": "subprocess", "context": "fork", "reset_timeout": 30.0, "step_timeout": 30.0},
        [partial(DMCEnv, cfg=cfg) for _ in range(2)],
    )
    try:
        manager.launch()
        timesteps = manager.step({i: manager.action_space.sample() for i in range(2)})
        assert all(ts.obs.shape == (3, 48, 48) for ts in timesteps.values())
    finally:
        manager.close()
