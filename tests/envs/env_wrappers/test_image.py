"""Behaviour of the shared image helpers, and of image wrapper chains across modules."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.env_wrappers import apply_wrappers, update_shape, update_space
from ding.envs.env_wrappers.image import image_layout
from ding.errors import ConfigError, ShapeRuleError
from tests.envs.env_wrappers.image_envs import area_resize, playback_env, random_frames, rgb_gray

# --- layout ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "order", "layout"),
    [
        ((84, 84), "auto", "hw"),
        ((84, 84), "chw", "hw"),
        ((210, 160, 3), "auto", "hwc"),
        ((48, 64, 1), "auto", "hwc"),
        ((48, 64, 4), "auto", "hwc"),
        ((3, 48, 64), "auto", "chw"),
        ((1, 84, 84), "auto", "chw"),
        ((3, 48, 3), "auto", "hwc"),
        ((3, 48, 3), "chw", "chw"),
        ((48, 64, 7), "hwc", "hwc"),
    ],
)
def test_image_layout(shape: tuple[int, ...], order: str, layout: str) -> None:
    assert image_layout(shape, order) == layout


def test_image_layout_errors() -> None:
    with pytest.raises(ShapeRuleError, match=r"needs an image observation of shape \(H, W\).*got \(5,\)"):
        image_layout((5,))
    with pytest.raises(ShapeRuleError, match=r"got \(2, 48, 64, 3\)"):
        image_layout((2, 48, 64, 3))
    with pytest.raises(ShapeRuleError, match=r"channel axis of image shape \(48, 64, 5\).*channel_order='hwc'"):
        image_layout((48, 64, 5))
    with pytest.raises(ShapeRuleError, match=r"fields=\[\.\.\.\]"):
        image_layout({"image": (48, 64, 3)})
    with pytest.raises(ConfigError, match=r"channel_order must be one of 'auto', 'hwc', 'chw'; got 'nhwc'"):
        image_layout((48, 64, 3), "nhwc")


# --- chains ---------------------------------------------------------------------------------


def test_atari_default_shape() -> None:
    assert update_shape((210, 160, 3), 6, (1,), "atari_default") == ((4, 84, 84), 6, (1,))


def test_atari_image_chain_on_hwc_and_chw() -> None:
    chain: list[Any] = [("warp_frame", {"size": 84}), "scaled_float_frame", ("frame_stack", {"n_frames": 4})]
    assert update_shape((210, 160, 3), 6, (1,), chain) == ((4, 84, 84), 6, (1,))
    assert update_shape((3, 210, 160), 6, (1,), chain) == ((4, 84, 84), 6, (1,))
    color: list[Any] = [("warp_frame", {"grayscale": False, "size": 64}), ("frame_stack", {"n_frames": 2})]
    assert update_shape((3, 210, 160), 6, (1,), color) == ((2, 3, 64, 64), 6, (1,))
    space = update_space(spaces.Box(0, 255, (3, 210, 160), np.uint8), spaces.Discrete(6), None, chain).observation
    assert space == spaces.Box(0.0, 1.0, (4, 84, 84), np.float32)


def test_image_chain_on_chw_frames_gives_the_same_pixels_as_on_hwc() -> None:
    hwc = random_frames((50, 40, 3), n=3)
    chw = [np.ascontiguousarray(f.transpose(2, 0, 1)) for f in hwc]
    chain = [("frame_crop", {"top": 5, "height": 40}), ("warp_frame", {"size": 16}), ("frame_stack", {"n_frames": 2})]
    results = []
    for frames in (hwc, chw):
        env = apply_wrappers(playback_env(frames), chain)
        env.reset()
        results.append(env.step(0)[0])
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0][1], area_resize(rgb_gray(hwc[1][5:45]), 16, 16))
