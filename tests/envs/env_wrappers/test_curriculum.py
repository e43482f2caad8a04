"""The curriculum wrapper: its scores and probabilities follow the documented formula, and sampling follows them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.envs.classic_control import CartPoleEnv

from ding.envs.env_wrappers import CurriculumWrapper, MultitaskEnv
from ding.errors import ConfigError, ShapeRuleError
from tests.envs.env_wrappers.catalogue import CatalogueEnv


class ScriptedReturnEnv(gym.Env[np.ndarray, int]):
    """Episodes of ``length`` steps; every step of the k-th episode (from 0) pays ``returns(k) / length``."""

    def __init__(self, returns: Callable[[int], float], length: int) -> None:
        self.observation_space = spaces.Box(0, 1, (1,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.returns, self.length = returns, length
        self.episode, self.t = -1, 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.episode, self.t = self.episode + 1, 0
        return np.zeros(1, np.float32), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.t += 1
        return np.zeros(1, np.float32), self.returns(self.episode) / self.length, self.t >= self.length, False, {}


def rising_and_flat(**kwargs: Any) -> CurriculumWrapper:
    tasks = MultitaskEnv([ScriptedReturnEnv(float, 4), ScriptedReturnEnv(lambda k: 1.0, 2)], ["rising", "flat"])
    return CurriculumWrapper(tasks, **kwargs)


def play(env: gym.Env[Any, Any], task: int | None = None) -> dict[str, Any]:
    """One episode (of the given task); returns the info of its last step."""
    env.reset(options=None if task is None else {"task_id": task})
    while True:
        _, _, terminated, truncated, info = env.step(0)
        if terminated or truncated:
            return info


def test_probabilities_are_uniform_until_a_task_progresses() -> None:
    env = rising_and_flat()
    _, info = env.reset(seed=0)
    np.testing.assert_array_equal(info["curriculum"]["probabilities"], [0.5, 0.5])
    assert info["curriculum"]["favor"] == 1.0
    stats = play(env, task=1)["curriculum"]  # one episode: current and past scores are its return
    np.testing.assert_array_equal(stats["progress"], [0.0, 0.0])
    np.testing.assert_array_equal(stats["probabilities"], [0.5, 0.5])


def test_scores_progress_and_probabilities_follow_the_formula() -> None:
    favor, rate_c, rate_p, warmup = 5.0, 0.3, 0.1, 4
    env = rising_and_flat(
        progress_favor=favor, current_score_update_rate=rate_c, past_score_update_rate=rate_p, warmup_period=warmup
    )
    env.reset(seed=0)
    lengths, returns = (4, 2), (lambda k: float(k), lambda k: 1.0)
    counts, c, p, ell = np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2)
    for episode in range(6):
        for task in (0, 1):
            stats = play(env, task)["curriculum"]
            counts[task] += 1
            a, b = max(rate_c, 1 / counts[task]), max(rate_p, 1 / counts[task])
            r = returns[task](episode)
            c[task] += a * (r - c[task])
            p[task] += b * (r - p[task])
            ell[task] += a * (lengths[task] - ell[task])
            progress = (c - p) / np.maximum(ell, 1)
            f = favor ** min(1.0, counts.sum() / (2 * warmup))
            weights = f ** (progress / np.abs(progress).max()) if np.abs(progress).max() > 0 else np.ones(2)
            np.testing.assert_allclose(stats["current_score"], c)
            np.testing.assert_allclose(stats["past_score"], p)
            np.testing.assert_allclose(stats["progress"], progress)
            np.testing.assert_allclose(stats["favor"], f)
            np.testing.assert_allclose(stats["probabilities"], weights / weights.sum())
            assert stats["episodes"].tolist() == counts.tolist() and stats["task_id"] == task
    assert stats["progress"][0] > 0 and stats["progress"][1] == 0  # the rising task progresses
    assert stats["probabilities"][0] == pytest.approx(favor / (favor + 1))


def test_sampling_favors_the_progressing_task_reproducibly() -> None:
    def sampled(seed: int) -> list[int]:
        # early scores are running means at both rates (1 / n is larger): faster rates let progress show at once
        env = rising_and_flat(
            progress_favor=9.0, warmup_period=0, current_score_update_rate=0.5, past_score_update_rate=0.1
        )
        for _ in range(5):
            play(env, 0)
            play(env, 1)
        first = env.reset(seed=seed)[1]["task_id"]
        return [first] + [env.reset()[1]["task_id"] for _ in range(599)]

    tasks = sampled(3)
    assert tasks == sampled(3)
    assert np.mean(np.asarray(tasks) == 0) == pytest.approx(0.9, abs=0.04)


def test_the_curriculum_chooses_tasks_when_none_is_given() -> None:
    env = rising_and_flat(warmup_period=0)
    seen = []
    env.reset(seed=1)
    for _ in range(30):
        info = play(env)
        seen.append(info["curriculum"]["task_id"])
    assert set(seen) == {0, 1}
    assert int(info["curriculum"]["episodes"].sum()) == 30


def test_the_curriculum_needs_a_multitask_env_and_scalar_rewards() -> None:
    with pytest.raises(ConfigError, match="curriculum needs a multitask env inside"):
        CurriculumWrapper(CartPoleEnv())
    vector = CatalogueEnv(spaces.Box(0, 1, (2,)), spaces.Discrete(2), spaces.Box(-1, 1, (3,), np.float32))
    with pytest.raises(ShapeRuleError, match=r"curriculum needs one reward value per step.*\(3,\)"):
        CurriculumWrapper(MultitaskEnv([vector]))
    with pytest.raises(ConfigError, match=r"progress_favor must be a finite number >= 1; got 0.5"):
        CurriculumWrapper.new_shape((2,), 2, (1,), progress_favor=0.5)
    with pytest.raises(ConfigError, match=r"current_score_update_rate must be a number in \[0, 1\]"):
        rising_and_flat(current_score_update_rate=2.0)
