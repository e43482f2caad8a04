"""EpisodeHistory: preallocated columns of an episode's observations, actions and rewards."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.env_wrappers import EpisodeHistory
from ding.errors import SpaceKindError

REWARD = spaces.Box(-np.inf, np.inf, (1,), np.float32)


def test_rows_grow_past_the_capacity_and_keep_what_was_recorded() -> None:
    history = EpisodeHistory(spaces.Box(0, 9, (2,), np.uint8), spaces.MultiBinary(3), REWARD, capacity=1)
    history.start(np.array([0, 0], np.uint8))
    for t in range(1, 6):
        history.record(np.array([t % 2, 1, 0], np.int8), float(t), np.array([t, t], np.uint8))
    assert len(history) == 5 and history.capacity == 8
    assert history.observations.dtype == np.uint8 and history.observations[:, 0].tolist() == [0, 1, 2, 3, 4, 5]
    assert history.actions[:, 0].tolist() == [1, 0, 1, 0, 1] and history.rewards[:, 0].tolist() == [1, 2, 3, 4, 5]


def test_a_new_episode_drops_the_rows_and_keeps_the_memory() -> None:
    history = EpisodeHistory(spaces.Box(0, 9, (1,)), spaces.Discrete(4), REWARD, capacity=2)
    history.start(np.zeros(1, np.float32))
    for _ in range(3):
        history.record(np.array([3]), 1.0, np.ones(1, np.float32))  # DI-engine's (1,) form of a Discrete action
    history.start(np.full(1, 7, np.float32))
    assert len(history) == 0 and history.capacity == 4
    assert history.observations.tolist() == [[7.0]] and history.actions.shape == (0,)


def test_tuple_spaces_nest_as_tuples() -> None:
    obs_space = spaces.Tuple((spaces.Discrete(5), spaces.Box(-1, 1, (2,))))
    history = EpisodeHistory(obs_space, spaces.Box(-1, 1, (2,)), REWARD, capacity=4)
    history.start((1, np.zeros(2, np.float32)))
    history.record(np.array([0.5, -0.5], np.float32), -1.0, (4, np.ones(2, np.float32)))
    counts, vectors = history.dump()["observations"]
    assert counts.tolist() == [1, 4] and vectors.tolist() == [[0, 0], [1, 1]]


def test_misuse_is_refused() -> None:
    with pytest.raises(TypeError, match=r"capacity must be a positive int, got 0"):
        EpisodeHistory(spaces.Discrete(2), spaces.Discrete(2), REWARD, capacity=0)
    with pytest.raises(SpaceKindError, match=r"the action space has a Sequence leaf"):
        EpisodeHistory(spaces.Discrete(2), spaces.Sequence(spaces.Discrete(2)), REWARD, capacity=2)
    history = EpisodeHistory(spaces.Discrete(2), spaces.Discrete(2), REWARD, capacity=2)
    assert len(history.observations) == 0
    with pytest.raises(RuntimeError, match=r"record before start: reset the env before stepping it"):
        history.record(0, 0.0, 1)
