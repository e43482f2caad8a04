"""Wrappers that compute new pixel values: ``scaled_float_frame``, ``warp_frame``, ``frame_resize`` and ``gray_scale``.

Layout, dtype and bounds conventions are those of :mod:`ding.envs.env_wrappers.image`.
"""

from __future__ import annotations

from typing import Any, Literal

import cv2
import numpy as np
from gymnasium import spaces

from ding.envs.env_wrappers.arguments import ChannelOrder, PositiveInt
from ding.envs.env_wrappers.base import DingObservationWrapper, SpaceTriple, register_wrapper
from ding.envs.env_wrappers.fields import Fields, map_fields
from ding.envs.env_wrappers.image import (
    COLOR_CHANNELS,
    FieldPath,
    field_layouts,
    image_box,
    image_dims,
    image_layout,
    image_shape,
    leaf_spaces,
    map_paths,
    resize_frame,
    to_gray,
    value_range,
    value_range_box,
)
from ding.envs.env_wrappers.rule import require_box
from ding.errors import ShapeRuleError

# ---------------------------------------------------------------------------------------------
# scaled_float_frame
# ---------------------------------------------------------------------------------------------

_SCALE = np.float32(1.0 / 255.0)


def _scaled(values: Any) -> np.ndarray:
    """float32 values times 1/255: the one operation both the observation and its bounds go through."""
    return np.asarray(np.asarray(values, dtype=np.float32) * _SCALE)


@register_wrapper("scaled_float_frame")
class ScaledFloatFrameWrapper(DingObservationWrapper):
    """Scale frames to float32 by 1/255: uint8 [0, 255] → [0, 1] (any layout; shape unchanged).

    The bounds are the input's times 1/255, computed as the pixels are, so they hold for any Box
    (a uint16 image gives [0, 257]; unbounded inputs stay unbounded).

    Example:
        >>> from gymnasium.spaces import Box
        >>> ScaledFloatFrameWrapper.new_space(Box(0, 255, (84, 84), np.uint8), spaces.Discrete(6), None)[0]
        Box(0.0, 1.0, (84, 84), float32)
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        fields: Fields = None,
    ) -> SpaceTriple:
        def scaled(space: spaces.Space[Any]) -> spaces.Box:
            box = require_box(space, "scaled_float_frame", "observation")
            return spaces.Box(_scaled(box.low), _scaled(box.high), box.shape, np.float32)

        return map_fields(obs_space, fields, scaled), act_space, rew_space

    def observation(self, obs: Any) -> Any:
        return map_fields(obs, self.fields, _scaled)


# ---------------------------------------------------------------------------------------------
# warp_frame
# ---------------------------------------------------------------------------------------------


def _warp_shape(shape: tuple[int, ...], size: int, grayscale: bool, channel_order: str) -> tuple[int, ...]:
    who = "warp_frame"
    layout = image_layout(shape, channel_order, who)
    _, _, channels = image_dims(shape, layout)
    if not grayscale:
        return image_shape(layout, size, size, channels)
    if channels is not None and channels not in COLOR_CHANNELS:
        raise ShapeRuleError(
            f"warp_frame(grayscale=True) needs 1, 3 (RGB) or 4 (RGBA) channels; got {channels} in shape {shape}"
        )
    return (size, size)


@register_wrapper("warp_frame")
class WarpFrameWrapper(DingObservationWrapper):
    """Resize frames to ``size`` x ``size`` (INTER_AREA), gray-scaled to 2-D by default, as in the Nature DQN.

    Shape rule: ``grayscale=True`` gives ``(size, size)`` from any layout (so a later ``frame_stack``
    gives ``(n, size, size)``); ``grayscale=False`` keeps the layout and replaces H and W. Pixels are
    converted to gray first (RGB/RGBA weights; a single channel is taken as is), then resized.

    Example:
        >>> from gymnasium.spaces import Box, Discrete
        >>> WarpFrameWrapper.new_shape((210, 160, 3), 6, (1,))
        ((84, 84), 6, (1,))
        >>> WarpFrameWrapper.new_space(Box(0, 255, (3, 210, 160), np.uint8), Discrete(6), None, grayscale=False)[0]
        Box(0, 255, (3, 84, 84), uint8)
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        size: PositiveInt = 84,
        grayscale: bool = True,
        channel_order: ChannelOrder = "auto",
        fields: Fields = None,
    ) -> SpaceTriple:
        def warped(space: spaces.Space[Any]) -> spaces.Box:
            box = image_box(space, "warp_frame", opencv=True)
            return value_range_box(box, _warp_shape(box.shape, size, grayscale, channel_order))

        return map_fields(obs_space, fields, warped), act_space, rew_space

    def _setup(self) -> None:
        self._layouts = field_layouts(self.env.observation_space, self.fields, self.channel_order, "warp_frame")
        self._ranges = {
            path: value_range(box) for path, box in leaf_spaces(self.observation_space, self.fields).items()
        }

    def _warp(self, path: FieldPath, frame: Any) -> np.ndarray:
        frame = np.asarray(frame)
        layout = self._layouts[path]
        if self.grayscale:
            frame, layout = to_gray(frame, layout), "hw"
        out = resize_frame(frame, layout, self.size, self.size, cv2.INTER_AREA)
        return np.clip(out, *self._ranges[path], out=out)

    def observation(self, obs: Any) -> Any:
        return map_paths(obs, self.fields, self._warp)


