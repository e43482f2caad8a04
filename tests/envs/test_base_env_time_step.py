"""BaseEnv's current time step and ``should_reset`` (TF-Agents' semantics), and the ``batched`` flag."""

from __future__ import annotations

import collections
import inspect
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from ding.envs import BaseEnv, BaseEnvTimestep, DingEnvWrapper
from ding.envs.base_env import StepType


class Countdown(BaseEnv):
    """A DI-engine-style env (its own __init__, no BaseEnv.__init__): episodes of ``length`` steps."""

    def __init__(self, length: int = 2, done_value: Any = True) -> None:
        self.length, self.done_value, self.t = length, done_value, 0
        self._observation_space = spaces.Box(0, 9, (1,), np.float32)
        self._action_space = spaces.Discrete(2)
        self._reward_space = spaces.Box(-1, 1, (2,), np.float64)

    def reset(self, *, start: int = 0) -> np.ndarray:
        self.t = start
        return np.array([start], np.float32)

    def step(self, action: Any) -> BaseEnvTimestep:
        self.t += 1
        done = self.t >= self.length
        return BaseEnvTimestep(np.array([self.t], np.float32), np.ones(2), self.done_value if done else False, {})

    def close(self) -> None:
        pass


def test_time_steps_follow_an_episode() -> None:
    env = Countdown(length=2)
    assert env.current_time_step() is None and env.current_step_type() is None and env.should_reset()
    obs = env.reset()
    first = env.current_time_step()
    assert first is not None and first.obs is obs and not first.done and first.info == {}
    assert first.reward.dtype == np.float64 and first.reward.tolist() == [0.0, 0.0]  # the reward space's zero
    assert env.current_step_type() is StepType.FIRST and not env.should_reset()
    ts = env.step(0)
    assert env.current_time_step() is ts and env.current_step_type() is StepType.MID and not env.should_reset()
    last = env.step(1)
    assert env.current_time_step() is last and env.current_step_type() is StepType.LAST and env.should_reset()
    env.reset(start=1)
    assert env.current_step_type() is StepType.FIRST and env.current_time_step().obs.tolist() == [1.0]


MultiAgentTimestep = collections.namedtuple("MultiAgentTimestep", "obs reward done info")


def test_a_multi_agent_episode_ends_when_every_agent_is_done() -> None:
    class TwoAgents(Countdown):
        def step(self, action: Any) -> Any:
            self.t += 1
            return MultiAgentTimestep(np.zeros((2, 1)), np.zeros(2), np.array([True, self.t >= 2]), {})

    env = TwoAgents()
    env.reset()
    env.step(0)
    assert env.current_step_type() is StepType.MID and not env.should_reset()  # one agent is still playing
    env.step(0)
    assert env.current_step_type() is StepType.LAST and env.should_reset()


def test_a_subclass_calling_its_base_reset_records_what_it_returns() -> None:
    class Shifted(Countdown):
        def reset(self, *, start: int = 0) -> np.ndarray:
            return super().reset(start=start) + 100

    env = Shifted()
    assert env.reset().tolist() == [100.0] and env.current_time_step().obs.tolist() == [100.0]
    assert list(inspect.signature(Shifted.reset).parameters) == ["self", "start"]  # the wrapping keeps signatures


def test_a_time_limit_ends_the_episode_for_should_reset() -> None:
    env = DingEnvWrapper(cfg={"env_id": "Pendulum-v1"})
    env.seed(0)
    env.reset()
    while not env.should_reset():
        ts = env.step(env.random_action())
    assert ts.truncated and env.current_step_type() is StepType.LAST
    env.close()


def test_batched_defaults_and_declarations() -> None:
    assert (BaseEnv.batched, BaseEnv.batch_size) == (False, None)
    assert (Countdown().batched, Countdown().batch_size) == (False, None)

    class Native(Countdown):
        batched = True
        batch_size = 4

    assert (Native().batched, Native().batch_size) == (True, 4)
    with pytest.raises(TypeError, match=r"Bad.batch_size must be a positive int or None, got 0"):
        type("Bad", (Countdown,), {"batched": True, "batch_size": 0})
    with pytest.raises(TypeError, match=r"Worse.batched must be a bool, got 'yes'"):
        type("Worse", (Countdown,), {"batched": "yes"})
