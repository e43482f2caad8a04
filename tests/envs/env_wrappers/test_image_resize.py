"""Behaviour of warp_frame, frame_resize and gray_scale: pixel values, layouts and errors."""

from __future__ import annotations

import cv2
import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.env_wrappers import update_shape
from ding.envs.env_wrappers.image_resize import FrameResizeWrapper, GrayScaleWrapper, WarpFrameWrapper
from ding.errors import ConfigError, ShapeRuleError
from tests.envs.env_wrappers.catalogue import make_catalogue_env
from tests.envs.env_wrappers.image_envs import area_resize, playback_env, random_frames, rgb_gray

# --- warp_frame -----------------------------------------------------------------------------


def test_warp_frame_matches_opencv_for_hwc_and_chw() -> None:
    hwc = random_frames((50, 40, 3))
    expected = [area_resize(rgb_gray(f), 84, 84) for f in hwc]
    chw = [np.ascontiguousarray(f.transpose(2, 0, 1)) for f in hwc]
    for frames in (hwc, chw):
        env = WarpFrameWrapper(playback_env(frames))
        obs, _ = env.reset()
        assert obs.shape == (84, 84) and obs.dtype == np.uint8
        np.testing.assert_array_equal(obs, expected[0])
        for t in (1, 2):
            obs, *_ = env.step(0)
            np.testing.assert_array_equal(obs, expected[t])


def test_warp_frame_color_keeps_layout_and_values() -> None:
    hwc = random_frames((50, 40, 3), n=1)[0]
    expected = area_resize(hwc, 32, 32)
    obs, _ = WarpFrameWrapper(playback_env([hwc]), size=32, grayscale=False).reset()
    np.testing.assert_array_equal(obs, expected)
    chw = np.ascontiguousarray(hwc.transpose(2, 0, 1))
    obs, _ = WarpFrameWrapper(playback_env([chw]), size=32, grayscale=False).reset()
    assert obs.shape == (3, 32, 32)
    np.testing.assert_array_equal(obs, expected.transpose(2, 0, 1))


def test_warp_frame_on_gray_single_channel_and_rgba() -> None:
    gray = random_frames((50, 40))[0]
    obs, _ = WarpFrameWrapper(playback_env([gray]), size=20).reset()
    np.testing.assert_array_equal(obs, area_resize(gray, 20, 20))
    single = gray[:, :, None].copy()
    obs, _ = WarpFrameWrapper(playback_env([single]), size=20).reset()
    np.testing.assert_array_equal(obs, area_resize(gray, 20, 20))
    rgba = random_frames((50, 40, 4))[0]
    obs, _ = WarpFrameWrapper(playback_env([rgba]), size=20).reset()
    np.testing.assert_array_equal(obs, area_resize(np.asarray(cv2.cvtColor(rgba, cv2.COLOR_RGBA2GRAY)), 20, 20))


def test_warp_frame_on_a_dict_field_leaves_the_rest() -> None:
    env = WarpFrameWrapper(make_catalogue_env("dict_obs"), size=24, fields=["image"])
    obs, _ = env.reset(seed=3)
    raw, _ = make_catalogue_env("dict_obs").reset(seed=3)
    np.testing.assert_array_equal(obs["image"], area_resize(rgb_gray(raw["image"]), 24, 24))
    np.testing.assert_array_equal(obs["state"]["pos"], raw["state"]["pos"])


def test_warp_frame_on_real_pong() -> None:
    ale_py = pytest.importorskip("ale_py")
    gym.register_envs(ale_py)
    env = WarpFrameWrapper(gym.make("ALE/Pong-v5", frameskip=1, repeat_action_probability=0.0))
    obs, _ = env.reset(seed=0)
    for _ in range(5):
        obs, *_ = env.step(0)
    screen = env.unwrapped.ale.getScreenRGB()  # type: ignore[attr-defined]
    np.testing.assert_array_equal(obs, area_resize(rgb_gray(screen), 84, 84))
    env.close()


def test_warp_frame_errors() -> None:
    with pytest.raises(ShapeRuleError, match=r"warp_frame needs an image observation.*got \(5,\)"):
        update_shape((5,), 2, (1,), ["warp_frame"])
    with pytest.raises(ShapeRuleError, match=r"warp_frame\(grayscale=True\) needs 1, 3 \(RGB\) or 4.*got 6"):
        WarpFrameWrapper.new_shape((48, 64, 6), 2, (1,), channel_order="hwc")
    with pytest.raises(ConfigError, match="warp_frame: size must be a positive int; got 0"):
        WarpFrameWrapper(make_catalogue_env("image_hwc"), size=0)
    int_frames = spaces.Box(0, 255, (48, 64, 3), np.int64)
    with pytest.raises(TypeError, match=r"warp_frame processes frames with OpenCV.*got int64"):
        WarpFrameWrapper.new_space(int_frames, spaces.Discrete(2), spaces.Box(-1, 1, (1,)))
    with pytest.raises(TypeError, match="warp_frame needs a Box image observation"):
        WarpFrameWrapper.new_space(spaces.Discrete(5), spaces.Discrete(2), spaces.Box(-1, 1, (1,)))


# --- frame_resize ---------------------------------------------------------------------------


