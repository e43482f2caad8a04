"""Box2D envs: declarations equal gymnasium's spaces, ding's conformance checks pass, replays are written."""

from __future__ import annotations

import pathlib
from typing import Any

import cv2
import gymnasium as gym
import numpy as np
import pytest

from ding.envs.conversion import ClippedBox

pytest.importorskip("Box2D")

from ding.envs import DingEnvWrapper
from ding.envs.checks.env_checker import check_ding_env
from ding.errors import ConfigError
from dizoo.box2d.bipedalwalker.envs import BipedalWalkerEnv
from dizoo.box2d.lunarlander.envs import LunarLanderEnv
from tests.dizoo.episodes import play_episodes

CASES = [
    (LunarLanderEnv, {}, "LunarLander-v3", {}),
    (LunarLanderEnv, {"continuous": True}, "LunarLander-v3", {"continuous": True}),
    (BipedalWalkerEnv, {}, "BipedalWalker-v3", {}),
    (BipedalWalkerEnv, {"hardcore": True}, "BipedalWalkerHardcore-v3", {}),
]
IDS = ["lunarlander", "lunarlander_continuous", "bipedalwalker", "bipedalwalker_hardcore"]


@pytest.mark.parametrize(("env_cls", "cfg", "env_id", "kwargs"), CASES, ids=IDS)
def test_declaration_is_gymnasiums(
    env_cls: type[DingEnvWrapper], cfg: dict[str, Any], env_id: str, kwargs: dict[str, Any]
) -> None:
    real = gym.make(env_id, **kwargs)
    declared = env_cls.raw_spaces({**env_cls.default_config(), **cfg})
    assert declared.observation == real.observation_space and declared.action == real.action_space
    assert declared.observation.dtype == np.float32
    real.close()


@pytest.mark.parametrize(("env_cls", "cfg", "env_id", "kwargs"), CASES, ids=IDS)
def test_conformance(env_cls: type[DingEnvWrapper], cfg: dict[str, Any], env_id: str, kwargs: dict[str, Any]) -> None:
    check_ding_env(env_cls, {**cfg, "max_episode_steps": 12}, steps=30)


@pytest.mark.parametrize(("hardcore", "steps"), [(False, 1600), (True, 2000)])
def test_bipedalwalker_episode_length_follows_the_terrain(hardcore: bool, steps: int) -> None:
    env = BipedalWalkerEnv({"hardcore": hardcore})
    assert env.env.get_wrapper_attr("_max_episode_steps") == steps
    assert env.env.unwrapped.hardcore is hardcore
    env.close()


def test_lunarlander_simulator_options_reach_the_simulator() -> None:
    env = LunarLanderEnv({"continuous": True, "gravity": -5.0, "enable_wind": True, "wind_power": 10.0})
    inner = env.env.unwrapped
    assert (inner.continuous, inner.gravity, inner.enable_wind, inner.wind_power) == (True, -5.0, True, 10.0)
    env.close()


@pytest.mark.parametrize(
    ("env_cls", "cfg", "match"),
    [
        (LunarLanderEnv, {"continuous": 1}, r"continuous must be a bool or None \(.*\), got 1"),
        (BipedalWalkerEnv, {"hardcore": "no"}, r"hardcore must be a bool or None \(.*\), got 'no'"),
    ],
)
def test_flags_must_be_bools(env_cls: type[DingEnvWrapper], cfg: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        env_cls.spaces_from_config(cfg)


def test_lunarlander_landing_without_engines_crashes_and_reports_the_return() -> None:
    env = LunarLanderEnv({})
    env.seed(3)
    env.reset()
    total = 0.0
    while True:
        ts = env.step(0)  # engines off: the lander falls and crashes (or comes to rest)
        total += float(ts.reward[0])
        if ts.done:
            break
    assert ts.terminated and not ts.truncated
    assert float(ts.info["eval_episode_return"][0]) == pytest.approx(total, rel=1e-5)
    assert ts.obs.dtype == np.float32
    env.close()


def test_lunarlander_replay_is_written(tmp_path: pathlib.Path) -> None:
    env = LunarLanderEnv({"max_episode_steps": 6})
    env.enable_save_replay(str(tmp_path))
    env.seed(0)
    play_episodes(env, 2)
    env.close()
    videos = sorted(tmp_path.glob("*.mp4"))
    assert [v.name for v in videos] == ["replay-episode-0000.mp4", "replay-episode-0001.mp4"]
    capture = cv2.VideoCapture(str(videos[0]))
    frames = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
    ok, frame = capture.read()
    capture.release()
    assert frames == 7 and ok and frame.shape == (400, 600, 3)


# ----- DI-engine's keys ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("cfg", "continuous"),
    [
        ({"env_id": "LunarLander-v3"}, False),
        ({"env_id": "LunarLanderContinuous-v3"}, True),
        ({"env_id": "LunarLanderContinuous-v3", "continuous": True}, True),
        ({"continuous": True}, True),
        ({}, False),
    ],
)
def test_lunarlander_variant_follows_env_id_or_continuous(cfg: dict[str, Any], continuous: bool) -> None:
    env = LunarLanderEnv(cfg)
    assert env.action_space == LunarLanderEnv.spaces_from_config(cfg).action
    assert isinstance(env.action_space, gym.spaces.Box) == continuous == env.env.unwrapped.continuous
    env.seed(0)
    env.reset()
    assert env.step(env.random_action()).obs.shape == (8,)
    env.close()


