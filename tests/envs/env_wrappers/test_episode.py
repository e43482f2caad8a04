"""Behaviour of the episode wrappers: where episodes end and what info reports."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils import seeding

from ding.envs.env_wrappers import update_shape
from ding.envs.env_wrappers.episode import (
    EvalEpisodeReturnWrapper,
    NonEpisodicWrapper,
    RandomFirstEpisodeLengthWrapper,
    RecordEpisodeStatisticsWrapper,
    TimeLimitWrapper,
)
from ding.errors import ConfigError, ShapeRuleError
from tests.envs.env_wrappers.catalogue import make_catalogue_env


class CounterEnv(gym.Env[np.ndarray, Any]):
    """Observation = steps taken in the episode; reward = that count (times 1, 2, ... for vector rewards)."""

    def __init__(self, episode_len: int = 10, reward_dim: int = 0) -> None:
        self.observation_space = spaces.Box(0, 1000, (1,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.reward_space = spaces.Box(-np.inf, np.inf, (reward_dim or 1,), np.float32)
        self.episode_len = episode_len
        self.reward_dim = reward_dim
        self.t = 0
        self.resets = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.t = 0
        self.resets += 1
        return np.array([0.0], np.float32), {"resets": self.resets}

    def step(self, action: int) -> tuple[np.ndarray, Any, bool, bool, dict]:
        self.t += 1
        reward: Any = float(self.t)
        if self.reward_dim:
            reward = np.arange(1, self.reward_dim + 1, dtype=np.float32) * self.t
        return np.array([self.t], np.float32), reward, self.t >= self.episode_len, False, {"t": self.t}


def run_episode(env: gym.Env[Any, Any], max_steps: int = 1000) -> list[tuple[Any, ...]]:
    """Step until the episode ends; return every step's result."""
    steps = []
    for _ in range(max_steps):
        steps.append(env.step(0))
        if steps[-1][2] or steps[-1][3]:
            break
    return steps


# ---- eval_episode_return ----


@pytest.mark.parametrize("entry", ["vector", "vector_reward"])
def test_eval_episode_return_is_the_sum_of_rewards_and_only_at_the_end(entry: str) -> None:
    env = EvalEpisodeReturnWrapper(make_catalogue_env(entry))
    env.reset(seed=3)
    for _ in range(2):  # the second episode must not carry the first one's return
        steps = run_episode(env)
        assert len(steps) == 15
        assert all("eval_episode_return" not in info for *_, info in steps[:-1])
        total = np.sum([np.asarray(r, np.float32).reshape(-1) for _, r, *_ in steps], axis=0)
        ret = steps[-1][-1]["eval_episode_return"]
        assert ret.dtype == np.float32 and ret.shape == env.reward_space.shape
        np.testing.assert_allclose(ret, total, rtol=1e-5)
        env.reset()


# ---- time_limit ----


def test_time_limit_truncates_at_exactly_n_steps() -> None:
    env = TimeLimitWrapper(CounterEnv(episode_len=10), max_episode_steps=4)
    for _ in range(2):  # the count restarts on reset
        env.reset(seed=0)
        steps = run_episode(env)
        assert [float(obs[0]) for obs, *_ in steps] == [1.0, 2.0, 3.0, 4.0]
        assert [(term, trunc) for _, _, term, trunc, _ in steps] == [(False, False)] * 3 + [(False, True)]
        assert steps[-1][-1]["TimeLimit.truncated"] is True
        assert all("TimeLimit.truncated" not in info for *_, info in steps[:-1])
        assert env.elapsed_steps == 4


def test_time_limit_leaves_earlier_terminations_and_flags_a_coinciding_one() -> None:
    env = TimeLimitWrapper(CounterEnv(episode_len=3), max_episode_steps=5)
    env.reset(seed=0)
    steps = run_episode(env)
    assert len(steps) == 3 and steps[-1][2:4] == (True, False) and "TimeLimit.truncated" not in steps[-1][-1]

    env = TimeLimitWrapper(CounterEnv(episode_len=3), max_episode_steps=3)
    env.reset(seed=0)
    *_, (_, _, terminated, truncated, info) = run_episode(env)
    assert (terminated, truncated, info["TimeLimit.truncated"]) == (True, True, False)


def test_time_limit_none_takes_the_spec_limit() -> None:
    assert TimeLimitWrapper(gym.make("Pendulum-v1")).max_episode_steps == 200
    with pytest.raises(ConfigError, match=r"max_episode_steps=None takes the limit from env.spec.*pass max_episode"):
        TimeLimitWrapper(CounterEnv())


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_time_limit_rejects_bad_limits(bad: Any) -> None:
    with pytest.raises(
        ConfigError, match=rf"time_limit: max_episode_steps must be a positive int or None; got {bad!r}"
    ):
        TimeLimitWrapper(CounterEnv(), max_episode_steps=bad)
    with pytest.raises(
        ShapeRuleError,
        match=r"step 0 time_limit\(max_episode_steps=.*\): ConfigError: .*must be a positive int or None",
    ):
        update_shape((1,), 2, (1,), [("time_limit", {"max_episode_steps": bad})])


# ---- non_episodic ----