@pytest.mark.parametrize("interpolation", ["nearest", "linear", "area", "cubic"])
def test_frame_resize_matches_opencv_in_every_layout(interpolation: str) -> None:
    flag = {"nearest": cv2.INTER_NEAREST, "linear": cv2.INTER_LINEAR, "area": cv2.INTER_AREA}.get(
        interpolation, cv2.INTER_CUBIC
    )
    hwc = random_frames((48, 64, 3), n=1)[0]
    expected = np.asarray(cv2.resize(hwc, (20, 30), interpolation=flag))
    obs, _ = FrameResizeWrapper(playback_env([hwc]), height=30, width=20, interpolation=interpolation).reset()
    np.testing.assert_array_equal(obs, expected)
    chw = np.ascontiguousarray(hwc.transpose(2, 0, 1))
    obs, _ = FrameResizeWrapper(playback_env([chw]), height=30, width=20, interpolation=interpolation).reset()
    assert obs.shape == (3, 30, 20)
    np.testing.assert_array_equal(obs, expected.transpose(2, 0, 1))
    gray = hwc[:, :, 0].copy()
    obs, _ = FrameResizeWrapper(playback_env([gray]), height=30, width=20, interpolation=interpolation).reset()
    np.testing.assert_array_equal(obs, cv2.resize(gray, (20, 30), interpolation=flag))


def test_frame_resize_keeps_one_and_many_channels() -> None:
    single = random_frames((48, 64, 1), n=1)[0]
    obs, _ = FrameResizeWrapper(playback_env([single]), height=24, width=32).reset()
    assert obs.shape == (24, 32, 1)
    np.testing.assert_array_equal(obs[:, :, 0], area_resize(single[:, :, 0].copy(), 24, 32))
    many = random_frames((48, 64, 6), n=1)[0]  # more channels than OpenCV's area resize takes at once
    obs, _ = FrameResizeWrapper(playback_env([many]), height=24, width=32, channel_order="hwc").reset()
    assert obs.shape == (24, 32, 6)
    for c in range(6):
        np.testing.assert_array_equal(obs[:, :, c], area_resize(many[:, :, c].copy(), 24, 32))


def test_frame_resize_cubic_is_clipped_to_the_declared_range() -> None:
    board = (np.indices((16, 16)).sum(axis=0) % 2).astype(np.float32)  # a checkerboard in [0, 1]
    raw = np.asarray(cv2.resize(board, (40, 40), interpolation=cv2.INTER_CUBIC))
    assert raw.max() > 1.0 and raw.min() < 0.0  # the overshoot the wrapper must remove
    env = FrameResizeWrapper(playback_env([board], low=0.0, high=1.0), height=40, width=40, interpolation="cubic")
    obs, _ = env.reset()
    assert env.observation_space.contains(obs)
    np.testing.assert_array_equal(obs, np.clip(raw, 0.0, 1.0))


def test_frame_resize_errors() -> None:
    with pytest.raises(
        ConfigError, match="interpolation must be one of 'nearest', 'linear', 'area', 'cubic'; got 'bi'"
    ):
        FrameResizeWrapper(make_catalogue_env("image_hwc"), interpolation="bi")
    with pytest.raises(ShapeRuleError, match="ConfigError: frame_resize: width must be a positive int; got -3"):
        update_shape((48, 64, 3), 4, (1,), [("frame_resize", {"width": -3})])
    with pytest.raises(ShapeRuleError, match=r"frame_resize needs an image observation.*got \(5,\)"):
        update_shape((5,), 4, (1,), ["frame_resize"])


# --- gray_scale -----------------------------------------------------------------------------


def test_gray_scale_values() -> None:
    colors = np.zeros((2, 3, 3), dtype=np.uint8)
    colors[0, 0] = (255, 0, 0)
    colors[0, 1] = (0, 255, 0)
    colors[0, 2] = (0, 0, 255)
    colors[1, :] = (255, 255, 255)
    obs, _ = GrayScaleWrapper(playback_env([colors])).reset()
    # ITU-R BT.601 luma weights 0.299, 0.587, 0.114 (RGB order)
    np.testing.assert_array_equal(obs, [[76, 150, 29], [255, 255, 255]])
    frame = random_frames((48, 64, 3), n=1)[0]
    obs, _ = GrayScaleWrapper(playback_env([frame])).reset()
    np.testing.assert_array_equal(obs, rgb_gray(frame))


def test_gray_scale_keep_dim_in_both_layouts() -> None:
    frame = random_frames((48, 64, 3), n=1)[0]
    obs, _ = GrayScaleWrapper(playback_env([frame]), keep_dim=True).reset()
    assert obs.shape == (48, 64, 1)
    np.testing.assert_array_equal(obs[:, :, 0], rgb_gray(frame))
    chw = np.ascontiguousarray(frame.transpose(2, 0, 1))
    obs, _ = GrayScaleWrapper(playback_env([chw]), keep_dim=True).reset()
    assert obs.shape == (1, 48, 64)
    np.testing.assert_array_equal(obs[0], rgb_gray(frame))


def test_gray_scale_needs_three_channels() -> None:
    with pytest.raises(ShapeRuleError, match=r"gray_scale needs an RGB frame with 3 channels; got shape \(48, 64\)"):
        GrayScaleWrapper(make_catalogue_env("image_gray"))
    with pytest.raises(ShapeRuleError, match=r"3 channels; got shape \(48, 64, 4\)"):
        update_shape((48, 64, 4), 4, (1,), ["gray_scale"])
    with pytest.raises(ShapeRuleError, match=r"gray_scale needs an image observation.*got \(5,\)"):
        update_shape((5,), 4, (1,), ["gray_scale"])
