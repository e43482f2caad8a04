"""Wrappers that cut a window out of frames: ``frame_crop`` (fixed) and ``episodic_random_frame_crop``.

Layout, dtype and bounds conventions are those of :mod:`ding.envs.env_wrappers.image`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.env_wrappers.arguments import ChannelOrder, PositiveInt
from ding.envs.env_wrappers.base import (
    DingObservationWrapper,
    DingWrapper,
    SpaceTriple,
    episode_began,
    register_wrapper,
)
from ding.envs.env_wrappers.fields import Fields, map_fields
from ding.envs.env_wrappers.image import (
    FieldPath,
    Layout,
    field_layouts,
    image_box,
    image_dims,
    image_layout,
    image_shape,
    leaf_spaces,
    map_paths,
    value_range_box,
)
from ding.errors import ShapeRuleError

# ---------------------------------------------------------------------------------------------
# Windows in a frame
# ---------------------------------------------------------------------------------------------


def _window_index(layout: Layout, top: int, left: int, height: int, width: int) -> tuple[slice, ...]:
    """The index cutting the ``height`` x ``width`` window at (``top``, ``left``) out of a frame in ``layout``."""
    rows, cols = slice(top, top + height), slice(left, left + width)
    if layout == "hw":
        return (rows, cols)
    return (rows, cols, slice(None)) if layout == "hwc" else (slice(None), rows, cols)


# ---------------------------------------------------------------------------------------------
# frame_crop
# ---------------------------------------------------------------------------------------------


def _crop_index(
    shape: tuple[int, ...], top: int, left: int, height: int | None, width: int | None, channel_order: str
) -> tuple[tuple[int, ...], tuple[slice, ...]]:
    """The cropped shape and the index that cuts it out of a frame of ``shape``."""
    who = "frame_crop"
    layout = image_layout(shape, channel_order, who)
    frame_h, frame_w, channels = image_dims(shape, layout)
    rows = frame_h - top if height is None else height
    cols = frame_w - left if width is None else width
    if top < 0 or left < 0 or rows <= 0 or cols <= 0 or top + rows > frame_h or left + cols > frame_w:
        raise ShapeRuleError(
            f"{who}: the rectangle top={top}, left={left}, height={height}, width={width} "
            f"(rows {top}:{top + rows}, columns {left}:{left + cols}) is outside the {frame_h}x{frame_w} frame "
            f"of shape {shape}"
        )
    index = _window_index(layout, top, left, rows, cols)
    return image_shape(layout, rows, cols, channels), index


@register_wrapper("frame_crop")
class FrameCropWrapper(DingObservationWrapper):
    """Cut the rectangle at (``top``, ``left``) of ``height`` x ``width`` out of every frame, keeping the layout.

    ``height`` or ``width`` None means "to the frame's edge". Any dtype; the bounds are cropped alike.

    Example:
        >>> FrameCropWrapper.new_shape((210, 160, 3), 6, (1,), top=34, height=160)
        ((160, 160, 3), 6, (1,))
        >>> FrameCropWrapper.new_shape((3, 48, 64), 4, (1,), left=8, width=48)
        ((3, 48, 48), 4, (1,))
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        top: int = 0,
        left: int = 0,
        height: PositiveInt | None = None,
        width: PositiveInt | None = None,
        channel_order: ChannelOrder = "auto",
        fields: Fields = None,
    ) -> SpaceTriple:
        def cropped(space: spaces.Space[Any]) -> spaces.Box:
            box = image_box(space, "frame_crop")
            shape, index = _crop_index(box.shape, top, left, height, width, channel_order)
            return spaces.Box(low=box.low[index], high=box.high[index], shape=shape, dtype=box.dtype)

        return map_fields(obs_space, fields, cropped), act_space, rew_space

    def _setup(self) -> None:
        self._index = {}
        for path, sub in leaf_spaces(self.env.observation_space, self.fields).items():
            shape: tuple[int, ...] = sub.shape  # type: ignore[assignment]
            self._index[path] = _crop_index(shape, self.top, self.left, self.height, self.width, self.channel_order)[1]

    def _crop(self, path: FieldPath, frame: Any) -> np.ndarray:
        return np.ascontiguousarray(np.asarray(frame)[self._index[path]])

    def observation(self, obs: Any) -> Any:
        return map_paths(obs, self.fields, self._crop)


# ---------------------------------------------------------------------------------------------
# episodic_random_frame_crop
# ---------------------------------------------------------------------------------------------