# ---------------------------------------------------------------------------------------------
# frame_resize
# ---------------------------------------------------------------------------------------------

Interpolation = Literal["nearest", "linear", "area", "cubic"]
_INTERPOLATIONS = {
    "nearest": cv2.INTER_NEAREST,
    "linear": cv2.INTER_LINEAR,
    "area": cv2.INTER_AREA,
    "cubic": cv2.INTER_CUBIC,
}


@register_wrapper("frame_resize")
class FrameResizeWrapper(DingObservationWrapper):
    """Resize frames to ``height`` x ``width`` keeping layout, channel count and dtype.

    ``interpolation`` is one of ``"nearest"``, ``"linear"``, ``"area"`` or ``"cubic"`` (OpenCV's
    modes); results are clipped to the input's value range (cubic overshoots, float rounding).

    Example:
        >>> from gymnasium.spaces import Box, Discrete
        >>> FrameResizeWrapper.new_shape((3, 48, 64), 4, (1,), height=24, width=32)
        ((3, 24, 32), 4, (1,))
        >>> FrameResizeWrapper.new_shape((48, 64), 4, (1,), height=24, width=32)
        ((24, 32), 4, (1,))
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        height: PositiveInt = 84,
        width: PositiveInt = 84,
        interpolation: Interpolation = "area",
        channel_order: ChannelOrder = "auto",
        fields: Fields = None,
    ) -> SpaceTriple:
        def resized(space: spaces.Space[Any]) -> spaces.Box:
            box = image_box(space, "frame_resize", opencv=True)
            layout = image_layout(box.shape, channel_order, "frame_resize")
            shape = image_shape(layout, height, width, image_dims(box.shape, layout)[2])
            return value_range_box(box, shape)

        return map_fields(obs_space, fields, resized), act_space, rew_space

    def _setup(self) -> None:
        self._cv_interpolation = _INTERPOLATIONS[self.interpolation]
        self._layouts = field_layouts(self.env.observation_space, self.fields, self.channel_order, "frame_resize")
        self._ranges = {
            path: value_range(box) for path, box in leaf_spaces(self.observation_space, self.fields).items()
        }

    def _resize(self, path: FieldPath, frame: Any) -> np.ndarray:
        out = resize_frame(np.asarray(frame), self._layouts[path], self.height, self.width, self._cv_interpolation)
        return np.clip(out, *self._ranges[path], out=out)

    def observation(self, obs: Any) -> Any:
        return map_paths(obs, self.fields, self._resize)


# ---------------------------------------------------------------------------------------------
# gray_scale
# ---------------------------------------------------------------------------------------------


def _gray_shape(shape: tuple[int, ...], keep_dim: bool, channel_order: str) -> tuple[int, ...]:
    who = "gray_scale"
    layout = image_layout(shape, channel_order, who)
    height, width, channels = image_dims(shape, layout)
    if channels != 3:
        raise ShapeRuleError(f"{who} needs an RGB frame with 3 channels; got shape {shape} (layout {layout})")
    return image_shape(layout, height, width, 1) if keep_dim else (height, width)


@register_wrapper("gray_scale")
class GrayScaleWrapper(DingObservationWrapper):
    """Convert RGB frames to luminance (OpenCV RGB2GRAY): ``(H, W)``, or a channel axis of 1 with ``keep_dim``.

    Example:
        >>> GrayScaleWrapper.new_shape((48, 64, 3), 4, (1,))
        ((48, 64), 4, (1,))
        >>> GrayScaleWrapper.new_shape((3, 48, 64), 4, (1,), keep_dim=True)
        ((1, 48, 64), 4, (1,))
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        keep_dim: bool = False,
        channel_order: ChannelOrder = "auto",
        fields: Fields = None,
    ) -> SpaceTriple:
        def gray(space: spaces.Space[Any]) -> spaces.Box:
            box = image_box(space, "gray_scale", opencv=True)
            return value_range_box(box, _gray_shape(box.shape, keep_dim, channel_order))

        return map_fields(obs_space, fields, gray), act_space, rew_space

    def _setup(self) -> None:
        self._layouts = field_layouts(self.env.observation_space, self.fields, self.channel_order, "gray_scale")
        out = leaf_spaces(self.observation_space, self.fields)
        self._out_shapes = {path: box.shape for path, box in out.items()}
        self._ranges = {path: value_range(box) for path, box in out.items()}

    def _gray(self, path: FieldPath, frame: Any) -> np.ndarray:
        out = to_gray(np.asarray(frame), self._layouts[path]).reshape(self._out_shapes[path])
        return np.clip(out, *self._ranges[path], out=out)

    def observation(self, obs: Any) -> Any:
        return map_paths(obs, self.fields, self._gray)
