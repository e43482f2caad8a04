"""Behaviour of frame_stack: ordering, resets, fields, bounds and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.env_wrappers import update_shape
from ding.envs.env_wrappers.frame_stack import FrameStackWrapper
from ding.errors import ConfigError, ShapeRuleError
from tests.envs.env_wrappers.catalogue import make_catalogue_env
from tests.envs.env_wrappers.image_envs import FnEnv


def _counter_env(shape: tuple[int, ...] = (2,), episode_len: int = 1000, dtype: Any = np.int64) -> FnEnv:
    return FnEnv(spaces.Box(0, 10_000, shape, dtype), lambda t: np.full(shape, t, dtype=dtype), episode_len)


def test_frame_stack_order_oldest_first() -> None:
    env = FrameStackWrapper(_counter_env(), n_frames=4)
    obs, _ = env.reset()
    assert obs.shape == (4, 2) and obs.dtype == np.int64
    np.testing.assert_array_equal(obs[:, 0], [0, 0, 0, 0])
    for t in range(1, 11):
        obs, *_ = env.step(0)
        np.testing.assert_array_equal(obs[:, 0], [max(0, t - 3 + i) for i in range(4)])
        np.testing.assert_array_equal(obs[:, 1], obs[:, 0])
    assert obs[-1, 0] == 10


def test_frame_stack_reset_refills_and_outputs_are_fresh() -> None:
    env = FrameStackWrapper(_counter_env(episode_len=3), n_frames=3)
    env.reset()
    kept = [env.step(0)[0] for _ in range(3)]
    np.testing.assert_array_equal([k[:, 0].tolist() for k in kept], [[0, 0, 1], [0, 1, 2], [1, 2, 3]])
    obs, _ = env.reset()
    np.testing.assert_array_equal(obs[:, 0], [0, 0, 0])
    obs[:] = -1
    np.testing.assert_array_equal(kept[0][:, 0], [0, 0, 1])  # earlier outputs are not overwritten
    np.testing.assert_array_equal(env.step(0)[0][:, 0], [0, 0, 1])


def test_frame_stack_of_one_and_of_images_with_fields() -> None:
    env = FrameStackWrapper(_counter_env(), n_frames=1)
    env.reset()
    np.testing.assert_array_equal(env.step(0)[0], [[1, 1]])
    env = FrameStackWrapper(make_catalogue_env("dict_obs"), n_frames=2, fields=["image"])
    first, _ = env.reset(seed=0)
    second, *_ = env.step(np.zeros(2, np.float32))
    assert second["image"].shape == (2, 48, 64, 3) and second["image"].dtype == np.uint8
    np.testing.assert_array_equal(second["image"][0], first["image"][1])
    assert second["state"]["pos"].shape == (3,)


def test_frame_stack_repeats_bounds_and_keeps_dtype() -> None:
    low = np.array([0.0, -1.0], dtype=np.float64)
    out = FrameStackWrapper.new_space(
        spaces.Box(low, 5.0, dtype=np.float64), spaces.Discrete(2), spaces.Box(-1, 1, (1,)), n_frames=3
    )
    assert out[0] == spaces.Box(np.tile(low, (3, 1)), 5.0, dtype=np.float64)
    with pytest.raises(ConfigError, match="frame_stack: n_frames must be a positive int; got 0"):
        FrameStackWrapper(_counter_env(), n_frames=0)
    with pytest.raises(
        ShapeRuleError, match=r"frame_stack needs an array \(Box\) observation; got observation shape 6 \(Discrete\)"
    ):
        update_shape(6, 2, (1,), ["frame_stack"])
    with pytest.raises(ShapeRuleError, match=r"got observation shape \{'image': \(48, 64, 3\)\}.*fields=\[\.\.\.\]"):
        update_shape({"image": (48, 64, 3)}, 2, (1,), ["frame_stack"])
