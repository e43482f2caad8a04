"""Behaviour of the image wrappers: pixel values, layouts, ordering, randomness and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.env_wrappers import apply_wrappers, update_shape, update_space
from ding.envs.env_wrappers.image import (
    EpisodicRandomFrameCropWrapper,
    FrameCropWrapper,
    FrameFlipWrapper,
    FrameResizeWrapper,
    FrameStackWrapper,
    GrayScaleWrapper,
    ImageChannelFirstWrapper,
    ObsTransposeWrapper,
    WarpFrameWrapper,
    _image_layout,
)
from ding.errors import ConfigError, ShapeRuleError
from tests.envs.env_wrappers.catalogue import make_catalogue_env


class FnEnv(gym.Env[Any, Any]):
    """Observation at step ``t`` (0 after reset) is ``frame_fn(t)``; episodes end after ``episode_len`` steps."""

    def __init__(
        self, observation_space: spaces.Space[Any], frame_fn: Callable[[int], Any], episode_len: int = 1000
    ) -> None:
        self.observation_space = observation_space
        self.action_space = spaces.Discrete(2)
        self.frame_fn = frame_fn
        self.episode_len = episode_len
        self.t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return self.frame_fn(0), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.t += 1
        return self.frame_fn(self.t), 0.0, self.t >= self.episode_len, False, {}


def _frames(shape: tuple[int, ...], n: int = 3, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, size=shape, dtype=np.uint8) for _ in range(n)]


def _playback(frames: list[np.ndarray], low: Any = 0, high: Any = 255) -> FnEnv:
    space = spaces.Box(low, high, frames[0].shape, frames[0].dtype)
    return FnEnv(space, lambda t: frames[t % len(frames)])


def _area(frame: np.ndarray, h: int, w: int) -> np.ndarray:
    return np.asarray(cv2.resize(frame, (w, h), interpolation=cv2.INTER_AREA))


def _gray(frame: np.ndarray) -> np.ndarray:
    return np.asarray(cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY))


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
    assert _image_layout(shape, order) == layout


def test_image_layout_errors() -> None:
    with pytest.raises(ShapeRuleError, match=r"needs an image observation of shape \(H, W\).*got \(5,\)"):
        _image_layout((5,))
    with pytest.raises(ShapeRuleError, match=r"got \(2, 48, 64, 3\)"):
        _image_layout((2, 48, 64, 3))
    with pytest.raises(ShapeRuleError, match=r"channel axis of image shape \(48, 64, 5\).*channel_order='hwc'"):
        _image_layout((48, 64, 5))
    with pytest.raises(ShapeRuleError, match=r"fields=\[\.\.\.\]"):
        _image_layout({"image": (48, 64, 3)})
    with pytest.raises(ConfigError, match=r"channel_order must be one of 'auto', 'hwc', 'chw'; got 'nhwc'"):
        _image_layout((48, 64, 3), "nhwc")


# --- warp_frame -----------------------------------------------------------------------------


def test_warp_frame_matches_opencv_for_hwc_and_chw() -> None:
    hwc = _frames((50, 40, 3))
    expected = [_area(_gray(f), 84, 84) for f in hwc]
    chw = [np.ascontiguousarray(f.transpose(2, 0, 1)) for f in hwc]
    for frames in (hwc, chw):
        env = WarpFrameWrapper(_playback(frames))
        obs, _ = env.reset()
        assert obs.shape == (84, 84) and obs.dtype == np.uint8
        np.testing.assert_array_equal(obs, expected[0])
        for t in (1, 2):
            obs, *_ = env.step(0)
            np.testing.assert_array_equal(obs, expected[t])


def test_warp_frame_color_keeps_layout_and_values() -> None:
    hwc = _frames((50, 40, 3), n=1)[0]
    expected = _area(hwc, 32, 32)
    obs, _ = WarpFrameWrapper(_playback([hwc]), size=32, grayscale=False).reset()
    np.testing.assert_array_equal(obs, expected)
    chw = np.ascontiguousarray(hwc.transpose(2, 0, 1))
    obs, _ = WarpFrameWrapper(_playback([chw]), size=32, grayscale=False).reset()
    assert obs.shape == (3, 32, 32)
    np.testing.assert_array_equal(obs, expected.transpose(2, 0, 1))


def test_warp_frame_on_gray_single_channel_and_rgba() -> None:
    gray = _frames((50, 40))[0]
    obs, _ = WarpFrameWrapper(_playback([gray]), size=20).reset()
    np.testing.assert_array_equal(obs, _area(gray, 20, 20))
    single = gray[:, :, None].copy()
    obs, _ = WarpFrameWrapper(_playback([single]), size=20).reset()
    np.testing.assert_array_equal(obs, _area(gray, 20, 20))
    rgba = _frames((50, 40, 4))[0]
    obs, _ = WarpFrameWrapper(_playback([rgba]), size=20).reset()
    np.testing.assert_array_equal(obs, _area(np.asarray(cv2.cvtColor(rgba, cv2.COLOR_RGBA2GRAY)), 20, 20))


def test_warp_frame_on_a_dict_field_leaves_the_rest() -> None:
    env = WarpFrameWrapper(make_catalogue_env("dict_obs"), size=24, fields=["image"])
    obs, _ = env.reset(seed=3)
    raw, _ = make_catalogue_env("dict_obs").reset(seed=3)
    np.testing.assert_array_equal(obs["image"], _area(_gray(raw["image"]), 24, 24))
    np.testing.assert_array_equal(obs["state"]["pos"], raw["state"]["pos"])


def test_warp_frame_on_real_pong() -> None:
    ale_py = pytest.importorskip("ale_py")
    gym.register_envs(ale_py)
    env = WarpFrameWrapper(gym.make("ALE/Pong-v5", frameskip=1, repeat_action_probability=0.0))
    obs, _ = env.reset(seed=0)
    for _ in range(5):
        obs, *_ = env.step(0)
    screen = env.unwrapped.ale.getScreenRGB()  # type: ignore[attr-defined]
    np.testing.assert_array_equal(obs, _area(_gray(screen), 84, 84))
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
    hwc = _frames((48, 64, 3), n=1)[0]
    expected = np.asarray(cv2.resize(hwc, (20, 30), interpolation=flag))
    obs, _ = FrameResizeWrapper(_playback([hwc]), height=30, width=20, interpolation=interpolation).reset()
    np.testing.assert_array_equal(obs, expected)
    chw = np.ascontiguousarray(hwc.transpose(2, 0, 1))
    obs, _ = FrameResizeWrapper(_playback([chw]), height=30, width=20, interpolation=interpolation).reset()
    assert obs.shape == (3, 30, 20)
    np.testing.assert_array_equal(obs, expected.transpose(2, 0, 1))
    gray = hwc[:, :, 0].copy()
    obs, _ = FrameResizeWrapper(_playback([gray]), height=30, width=20, interpolation=interpolation).reset()
    np.testing.assert_array_equal(obs, cv2.resize(gray, (20, 30), interpolation=flag))


def test_frame_resize_keeps_one_and_many_channels() -> None:
    single = _frames((48, 64, 1), n=1)[0]
    obs, _ = FrameResizeWrapper(_playback([single]), height=24, width=32).reset()
    assert obs.shape == (24, 32, 1)
    np.testing.assert_array_equal(obs[:, :, 0], _area(single[:, :, 0].copy(), 24, 32))
    many = _frames((48, 64, 6), n=1)[0]  # more channels than OpenCV's area resize takes at once
    obs, _ = FrameResizeWrapper(_playback([many]), height=24, width=32, channel_order="hwc").reset()
    assert obs.shape == (24, 32, 6)
    for c in range(6):
        np.testing.assert_array_equal(obs[:, :, c], _area(many[:, :, c].copy(), 24, 32))


def test_frame_resize_cubic_is_clipped_to_the_declared_range() -> None:
    board = (np.indices((16, 16)).sum(axis=0) % 2).astype(np.float32)  # a checkerboard in [0, 1]
    raw = np.asarray(cv2.resize(board, (40, 40), interpolation=cv2.INTER_CUBIC))
    assert raw.max() > 1.0 and raw.min() < 0.0  # the overshoot the wrapper must remove
    env = FrameResizeWrapper(_playback([board], low=0.0, high=1.0), height=40, width=40, interpolation="cubic")
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


# --- frame_crop -----------------------------------------------------------------------------


def test_frame_crop_content_in_every_layout() -> None:
    hwc = _frames((48, 64, 3), n=2)
    env = FrameCropWrapper(_playback(hwc), top=4, left=8, height=30, width=40)
    obs, _ = env.reset()
    np.testing.assert_array_equal(obs, hwc[0][4:34, 8:48])
    obs, *_ = env.step(0)
    np.testing.assert_array_equal(obs, hwc[1][4:34, 8:48])
    chw = [np.ascontiguousarray(f.transpose(2, 0, 1)) for f in hwc]
    obs, _ = FrameCropWrapper(_playback(chw), top=4, left=8, height=30, width=40).reset()
    np.testing.assert_array_equal(obs, chw[0][:, 4:34, 8:48])
    gray = [f[:, :, 1].copy() for f in hwc]
    obs, _ = FrameCropWrapper(_playback(gray), top=10, left=20).reset()  # None: to the edges
    assert obs.shape == (38, 44)
    np.testing.assert_array_equal(obs, gray[0][10:, 20:])


def test_frame_crop_crops_per_pixel_bounds() -> None:
    low = np.arange(48 * 64, dtype=np.float32).reshape(48, 64)
    space = FrameCropWrapper.new_space(
        spaces.Box(low, low + 1), spaces.Discrete(2), spaces.Box(-1, 1, (1,)), top=2, left=3, height=5, width=6
    )[0]
    assert isinstance(space, spaces.Box)
    np.testing.assert_array_equal(space.low, low[2:7, 3:9])


def test_frame_crop_rectangle_outside_the_frame() -> None:
    with pytest.raises(ShapeRuleError, match=r"top=40, left=0, height=10.*rows 40:50.*outside the 48x64 frame"):
        update_shape((48, 64, 3), 4, (1,), [("frame_crop", {"top": 40, "height": 10})])
    with pytest.raises(ShapeRuleError, match=r"columns 60:68.*outside the 48x64 frame of shape \(3, 48, 64\)"):
        update_shape((3, 48, 64), 4, (1,), [("frame_crop", {"left": 60, "width": 8})])
    with pytest.raises(ShapeRuleError, match=r"top=-1.*outside the 48x64 frame"):
        FrameCropWrapper(make_catalogue_env("image_gray"), top=-1)
    with pytest.raises(ShapeRuleError, match=r"top=48.*outside the 48x64 frame"):
        FrameCropWrapper(make_catalogue_env("image_gray"), top=48)
    with pytest.raises(ConfigError, match=r"frame_crop: height must be a positive int; got 0"):
        FrameCropWrapper(make_catalogue_env("image_gray"), height=0)
    with pytest.raises(ConfigError, match=r"frame_crop: left must be an int; got '3'"):
        FrameCropWrapper(make_catalogue_env("image_gray"), left="3")  # type: ignore[arg-type]


# --- gray_scale -----------------------------------------------------------------------------


def test_gray_scale_values() -> None:
    colors = np.zeros((2, 3, 3), dtype=np.uint8)
    colors[0, 0] = (255, 0, 0)
    colors[0, 1] = (0, 255, 0)
    colors[0, 2] = (0, 0, 255)
    colors[1, :] = (255, 255, 255)
    obs, _ = GrayScaleWrapper(_playback([colors])).reset()
    # ITU-R BT.601 luma weights 0.299, 0.587, 0.114 (RGB order)
    np.testing.assert_array_equal(obs, [[76, 150, 29], [255, 255, 255]])
    frame = _frames((48, 64, 3), n=1)[0]
    obs, _ = GrayScaleWrapper(_playback([frame])).reset()
    np.testing.assert_array_equal(obs, _gray(frame))


def test_gray_scale_keep_dim_in_both_layouts() -> None:
    frame = _frames((48, 64, 3), n=1)[0]
    obs, _ = GrayScaleWrapper(_playback([frame]), keep_dim=True).reset()
    assert obs.shape == (48, 64, 1)
    np.testing.assert_array_equal(obs[:, :, 0], _gray(frame))
    chw = np.ascontiguousarray(frame.transpose(2, 0, 1))
    obs, _ = GrayScaleWrapper(_playback([chw]), keep_dim=True).reset()
    assert obs.shape == (1, 48, 64)
    np.testing.assert_array_equal(obs[0], _gray(frame))


def test_gray_scale_needs_three_channels() -> None:
    with pytest.raises(ShapeRuleError, match=r"gray_scale needs an RGB frame with 3 channels; got shape \(48, 64\)"):
        GrayScaleWrapper(make_catalogue_env("image_gray"))
    with pytest.raises(ShapeRuleError, match=r"3 channels; got shape \(48, 64, 4\)"):
        update_shape((48, 64, 4), 4, (1,), ["gray_scale"])
    with pytest.raises(ShapeRuleError, match=r"gray_scale needs an image observation.*got \(5,\)"):
        update_shape((5,), 4, (1,), ["gray_scale"])


# --- image_channel_first and obs_transpose --------------------------------------------------


def test_image_channel_first_values_and_bounds() -> None:
    frame = _frames((48, 64, 3), n=1)[0]
    low = np.zeros((48, 64, 3), dtype=np.uint8)
    low[:, :, 1] = 7
    env = ImageChannelFirstWrapper(_playback([np.maximum(frame, low)], low=low))
    obs, _ = env.reset()
    np.testing.assert_array_equal(obs, np.maximum(frame, low).transpose(2, 0, 1))
    assert obs.flags["C_CONTIGUOUS"]
    bounds = env.observation_space
    assert isinstance(bounds, spaces.Box)
    assert (bounds.low[1] == 7).all() and (bounds.low[0] == 0).all()
    gray = frame[:, :, 0].copy()
    obs, _ = ImageChannelFirstWrapper(_playback([gray])).reset()
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
    first, second = _frames((48, 64, 3), n=1)[0], _frames((20, 30, 1), n=1)[0]
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
    frame = _frames((48, 64, 3), n=1)[0]
    obs, _ = ObsTransposeWrapper(_playback([frame])).reset()
    np.testing.assert_array_equal(obs, frame.transpose(2, 0, 1))
    assert update_shape(((48, 64, 3), (84, 84)), 4, (1,), ["obs_transpose"])[0] == ((3, 48, 64), (1, 84, 84))
    with pytest.raises(ShapeRuleError, match=r"obs_transpose needs a channels-last.*\(3, 48, 64\) is already"):
        ObsTransposeWrapper(make_catalogue_env("image_chw"))
    with pytest.raises(ShapeRuleError, match=r"obs_transpose needs an image observation.*got \(5,\)"):
        update_shape(((48, 64, 3), (5,)), 4, (1,), ["obs_transpose"])


# --- frame_flip -----------------------------------------------------------------------------


def test_frame_flip_directions_in_every_layout() -> None:
    hwc = _frames((6, 8, 3), n=1)[0]
    obs, _ = FrameFlipWrapper(_playback([hwc])).reset()
    np.testing.assert_array_equal(obs, hwc[:, ::-1])
    obs, _ = FrameFlipWrapper(_playback([hwc]), horizontal=False, vertical=True).reset()
    np.testing.assert_array_equal(obs, hwc[::-1])
    chw = np.ascontiguousarray(hwc.transpose(2, 0, 1))
    obs, _ = FrameFlipWrapper(_playback([chw]), vertical=True).reset()
    np.testing.assert_array_equal(obs, chw[:, ::-1, ::-1])
    assert obs.flags["C_CONTIGUOUS"]
    gray = hwc[:, :, 2].copy()
    obs, _ = FrameFlipWrapper(_playback([gray])).reset()
    np.testing.assert_array_equal(obs, gray[:, ::-1])
    obs, _ = FrameFlipWrapper(_playback([gray]), horizontal=False).reset()
    np.testing.assert_array_equal(obs, gray)


def test_frame_flip_mirrors_per_pixel_bounds() -> None:
    low = np.zeros((4, 5), dtype=np.uint8)
    low[:, 0] = 200  # the left column is always bright
    env = FrameFlipWrapper(_playback([np.full((4, 5), 220, np.uint8)], low=low))
    obs, _ = env.reset()
    bounds = env.observation_space
    assert isinstance(bounds, spaces.Box)
    assert (bounds.low[:, -1] == 200).all() and bounds.contains(obs)
    with pytest.raises(ShapeRuleError, match=r"frame_flip needs an image observation.*got \(5,\)"):
        FrameFlipWrapper(make_catalogue_env("vector"))


# --- episodic_random_frame_crop -------------------------------------------------------------


def _grid_env(height: int = 30, width: int = 40, episode_len: int = 1000) -> FnEnv:
    """HWC frames whose channel 0 is the row, channel 1 the column and channel 2 the step counter."""
    rows, cols = np.indices((height, width))

    def frame(t: int) -> np.ndarray:
        return np.stack([rows, cols, np.full_like(rows, t % 256)], axis=-1).astype(np.uint8)

    return FnEnv(spaces.Box(0, 255, (height, width, 3), np.uint8), frame, episode_len)


def test_random_crop_is_fixed_within_an_episode() -> None:
    env = EpisodicRandomFrameCropWrapper(_grid_env(), height=20, width=25)
    obs, _ = env.reset(seed=1)
    top, left = int(obs[0, 0, 0]), int(obs[0, 0, 1])
    rows, cols = np.indices((30, 40))
    for t in range(1, 6):
        obs, *_ = env.step(0)
        assert obs.shape == (20, 25, 3)
        np.testing.assert_array_equal(obs[:, :, 0], rows[top : top + 20, left : left + 25])
        np.testing.assert_array_equal(obs[:, :, 1], cols[top : top + 20, left : left + 25])
        assert (obs[:, :, 2] == t).all()


def _episode_offsets(seed: int, episodes: int) -> list[tuple[int, int]]:
    env = EpisodicRandomFrameCropWrapper(_grid_env(), height=20, width=25)
    offsets = []
    for i in range(episodes):
        obs, _ = env.reset(seed=seed if i == 0 else None)
        offsets.append((int(obs[0, 0, 0]), int(obs[0, 0, 1])))
    return offsets


def test_random_crop_varies_across_episodes_and_is_seeded() -> None:
    offsets = _episode_offsets(seed=7, episodes=12)
    assert len(set(offsets)) > 3
    assert all(0 <= top <= 10 and 0 <= left <= 15 for top, left in offsets)
    assert _episode_offsets(seed=7, episodes=12) == offsets
    assert _episode_offsets(seed=8, episodes=12) != offsets


def test_random_crop_keeps_chw_layout() -> None:
    grid = _grid_env()
    chw_space = spaces.Box(0, 255, (3, 30, 40), np.uint8)
    env = EpisodicRandomFrameCropWrapper(
        FnEnv(chw_space, lambda t: np.ascontiguousarray(grid.frame_fn(t).transpose(2, 0, 1))), height=10, width=12
    )
    obs, _ = env.reset(seed=0)
    assert obs.shape == (3, 10, 12)
    top, left = int(obs[0, 0, 0]), int(obs[1, 0, 0])
    np.testing.assert_array_equal(obs[0], np.indices((30, 40))[0][top : top + 10, left : left + 12])


def _two_image_env(second_shape: tuple[int, int, int]) -> FnEnv:
    grid = _grid_env()
    space = spaces.Dict(
        {"rgb": grid.observation_space, "depth": spaces.Box(0, 255, second_shape, np.uint8)},
    )
    rows, cols = np.indices(second_shape[:2])
    depth = np.stack([rows, cols, rows], axis=-1).astype(np.uint8)
    return FnEnv(space, lambda t: {"rgb": grid.frame_fn(t), "depth": depth})


def test_random_crop_shares_the_offset_across_fields() -> None:
    env = EpisodicRandomFrameCropWrapper(_two_image_env((30, 40, 3)), height=10, width=10, fields=["rgb", "depth"])
    for seed in range(5):
        obs, _ = env.reset(seed=seed)
        np.testing.assert_array_equal(obs["rgb"][:, :, :2], obs["depth"][:, :, :2])
    separate = EpisodicRandomFrameCropWrapper(
        _two_image_env((20, 20, 3)), height=10, width=10, share_cropping=False, fields=["rgb", "depth"]
    )
    obs, _ = separate.reset(seed=0)
    assert obs["rgb"].shape == obs["depth"].shape == (10, 10, 3)
    with pytest.raises(ShapeRuleError, match=r"share_cropping=True\) needs fields of one frame size.*\(20, 20\)"):
        EpisodicRandomFrameCropWrapper(_two_image_env((20, 20, 3)), height=10, width=10, fields=["rgb", "depth"])


def test_random_crop_errors() -> None:
    with pytest.raises(ShapeRuleError, match=r"a 50x10 crop does not fit in the 48x64 frame \(48, 64, 3\)"):
        update_shape((48, 64, 3), 4, (1,), [("episodic_random_frame_crop", {"height": 50, "width": 10})])
    with pytest.raises(ConfigError, match="'episodic_random_frame_crop' needs argument 'height'"):
        update_shape((48, 64, 3), 4, (1,), ["episodic_random_frame_crop"])
    with pytest.raises(ConfigError, match="width must be a positive int; got 0"):
        EpisodicRandomFrameCropWrapper(make_catalogue_env("image_hwc"), height=10, width=0)
    with pytest.raises(ShapeRuleError, match=r"episodic_random_frame_crop needs an image observation.*got \(5,\)"):
        EpisodicRandomFrameCropWrapper(make_catalogue_env("vector"), height=2, width=2)


# --- frame_stack ----------------------------------------------------------------------------


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
    with pytest.raises(ShapeRuleError, match=r"frame_stack needs an array \(Box\) observation.*got 6"):
        update_shape(6, 2, (1,), ["frame_stack"])
    with pytest.raises(ShapeRuleError, match=r"got \{'image': \(48, 64, 3\)\}.*fields=\[\.\.\.\]"):
        update_shape({"image": (48, 64, 3)}, 2, (1,), ["frame_stack"])


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
    hwc = _frames((50, 40, 3), n=3)
    chw = [np.ascontiguousarray(f.transpose(2, 0, 1)) for f in hwc]
    chain = [("frame_crop", {"top": 5, "height": 40}), ("warp_frame", {"size": 16}), ("frame_stack", {"n_frames": 2})]
    results = []
    for frames in (hwc, chw):
        env = apply_wrappers(_playback(frames), chain)
        env.reset()
        results.append(env.step(0)[0])
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0][1], _area(_gray(hwc[1][5:45]), 16, 16))
