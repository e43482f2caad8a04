"""Each episode-dependent wrapper starts afresh at a step inside which ``non_episodic`` began a new episode.

The env below has episodes of 3 steps; observations are ``[step, episode]``, actions Box or Discrete, and the info
reports lives. ``non_episodic`` sits right under the wrapper tested, so its 3rd, 6th, ... step carries the mark
(:func:`~ding.envs.env_wrappers.base.episode_began`) with the next episode's first observation. Chains with
``task_id``, the history wrappers and ``frame_stack`` are proven by the property test of
:mod:`.test_property_episodes`.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.env_wrappers import MultitaskEnv, apply_wrappers
from ding.envs.env_wrappers.base import episode_began
from ding.envs.env_wrappers.transformers import TransformedSpace

EPISODE = 3


class Episodes(gym.Env[Any, Any]):
    """Observation ``[step, episode]``; reward 1 per step; ``info['lives']`` = 3 - step."""

    def __init__(self, box_action: bool = False) -> None:
        self.observation_space = spaces.Box(0, 100, (2,), np.float32)
        self.action_space = spaces.Box(-1, 1, (2,), np.float32) if box_action else spaces.Discrete(2)
        self.t, self.episode = 0, -1
        self.steps = 0

    def _obs(self) -> np.ndarray:
        return np.array([self.t, self.episode], np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.t, self.episode = 0, self.episode + 1
        return self._obs(), {"lives": 3, "task_id": self.episode % 2}

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        self.t += 1
        self.steps += 1
        return self._obs(), 1.0, self.t >= EPISODE, False, {"lives": 3 - self.t, "task_id": self.episode % 2}


def play(chain: list[tuple[str, dict[str, Any]]], steps: int = 7, box_action: bool = False) -> tuple[Any, list[Any]]:
    env = apply_wrappers(Episodes(box_action), [("non_episodic", {}), *chain])
    env.reset(seed=0)
    action = np.full(2, 0.5, np.float32) if box_action else 1
    return env, [env.step(action) for _ in range(steps)]


def boundaries(results: list[Any]) -> list[int]:
    return [t for t, result in enumerate(results) if episode_began(result[4]) is not None]


def test_the_mark_is_on_the_steps_that_begin_an_episode() -> None:
    _, results = play([])
    assert boundaries(results) == [2, 5]
    assert results[2][0].tolist() == [0, 1] and results[2][4]["reset_info"] == {"lives": 3, "task_id": 1}


def test_reward_in_obs_shows_no_reward_with_a_first_observation() -> None:
    _, results = play([("reward_in_obs", {})])
    assert [float(r[0]["reward"][0]) for r in results] == [1, 1, 0, 1, 1, 0, 1]


def test_transformers_restart_their_history_and_transformers() -> None:
    resets: list[int] = []

    class Length:
        def __call__(self, obs: Any, history: Any) -> Any:
            return np.array([len(history)], np.float32)

        def reset(self) -> None:
            resets.append(1)

    state = TransformedSpace(Length(), spaces.Box(0, 100, (1,), np.float32))
    _, results = play([("transformers", {"state_transformer": state})])
    assert [float(r[0][0]) for r in results] == [1, 2, 0, 1, 2, 0, 1] and len(resets) == 3  # reset + 2 in steps


def test_time_shift_drops_the_actions_of_the_ended_episode() -> None:
    env, results = play([("time_shift", {"shift": 2, "default_action": 0})], steps=6)
    assert boundaries(results) == [2, 5] and list(env.pending) == [0, 0]  # nothing of the ended episode waits


def test_temporally_correlated_noise_restarts_with_the_episode() -> None:
    env, results = play([("temporally_correlated_noise", {"sigma": 0.5})], steps=6, box_action=True)
    assert boundaries(results) == [2, 5] and not env.noise.any()


def test_delay_reward_releases_what_it_held_when_an_episode_ends_inside_the_step() -> None:
    _, results = play([("delay_reward", {"delay_reward_step": 10})])
    assert [float(np.asarray(r[1]).reshape(())) for r in results] == [0, 0, 3, 0, 0, 3, 0]


def test_reward_norm_restarts_its_return() -> None:
    env, _ = play([("reward_norm", {"reward_discount": 1.0})], steps=6)
    assert float(env._return.reshape(())) == 0.0


@pytest.mark.parametrize("wrapper", ["frame_skip", "action_repeat"])
def test_repeating_wrappers_stop_at_a_step_that_begins_an_episode(wrapper: str) -> None:
    kwargs = {"skip": 4} if wrapper == "frame_skip" else {"action_repeat": 4}
    _, results = play([(wrapper, kwargs)], steps=3)
    assert [r[0].tolist() for r in results] == [[0, 1], [0, 2], [0, 3]]  # each repeat stopped at the new episode
    assert all(episode_began(r[4]) is not None for r in results)


def test_terminal_on_life_loss_counts_the_new_games_lives() -> None:
    _, results = play([("terminal_on_life_loss", {})])
    assert [r[4]["life_lost"] for r in results] == [True] * 7  # every step loses one of the game's lives


def test_curriculum_scores_the_ended_episode_and_follows_the_new_task() -> None:
    tasks = MultitaskEnv([Episodes(), Episodes()], task_order="cycle")
    env = apply_wrappers(tasks, [("non_episodic", {}), ("curriculum", {})])
    env.reset(seed=0)
    infos = [env.step(1)[4] for _ in range(6)]
    ends = [info["curriculum"] for info in infos if "curriculum" in info]
    assert len(ends) == 2 and [int(e["episodes"].sum()) for e in ends] == [1, 2]
    assert ends[0]["task_id"] == infos[2]["reset_info"]["task_id"]