def _random_crop_shape(shape: tuple[int, ...], height: int, width: int, channel_order: str) -> tuple[int, ...]:
    who = "episodic_random_frame_crop"
    layout = image_layout(shape, channel_order, who)
    frame_h, frame_w, channels = image_dims(shape, layout)
    if height > frame_h or width > frame_w:
        raise ShapeRuleError(f"{who}: a {height}x{width} crop does not fit in the {frame_h}x{frame_w} frame {shape}")
    return image_shape(layout, height, width, channels)


def _check_shared_crop(frame_shapes: list[Any], share_cropping: bool, channel_order: str) -> None:
    """With ``share_cropping``, all cropped frames must have one H x W so one offset fits them all."""
    if not share_cropping or len(frame_shapes) < 2:
        return
    sizes = set()
    for shape in frame_shapes:
        layout = image_layout(shape, channel_order, "episodic_random_frame_crop")
        sizes.add(image_dims(shape, layout)[:2])
    if len(sizes) > 1:
        raise ShapeRuleError(
            f"episodic_random_frame_crop(share_cropping=True) needs fields of one frame size; got sizes "
            f"{sorted(sizes)}; pass share_cropping=False to crop each at its own position"
        )


@register_wrapper("episodic_random_frame_crop")
class EpisodicRandomFrameCropWrapper(DingWrapper):
    """Crop a ``height`` x ``width`` window at a random position drawn at each reset and kept for the episode.

    A data augmentation (ALF's ``EpisodicRandomFrameCrop``): every frame of an episode is cut at the same
    offset, so motion within the episode is undistorted, while episodes see shifted views. The offset
    is drawn from ``self.np_random`` and hence reproducible under ``reset(seed=...)``.

    ``height`` and ``width`` are required: ALF states the crop as a fraction of the frame (0.8 by
    default), here the output size is given directly so the model's input size appears in the config
    and the shape rule needs nothing else (ALF's default fraction on an 84x84 frame is about 67x67).
    With ``share_cropping`` (ALF's default) all ``fields`` are cut at one offset — useful for aligned
    images such as RGB and depth — and must have the same H x W. Layout is kept; the bounds become
    the input's overall value range since the window moves.

    Example:
        >>> EpisodicRandomFrameCropWrapper.new_shape((3, 48, 64), 4, (1,), height=40, width=56)
        ((3, 40, 56), 4, (1,))
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        height: PositiveInt,
        width: PositiveInt,
        share_cropping: bool = True,
        channel_order: ChannelOrder = "auto",
        fields: Fields = None,
    ) -> SpaceTriple:
        who = "episodic_random_frame_crop"
        boxes = [image_box(sub, who) for sub in leaf_spaces(obs_space, fields).values()]
        _check_shared_crop([box.shape for box in boxes], share_cropping, channel_order)

        def cropped(space: spaces.Space[Any]) -> spaces.Box:
            box = image_box(space, who)
            return value_range_box(box, _random_crop_shape(box.shape, height, width, channel_order))

        return map_fields(obs_space, fields, cropped), act_space, rew_space

    def _setup(self) -> None:
        who = "episodic_random_frame_crop"
        self._layouts = field_layouts(self.env.observation_space, self.fields, self.channel_order, who)
        self._sizes = {
            path: image_dims(sub.shape, self._layouts[path])[:2]
            for path, sub in leaf_spaces(self.env.observation_space, self.fields).items()
        }
        self._index: dict[FieldPath, tuple[slice, ...]] | None = None

    def _draw_offsets(self) -> dict[FieldPath, tuple[slice, ...]]:
        index: dict[FieldPath, tuple[slice, ...]] = {}
        offset: tuple[int, int] | None = None
        for path, (frame_h, frame_w) in self._sizes.items():
            if offset is None or not self.share_cropping:
                top = int(self.np_random.integers(0, frame_h - self.height + 1))
                left = int(self.np_random.integers(0, frame_w - self.width + 1))
                offset = (top, left)
            index[path] = _window_index(self._layouts[path], offset[0], offset[1], self.height, self.width)
        return index

    def _crop(self, path: FieldPath, frame: Any) -> np.ndarray:
        if self._index is None:
            self._index = self._draw_offsets()
        return np.ascontiguousarray(np.asarray(frame)[self._index[path]])

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._index = self._draw_offsets()
        return map_paths(obs, self.fields, self._crop), info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if episode_began(info) is not None:  # a new episode: a new offset, as at reset
            self._index = self._draw_offsets()
        return map_paths(obs, self.fields, self._crop), reward, terminated, truncated, info
