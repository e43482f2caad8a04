"""Behaviour of image_channel_first, obs_transpose and frame_flip: values, bounds and errors."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.env_wrappers import update_shape
from ding.envs.env_wrappers.image_axes import FrameFlipWrapper, ImageChannelFirstWrapper, ObsTransposeWrapper
from ding.errors import ShapeRuleError
from tests.envs.env_wrappers.catalogue import make_catalogue_env
from tests.envs.env_wrappers.image_envs import FnEnv, playback_env, random_frames

# --- image_channel_first and obs_transpose --------------------------------------------------


def test_image_channel_first_values_and_bounds() -> None:
    frame = random_frames((48, 64, 3), n=1)[0]
    low = np.zeros((48, 64, 3), dtype=np.uint8)
    low[:, :, 1] = 7
    env = ImageChannelFirstWrapper(playback_env([np.maximum(frame, low)], low=low))
    obs, _ = env.reset()
    np.testing.assert_array_equal(obs, np.maximum(frame, low).transpose(2, 0, 1))
    assert obs.flags["C_CONTIGUOUS"]
    bounds = env.observation_space
    assert isinstance(bounds, spaces.Box)
    assert (bounds.low[1] == 7).all() and (bounds.low[0] == 0).all()
    gray = frame[:, :, 0].copy()
    obs, _ = ImageChannelFirstWrapper(playback_env([gray])).reset()
    assert obs.shape == (1, 48, 64)
    np.testing.assert_array_equal(obs[0], gray)


def test_image_channel_first_rejects_channels_first() -> None:
    with pytest.raises(ShapeRuleError, match=r"image_channel_first needs a channels-last.*\(3, 48, 64\) is already"):
        ImageChannelFirstWrapper(make_catalogue_env("image_chw"))
    with pytest.raises(ShapeRuleError, match=r"image_channel_first cannot tell the channel axis of \(48, 64, 5\)"):
        update_shape((48, 64, 5), 3, (1,), ["image_channel_first"])
    with pytest.raises(ShapeRuleError, match=r"image_channel_first needs an image observation.*got \(5,\)"):
        update_shape((5,), 3, (1,), ["image_channel_first"])


def test_obs_transpose_on_a_tuple_of_images() -> None:
    first, second = random_frames((48, 64, 3), n=1)[0], random_frames((20, 30, 1), n=1)[0]
    space = spaces.Tuple((spaces.Box(0, 255, first.shape, np.uint8), spaces.Box(0, 255, second.shape, np.uint8)))
    env = ObsTransposeWrapper(FnEnv(space, lambda t: (first, second)))
    assert env.observation_space == spaces.Tuple(
        (spaces.Box(0, 255, (3, 48, 64), np.uint8), spaces.Box(0, 255, (1, 20, 30), np.uint8))
    )
    obs, _ = env.reset()
    assert isinstance(obs, tuple)
    np.testing.assert_array_equal(obs[0], first.transpose(2, 0, 1))
    np.testing.assert_array_equal(obs[1], second.transpose(2, 0, 1))
    assert env.observation_space.contains(obs)


def test_obs_transpose_on_one_image_and_errors() -> None:
    frame = random_frames((48, 64, 3), n=1)[0]
    obs, _ = ObsTransposeWrapper(playback_env([frame])).reset()
    np.testing.assert_array_equal(obs, frame.transpose(2, 0, 1))
    assert update_shape(((48, 64, 3), (84, 84)), 4, (1,), ["obs_transpose"])[0] == ((3, 48, 64), (1, 84, 84))
    with pytest.raises(ShapeRuleError, match=r"obs_transpose needs a channels-last.*\(3, 48, 64\) is already"):
        ObsTransposeWrapper(make_catalogue_env("image_chw"))
    with pytest.raises(ShapeRuleError, match=r"obs_transpose needs an image observation.*got \(5,\)"):
        update_shape(((48, 64, 3), (5,)), 4, (1,), ["obs_transpose"])


# --- frame_flip -----------------------------------------------------------------------------


def test_frame_flip_directions_in_every_layout() -> None:
    hwc = random_frames((6, 8, 3), n=1)[0]
    obs, _ = FrameFlipWrapper(playback_env([hwc])).reset()
    np.testing.assert_array_equal(obs, hwc[:, ::-1])
    obs, _ = FrameFlipWrapper(playback_env([hwc]), horizontal=False, vertical=True).reset()
    np.testing.assert_array_equal(obs, hwc[::-1])
    chw = np.ascontiguousarray(hwc.transpose(2, 0, 1))
    obs, _ = FrameFlipWrapper(playback_env([chw]), vertical=True).reset()
    np.testing.assert_array_equal(obs, chw[:, ::-1, ::-1])
    assert obs.flags["C_CONTIGUOUS"]
    gray = hwc[:, :, 2].copy()
    obs, _ = FrameFlipWrapper(playback_env([gray])).reset()
    np.testing.assert_array_equal(obs, gray[:, ::-1])
    obs, _ = FrameFlipWrapper(playback_env([gray]), horizontal=False).reset()
    np.testing.assert_array_equal(obs, gray)


def test_frame_flip_mirrors_per_pixel_bounds() -> None:
    low = np.zeros((4, 5), dtype=np.uint8)
    low[:, 0] = 200  # the left column is always bright
    env = FrameFlipWrapper(playback_env([np.full((4, 5), 220, np.uint8)], low=low))
    obs, _ = env.reset()
    bounds = env.observation_space
    assert isinstance(bounds, spaces.Box)
    assert (bounds.low[:, -1] == 200).all() and bounds.contains(obs)
    with pytest.raises(ShapeRuleError, match=r"frame_flip needs an image observation.*got \(5,\)"):
        FrameFlipWrapper(make_catalogue_env("vector"))