def test_lunarlander_id_and_flag_must_agree() -> None:
    with pytest.raises(ConfigError, match=r"'LunarLanderContinuous-v3' is the continuous=True variant, but continuous"):
        LunarLanderEnv({"env_id": "LunarLanderContinuous-v3", "continuous": False})


def test_lunarlander_act_scale_and_action_clip_clip_the_throttles() -> None:
    cfg = {"env_id": "LunarLanderContinuous-v3", "act_scale": True, "action_clip": True}
    trace = [name for name, _ in LunarLanderEnv.spec_trace(cfg)]
    assert trace[-2:] == ["normalized_action()", "continuous_action_clip()"]
    env = LunarLanderEnv(cfg)
    assert env.action_space == ClippedBox(-1.0, 1.0, (2,), np.float32)
    np.testing.assert_array_equal(env.env.action(np.array([5.0, -3.0], np.float32)), [1.0, -1.0])
    env.seed(0)
    env.reset()
    assert env.step(np.array([5.0, -3.0])).obs.shape == (8,)
    env.close()


@pytest.mark.parametrize("key", ["act_scale", "action_clip"])
def test_lunarlander_continuous_only_keys_are_refused_for_the_discrete_lander(key: str) -> None:
    with pytest.raises(ConfigError, match=rf"lunarlander: {key}=True acts on continuous throttles.*Discrete\(4\)"):
        LunarLanderEnv.spaces_from_config({"env_id": "LunarLander-v3", key: True})


def test_lunarlander_observes_previous_action_and_reward_on_request() -> None:
    env = LunarLanderEnv({"obs_plus_prev_action_reward": True})
    assert set(env.observation_space.spaces) == {"obs", "prev_action", "prev_reward_extrinsic"}
    env.seed(0)
    env.reset()
    ts = env.step(np.array([2]))
    assert int(ts.obs["prev_action"]) == 2
    assert float(ts.obs["prev_reward_extrinsic"][0]) == pytest.approx(float(ts.reward[0]))
    env.close()


def test_lunarlander_saves_a_gif_of_each_episode(tmp_path: pathlib.Path) -> None:
    iio = pytest.importorskip("imageio.v3")
    cfg = {"max_episode_steps": 4, "save_replay_gif": True, "replay_path_gif": str(tmp_path / "gifs")}
    env = LunarLanderEnv(cfg)
    env.seed(0)
    play_episodes(env, 2)
    env.close()
    gifs = sorted((tmp_path / "gifs").glob("*.gif"))
    assert [g.name for g in gifs] == ["LunarLander-v3_episode_0.gif", "LunarLander-v3_episode_1.gif"]
    assert iio.imread(gifs[0], index=None).shape[1:] == (400, 600, 3)
    with pytest.raises(ConfigError, match="save_replay_gif=True needs replay_path_gif"):
        LunarLanderEnv.spaces_from_config({"save_replay_gif": True})


@pytest.mark.parametrize(
    ("cfg", "hardcore"),
    [({"env_id": "BipedalWalkerHardcore-v3"}, True), ({"env_id": "BipedalWalker-v3"}, False), ({}, False)],
)
def test_bipedalwalker_terrain_follows_env_id(cfg: dict[str, Any], hardcore: bool) -> None:
    env = BipedalWalkerEnv(cfg)
    assert env.env.unwrapped.hardcore is hardcore
    env.close()
    with pytest.raises(ConfigError, match=r"'BipedalWalker-v3' is the hardcore=False variant, but hardcore=True"):
        BipedalWalkerEnv({"env_id": "BipedalWalker-v3", "hardcore": True})


def test_bipedalwalker_rew_clip_raises_a_fall_to_minus_10_and_act_scale_clips() -> None:
    cfg = {"rew_clip": True, "act_scale": True}
    declared = BipedalWalkerEnv.spaces_from_config(cfg)
    assert declared.reward == gym.spaces.Box(-10.0, np.inf, (1,), np.float32)
    assert declared.action == ClippedBox(-1.0, 1.0, (4,), np.float32)  # act_scale clips, as DI-engine's does
    assert BipedalWalkerEnv.spaces_from_config({}).action == gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
    rewards: dict[bool, list[float]] = {}
    for rew_clip in (False, True):
        env = BipedalWalkerEnv({**cfg, "rew_clip": rew_clip})
        env.seed(0)
        env.reset()
        rewards[rew_clip] = []
        while True:
            ts = env.step(np.array([3.0, 0.0, 1.0, 0.0]))  # clipped to 1; the walker falls within ~100 steps
            rewards[rew_clip].append(float(ts.reward[0]))
            if ts.done:
                break
        assert ts.terminated
        assert float(ts.info["eval_episode_return"][0]) == pytest.approx(sum(rewards[False]), rel=1e-5)
        env.close()
    assert rewards[False][-1] == -100.0 and rewards[True][-1] == -10.0
    assert rewards[True][:-1] == pytest.approx(rewards[False][:-1])
    env = BipedalWalkerEnv(cfg)
    assert [name for name, _ in BipedalWalkerEnv.spec_trace(cfg)][-1] == "normalized_action()"
    np.testing.assert_array_equal(env.env.action(np.array([3.0, -2.0, 0.5, 0.0])), [1.0, -1.0, 0.5, 0.0])
    env.close()