def test_non_episodic_never_ends_and_reports_inner_ends() -> None:
    inner = CounterEnv(episode_len=4)
    env = NonEpisodicWrapper(inner)
    env.reset(seed=0)
    ends = []
    for t in range(1, 15):
        obs, reward, terminated, truncated, info = env.step(0)
        assert not terminated and not truncated
        assert reward == float((t - 1) % 4 + 1)
        if info.get("inner_episode_end"):
            ends.append(t)
            assert info["inner_terminated"] is True
            assert float(info["final_observation"][0]) == 4.0
            assert float(obs[0]) == 0.0  # the fresh episode's first observation
            assert info["reset_info"] == {"resets": inner.resets}
        else:
            assert float(obs[0]) == (t % 4) and "final_observation" not in info
    assert ends == [4, 8, 12]
    assert env.inner_episode_count == 3 and inner.resets == 4


def test_non_episodic_hides_truncations_too() -> None:
    env = NonEpisodicWrapper(TimeLimitWrapper(CounterEnv(episode_len=100), max_episode_steps=3))
    env.reset(seed=0)
    infos = [env.step(0)[-1] for _ in range(6)]
    ends = [i for i, info in enumerate(infos, 1) if info.get("inner_episode_end")]
    assert ends == [3, 6]
    assert infos[2]["inner_terminated"] is False and infos[2]["TimeLimit.truncated"] is True


# ---- random_first_episode_length ----


def _expected_first_length(seed: int, high: int) -> int:
    rng, _ = seeding.np_random(seed)
    return int(rng.integers(1, high + 1))


def test_random_first_episode_length_cuts_only_the_first_episode() -> None:
    lengths = []
    for seed in range(12):
        env = RandomFirstEpisodeLengthWrapper(CounterEnv(episode_len=10), max_first_episode_length=8)
        env.reset(seed=seed)
        first = run_episode(env)
        assert len(first) == _expected_first_length(seed, 8)
        assert first[-1][2:4] == (False, True) and first[-1][-1]["TimeLimit.truncated"] is True
        lengths.append(len(first))
        for _ in range(2):
            env.reset()
            later = run_episode(env)
            assert len(later) == 10 and later[-1][2:4] == (True, False)
        assert env.current_limit is None
    assert all(1 <= n <= 8 for n in lengths) and len(set(lengths)) >= 4


def test_random_first_episode_length_is_fixed_by_the_seed() -> None:
    def first_length(seed: int) -> int:
        env = RandomFirstEpisodeLengthWrapper(CounterEnv(episode_len=1000), max_first_episode_length=500)
        env.reset(seed=seed)
        return len(run_episode(env))

    assert first_length(7) == first_length(7) == _expected_first_length(7, 500)
    assert len({first_length(s) for s in range(5)}) > 1


def test_random_first_episode_length_counts_ended_episodes() -> None:
    env = RandomFirstEpisodeLengthWrapper(CounterEnv(episode_len=1000), max_first_episode_length=5, num_episodes=2)
    env.reset(seed=1)
    env.reset()  # a reset before any episode ended draws again and keeps the cut active
    lengths = []
    for _ in range(3):
        lengths.append(len(run_episode(env, max_steps=20)))
        env.reset()
    assert all(1 <= n <= 5 for n in lengths[:2]) and lengths[2] == 20


def test_random_first_episode_length_errors() -> None:
    with pytest.raises(ConfigError, match=r"max_first_episode_length must be a positive int or None; got 0"):
        RandomFirstEpisodeLengthWrapper(CounterEnv(), max_first_episode_length=0)
    with pytest.raises(ConfigError, match=r"num_episodes must be a positive int; got 0"):
        RandomFirstEpisodeLengthWrapper(CounterEnv(), max_first_episode_length=3, num_episodes=0)
    with pytest.raises(ConfigError, match=r"max_first_episode_length=None .* declares none"):
        RandomFirstEpisodeLengthWrapper(CounterEnv())
    with pytest.raises(ShapeRuleError, match=r"random_first_episode_length.*got -1"):
        update_shape((1,), 2, (1,), [("random_first_episode_length", {"max_first_episode_length": -1})])


# ---- record_episode_statistics ----


def test_record_episode_statistics_scalar_rewards() -> None:
    env = RecordEpisodeStatisticsWrapper(make_catalogue_env("vector"), deque_size=2)
    env.reset(seed=5)
    returns = []
    for episode in range(3):
        steps = run_episode(env)
        assert all("episode" not in info for *_, info in steps[:-1])
        stats = steps[-1][-1]["episode"]
        manual = sum(r for _, r, *_ in steps)
        assert isinstance(stats["r"], float) and stats["r"] == pytest.approx(manual)
        assert stats["l"] == len(steps) == 15
        assert isinstance(stats["t"], float) and stats["t"] >= 0.0
        assert env.episode_count == episode + 1
        returns.append(stats["r"])
        env.reset()
    assert list(env.return_queue) == returns[1:] and list(env.length_queue) == [15, 15]


def test_record_episode_statistics_vector_rewards() -> None:
    env = RecordEpisodeStatisticsWrapper(CounterEnv(episode_len=5, reward_dim=3))
    env.reset(seed=0)
    stats = run_episode(env)[-1][-1]["episode"]
    assert stats["r"].dtype == np.float32 and stats["r"].shape == (3,)
    np.testing.assert_array_equal(stats["r"], np.array([15.0, 30.0, 45.0], np.float32))
    assert stats["l"] == 5
    env.reset()
    again = run_episode(env)[-1][-1]["episode"]
    np.testing.assert_array_equal(again["r"], stats["r"])  # accumulators restart on reset
    assert again["r"] is not stats["r"] and len(env.return_queue) == 2


def test_record_episode_statistics_rejects_an_empty_queue() -> None:
    with pytest.raises(ConfigError, match=r"record_episode_statistics: deque_size must be a positive int; got 0"):
        RecordEpisodeStatisticsWrapper(CounterEnv(), deque_size=0)
