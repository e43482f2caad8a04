"""Classic-control envs: declarations equal gymnasium's spaces, ding's conformance checks pass, replays are written."""

from __future__ import annotations

import pathlib
from typing import Any

import cv2
import gymnasium as gym
import numpy as np
import pytest

from ding.envs import DingEnvWrapper
from ding.envs.env_checker import check_ding_env
from ding.errors import ConfigError
from dizoo.classic_control.acrobot.envs import AcrobotEnv
from dizoo.classic_control.cartpole.envs import CartPoleEnv
from dizoo.classic_control.mountain_car.envs import MountainCarEnv
from dizoo.classic_control.pendulum.envs import PendulumEnv
from tests.dizoo.episodes import play_episodes


def test_cartpole_declaration_is_gymnasiums() -> None:
    real = gym.make("CartPole-v1")
    declared = CartPoleEnv.raw_spaces({})
    assert declared.observation == real.observation_space and declared.action == real.action_space


def test_pendulum_declaration_is_gymnasiums_and_act_scale_maps_actions() -> None:
    real = gym.make("Pendulum-v1")
    declared = PendulumEnv.raw_spaces({})
    assert declared.observation == real.observation_space and declared.action == real.action_space
    assert PendulumEnv.spaces_from_config({"act_scale": False}).action.high.tolist() == [2.0]
    env = PendulumEnv({})
    assert env.action_space.high.tolist() == [1.0]


def test_cartpole_episode_limit_and_return() -> None:
    env = CartPoleEnv({"max_episode_steps": 30})
    env.seed(0)
    env.reset()
    steps = 0
    while True:
        # push against the pole's lean to keep it up until the time limit
        ts = env.step(int(env.env.unwrapped.state[2] > 0))
        steps += 1
        if ts.done:
            break
    assert steps == 30 and ts.truncated and float(ts.info["eval_episode_return"][0]) == 30.0
    assert ts.obs.dtype == np.float32


# ----- acrobot and mountain_car --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("env_cls", "cfg", "env_id"),
    [
        (AcrobotEnv, {}, "Acrobot-v1"),
        (MountainCarEnv, {}, "MountainCar-v0"),
        (MountainCarEnv, {"continuous": True}, "MountainCarContinuous-v0"),
    ],
    ids=["acrobot", "mountain_car", "mountain_car_continuous"],
)
def test_declaration_is_gymnasiums(env_cls: type[DingEnvWrapper], cfg: dict[str, Any], env_id: str) -> None:
    real = gym.make(env_id)
    declared = env_cls.raw_spaces({**env_cls.default_config(), **cfg})
    assert declared.observation == real.observation_space and declared.action == real.action_space
    assert declared.observation.dtype == real.observation_space.dtype == np.float32
    real.close()


@pytest.mark.parametrize(
    ("env_cls", "cfg"),
    [
        (AcrobotEnv, {"max_episode_steps": 12}),
        (MountainCarEnv, {"max_episode_steps": 12}),
        (MountainCarEnv, {"continuous": True, "max_episode_steps": 12}),
    ],
    ids=["acrobot", "mountain_car", "mountain_car_continuous"],
)
def test_conformance(env_cls: type[DingEnvWrapper], cfg: dict[str, Any]) -> None:
    check_ding_env(env_cls, cfg, steps=30)


@pytest.mark.parametrize(("continuous", "steps"), [(False, 200), (True, 999)])
def test_mountain_car_default_episode_length_follows_the_variant(continuous: bool, steps: int) -> None:
    env = MountainCarEnv({"continuous": continuous})
    env.seed(0)
    env.reset()
    action = np.zeros(1, np.float32) if continuous else 1  # no push: the car never reaches the flag
    for t in range(1, steps + 1):
        ts = env.step(action)
        assert ts.done == (t == steps), f"episode end at step {t}"
    assert ts.truncated and not ts.terminated
    assert float(ts.info["eval_episode_return"][0]) == pytest.approx(-steps if not continuous else 0.0)
    env.close()


def test_mountain_car_rejects_a_non_bool_continuous_flag() -> None:
    with pytest.raises(ConfigError, match="continuous must be True or False, got 'yes'"):
        MountainCarEnv.spaces_from_config({"continuous": "yes"})


def test_acrobot_replay_is_written(tmp_path: pathlib.Path) -> None:
    env = AcrobotEnv({"max_episode_steps": 8})
    env.enable_save_replay(str(tmp_path))
    env.seed(0)
    play_episodes(env)
    env.close()
    videos = sorted(tmp_path.glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 0
    capture = cv2.VideoCapture(str(videos[0]))
    frames = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
    ok, frame = capture.read()
    capture.release()
    assert frames == 9 and ok and frame.shape == (500, 500, 3)  # the first frame and one per step
