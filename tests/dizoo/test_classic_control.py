"""Classic-control envs: declarations equal gymnasium's spaces, ding's conformance checks pass, replays are written."""

from __future__ import annotations

import pathlib
from typing import Any

import cv2
import gymnasium as gym
import numpy as np
import pytest

from ding.envs import DingEnvWrapper
from ding.envs.checks.env_checker import check_ding_env
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
    with pytest.raises(ConfigError, match=r"env\.continuous must be a bool or None \(.*\), got 'yes'"):
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


# ----- DI-engine's keys and names ------------------------------------------------------------------------------
@pytest.mark.parametrize(("act_scale", "low", "step"), [(True, -2.0, 0.4), (False, -1.0, 0.2)])
def test_pendulum_discrete_actions_are_11_torques(act_scale: bool, low: float, step: float) -> None:
    cfg = {"continuous": False, "act_scale": act_scale}
    assert PendulumEnv.spaces_from_config(cfg).action == gym.spaces.Discrete(11)
    env = PendulumEnv(cfg)
    assert env.action_space == gym.spaces.Discrete(11)
    env.seed(0)
    env.reset()
    for index in range(11):
        ts = env.step(np.array([index]))  # DI-engine's form of a discrete action
        assert env.env.unwrapped.last_u == pytest.approx(low + step * index)
        assert ts.obs.shape == (3,) and ts.reward.shape == (1,)
    assert env.random_action().dtype == np.int64
    env.close()


def test_pendulum_continuous_is_the_default_and_must_be_a_bool() -> None:
    assert PendulumEnv.spaces_from_config({"continuous": True}).action.shape == (1,)
    with pytest.raises(ConfigError, match=r"env\.continuous must be a bool, got 'no'"):
        PendulumEnv({"continuous": "no"})


def test_cartpole_observes_previous_action_and_reward_on_request() -> None:
    env = CartPoleEnv({"obs_plus_prev_action_reward": True})
    declared = CartPoleEnv.spaces_from_config({"obs_plus_prev_action_reward": True}).observation
    assert env.observation_space == declared
    assert set(declared.spaces) == {"obs", "prev_action", "prev_reward_extrinsic"}
    env.seed(0)
    first = env.reset()
    assert int(first["prev_action"]) == 0 and float(first["prev_reward_extrinsic"][0]) == 0.0
    ts = env.step(np.array([1]))
    assert int(ts.obs["prev_action"]) == 1 and float(ts.obs["prev_reward_extrinsic"][0]) == 1.0
    assert ts.obs["obs"].shape == (4,)
    env.close()


def test_di_engine_names_and_call_forms() -> None:
    from dizoo.classic_control.acrobot.envs import AcroBotEnv
    from dizoo.classic_control.mountain_car.envs.mtcar_env import MountainCarEnv as FromDIEngineModule

    assert AcroBotEnv is AcrobotEnv and FromDIEngineModule is MountainCarEnv
    env = MountainCarEnv()  # DI-engine's test builds it without a config
    assert env.action_space == gym.spaces.Discrete(3)
    env.seed(0)
    env.reset()
    assert env.step(env.random_action()).obs.shape == (2,)
    env.close()


@pytest.mark.parametrize(
    ("cfg", "continuous"),
    [
        ({}, False),
        ({"env_id": "MountainCar-v0"}, False),
        ({"env_id": "MountainCarContinuous-v0"}, True),
        ({"continuous": True}, True),
        ({"env_id": "MountainCarContinuous-v0", "continuous": True}, True),
    ],
)
def test_mountain_car_variant_follows_env_id_or_continuous(cfg: dict[str, Any], continuous: bool) -> None:
    env = MountainCarEnv(cfg)
    assert isinstance(env.action_space, gym.spaces.Box) == continuous
    assert isinstance(env.env.unwrapped, gym.envs.classic_control.Continuous_MountainCarEnv) == continuous
    env.close()


def test_mountain_car_id_and_flag_must_agree() -> None:
    with pytest.raises(ConfigError, match=r"env_id 'MountainCar-v0' is the continuous=False variant, but continuous"):
        MountainCarEnv({"env_id": "MountainCar-v0", "continuous": True})
