"""Behaviour of frame_crop and episodic_random_frame_crop: content, bounds, randomness and errors."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.env_wrappers import update_shape
from ding.envs.env_wrappers.image_crop import EpisodicRandomFrameCropWrapper, FrameCropWrapper
from ding.errors import ConfigError, ShapeRuleError
from tests.envs.env_wrappers.catalogue import make_catalogue_env
from tests.envs.env_wrappers.image_envs import FnEnv, playback_env, random_frames

# --- frame_crop -----------------------------------------------------------------------------


def test_frame_crop_content_in_every_layout() -> None:
    hwc = random_frames((48, 64, 3), n=2)
    env = FrameCropWrapper(playback_env(hwc), top=4, left=8, height=30, width=40)
    obs, _ = env.reset()
    np.testing.assert_array_equal(obs, hwc[0][4:34, 8:48])
    obs, *_ = env.step(0)
    np.testing.assert_array_equal(obs, hwc[1][4:34, 8:48])
    chw = [np.ascontiguousarray(f.transpose(2, 0, 1)) for f in hwc]
    obs, _ = FrameCropWrapper(playback_env(chw), top=4, left=8, height=30, width=40).reset()
    np.testing.assert_array_equal(obs, chw[0][:, 4:34, 8:48])
    gray = [f[:, :, 1].copy() for f in hwc]
    obs, _ = FrameCropWrapper(playback_env(gray), top=10, left=20).reset()  # None: to the edges
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
    with pytest.raises(ConfigError, match=r"frame_crop: height must be a positive int or None; got 0"):
        FrameCropWrapper(make_catalogue_env("image_gray"), height=0)
    with pytest.raises(ConfigError, match=r"frame_crop: left must be an int; got '3'"):
        FrameCropWrapper(make_catalogue_env("image_gray"), left="3")  # type: ignore[arg-type]


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
