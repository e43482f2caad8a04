"""Box2D envs: declarations equal gymnasium's spaces, ding's conformance checks pass, replays are written."""

from __future__ import annotations

import pathlib
from typing import Any

import cv2
import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("Box2D")

from ding.envs import DingEnvWrapper
from ding.envs.env_checker import check_ding_env
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
        (LunarLanderEnv, {"continuous": 1}, "continuous must be True or False, got 1"),
        (BipedalWalkerEnv, {"hardcore": "no"}, "hardcore must be True or False, got 'no'"),
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
