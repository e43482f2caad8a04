"""Shape-proof cases for the ``transformers`` wrapper: no transformer, and declared state, reward and action ones."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.env_wrappers import EpisodeHistory, TransformedSpace
from tests.envs.env_wrappers.catalogue import ShapeCase


def _returns_so_far(reward: Any, history: EpisodeHistory) -> np.ndarray:
    """The episode's return so far, one value per reward entry (float32)."""
    return np.asarray(history.rewards, np.float32).sum(axis=0, dtype=np.float32)


def _unbounded(box: spaces.Box) -> spaces.Box:
    return spaces.Box(-np.inf, np.inf, box.shape, np.float32)


def _frame_count(obs: Any, history: EpisodeHistory) -> np.ndarray:
    return np.array([len(history)], np.int64)


def _index_from_one_hot(action: Any, history: EpisodeHistory) -> int:
    return int(np.argmax(action))


def _one_hot_space(discrete: spaces.Discrete) -> spaces.Box:
    return spaces.Box(0.0, 1.0, (int(discrete.n),), np.float32)


RETURN_SO_FAR = TransformedSpace(_returns_so_far, _unbounded)
FRAME_COUNT = TransformedSpace(_frame_count, spaces.Box(0, 2**31, (1,), np.int64))
ONE_HOT = TransformedSpace(_index_from_one_hot, _one_hot_space)

_ENVS = ["vector", "vector_box_action", "dict_obs", "image_hwc", "vector_reward"]

CASES = [ShapeCase("transformers", env, {"expected_episode_length": 4}) for env in _ENVS] + [
    ShapeCase("transformers", "vector", {"reward_transformer": RETURN_SO_FAR, "state_transformer": FRAME_COUNT}),
    ShapeCase("transformers", "vector_reward", {"reward_transformer": RETURN_SO_FAR}),
    ShapeCase("transformers", "image_hwc", {"state_transformer": FRAME_COUNT, "action_transformer": ONE_HOT}),
]
