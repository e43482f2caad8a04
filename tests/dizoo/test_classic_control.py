"""The classic-control envs' static space declarations equal gymnasium's own spaces."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from dizoo.classic_control.cartpole.envs import CartPoleEnv
from dizoo.classic_control.pendulum.envs import PendulumEnv


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
