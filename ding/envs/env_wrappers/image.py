"""Frame processing wrappers for image observations (HWC, CHW or HW), applied per ``fields``.

Every wrapper whose work depends on where the channel axis is takes ``channel_order``:
``"auto"`` (the default) reads the layout from the shape — a 2-D frame is grayscale ``(H, W)``,
a 3-D frame whose last dimension is 1, 3 or 4 is channels-last ``(H, W, C)``, otherwise one
whose first dimension is 1, 3 or 4 is channels-first ``(C, H, W)`` — and ``"hwc"`` or ``"chw"``
states it for 3-D frames. The layout of the input is kept unless a wrapper says otherwise.

Wrappers that compute new pixel values (resizing, gray scale) need frames OpenCV can process
(uint8, uint16 or float32); they keep the dtype and bound the result by the input's overall
value range, so uint8 frames in [0, 255] stay uint8 in [0, 255]. Wrappers that only re-index
pixels (crop, flip, transpose, stack) accept any dtype and carry the bounds along. Every
wrapper returns C-contiguous arrays.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Literal

import cv2
import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ding.envs.env_wrappers.base import (
    DingObservationWrapper,
    DingWrapper,
    ShapeTriple,
    SpaceTriple,
    register_wrapper,
)
from ding.envs.env_wrappers.fields import Fields, get_field, map_fields
from ding.envs.spaces import Shape, is_flat_shape
from ding.errors import ConfigError, ShapeRuleError

Layout = Literal["hwc", "chw", "hw"]
FieldPath = str | None

_CHANNEL_ORDERS = ("auto", "hwc", "chw")
_COLOR_CHANNELS = (1, 3, 4)
_CV2_DTYPES = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.float32))
_INTERPOLATIONS = {
    "nearest": cv2.INTER_NEAREST,
    "linear": cv2.INTER_LINEAR,
    "area": cv2.INTER_AREA,
    "cubic": cv2.INTER_CUBIC,
}
_TO_GRAY = {3: cv2.COLOR_RGB2GRAY, 4: cv2.COLOR_RGBA2GRAY}


# ---------------------------------------------------------------------------------------------
# Layout and argument helpers shared by the shape rules
# ---------------------------------------------------------------------------------------------


def _image_layout(shape: object, channel_order: str = "auto", who: str = "image wrapper") -> Layout:
    """Name the layout of an image shape: ``"hw"``, ``"hwc"`` or ``"chw"``.

    ``channel_order`` (``"auto"``, ``"hwc"`` or ``"chw"``) only matters for 3-D shapes.

    >>> _image_layout((84, 84)), _image_layout((210, 160, 3)), _image_layout((3, 48, 64))
    ('hw', 'hwc', 'chw')
    >>> _image_layout((4, 84, 3), channel_order='chw')
    'chw'
    """
    if channel_order not in _CHANNEL_ORDERS:
        raise ConfigError(
            f"{who}: channel_order must be one of {', '.join(map(repr, _CHANNEL_ORDERS))}; got {channel_order!r}"
        )
    if not isinstance(shape, tuple) or not is_flat_shape(shape) or len(shape) not in (2, 3):
        hint = " (for a Dict observation, name the image with fields=[...])" if isinstance(shape, Mapping) else ""
        raise ShapeRuleError(
            f"{who} needs an image observation of shape (H, W), (H, W, C) or (C, H, W); got {shape!r}{hint}"
        )
    if len(shape) == 2:
        return "hw"
    if channel_order == "hwc":
        return "hwc"
    if channel_order == "chw":
        return "chw"
    if shape[-1] in _COLOR_CHANNELS:
        return "hwc"
    if shape[0] in _COLOR_CHANNELS:
        return "chw"
    raise ShapeRuleError(
        f"{who} cannot tell the channel axis of image shape {shape}: neither its last nor its first dimension "
        "is 1, 3 or 4; pass channel_order='hwc' or 'chw'"
    )


def _dims(shape: Any, layout: Layout) -> tuple[int, int, int | None]:
    """``(H, W, C)`` of an image shape already checked by :func:`_image_layout`; ``C`` is None for 2-D frames."""
    if layout == "hw":
        return int(shape[0]), int(shape[1]), None
    if layout == "hwc":
        return int(shape[0]), int(shape[1]), int(shape[2])
    return int(shape[1]), int(shape[2]), int(shape[0])


def _image_shape(layout: Layout, height: int, width: int, channels: int | None) -> tuple[int, ...]:
    """The shape of a ``height`` x ``width`` frame with ``channels`` in ``layout`` (2-D when channels is None)."""
    if channels is None:
        return (height, width)
    return (height, width, channels) if layout == "hwc" else (channels, height, width)


def _window_index(layout: Layout, top: int, left: int, height: int, width: int) -> tuple[slice, ...]:
    """The index cutting the ``height`` x ``width`` window at (``top``, ``left``) out of a frame in ``layout``."""
    rows, cols = slice(top, top + height), slice(left, left + width)
    if layout == "hw":
        return (rows, cols)
    return (rows, cols, slice(None)) if layout == "hwc" else (slice(None), rows, cols)


def _hw_axes(layout: Layout) -> tuple[int, int]:
    """The axes of H and W in ``layout``."""
    return (1, 2) if layout == "chw" else (0, 1)


def _check_positive(value: Any, name: str, who: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ConfigError(f"{who}: {name} must be a positive int; got {value!r}")
    return int(value)


def _image_box(space: spaces.Space[Any], who: str, *, opencv: bool = False) -> spaces.Box:
    if not isinstance(space, spaces.Box):
        raise TypeError(f"{who} needs a Box image observation; got {space}")
    if opencv and space.dtype not in _CV2_DTYPES:
        raise TypeError(f"{who} processes frames with OpenCV, which needs uint8, uint16 or float32; got {space.dtype}")
    return space


def _value_range_box(space: spaces.Box, shape: tuple[int, ...]) -> spaces.Box:
    """A Box of ``shape`` and the input's dtype, bounded by the input's overall value range.

    Resized and gray-scaled pixels are weighted averages of input pixels, so they stay in that range.
    """
    return spaces.Box(low=space.low.min(), high=space.high.max(), shape=shape, dtype=space.dtype)


def _leaf_spaces(space: spaces.Space[Any], fields: Fields) -> dict[FieldPath, spaces.Space[Any]]:
    """The observation spaces the wrapper works on, by field path (``None`` for the whole observation)."""
    if fields is None:
        return {None: space}
    if isinstance(fields, str):
        raise TypeError(f"fields must be a list of 'a.b.c' paths or None, got the string {fields!r}")
    return {path: get_field(space, path) for path in fields}


def _map_paths(obs: Any, fields: Fields, fn: Callable[[FieldPath, Any], Any]) -> Any:
    """Apply ``fn(path, value)`` at every field path of ``obs`` (at ``None`` with the whole obs)."""
    if fields is None:
        return fn(None, obs)
    for path in fields:
        obs = map_fields(obs, [path], functools.partial(fn, path))
    return obs


def _layouts(space: spaces.Space[Any], fields: Fields, channel_order: str, who: str) -> dict[FieldPath, Layout]:
    return {path: _image_layout(sub.shape, channel_order, who) for path, sub in _leaf_spaces(space, fields).items()}


# ---------------------------------------------------------------------------------------------
# OpenCV frame operations
# ---------------------------------------------------------------------------------------------


def _resize(frame: np.ndarray, layout: Layout, height: int, width: int, interpolation: int) -> np.ndarray:
    """Resize one frame to ``height`` x ``width`` keeping its layout and channel count."""
    size = (width, height)
    if layout == "hw":
        return np.asarray(cv2.resize(frame, size, interpolation=interpolation))
    if layout == "chw":
        out = np.empty((frame.shape[0], height, width), dtype=frame.dtype)
        for c in range(frame.shape[0]):
            cv2.resize(frame[c], size, dst=out[c], interpolation=interpolation)
        return out
    channels = frame.shape[2]
    if channels <= 4:  # OpenCV drops a single channel axis, and INTER_AREA takes at most 4 channels
        return np.asarray(cv2.resize(frame, size, interpolation=interpolation)).reshape(height, width, channels)
    out = np.empty((height, width, channels), dtype=frame.dtype)
    for c in range(channels):
        out[:, :, c] = cv2.resize(np.ascontiguousarray(frame[:, :, c]), size, interpolation=interpolation)
    return out


def _to_gray(frame: np.ndarray, layout: Layout) -> np.ndarray:
    """Luminance of one frame as a 2-D array (OpenCV's RGB/RGBA to gray weights)."""
    if layout == "hw":
        return frame
    hwc = frame.transpose(1, 2, 0) if layout == "chw" else frame
    channels = hwc.shape[2]
    if channels == 1:
        return hwc[:, :, 0]
    return np.asarray(cv2.cvtColor(hwc, _TO_GRAY[channels]))


# ---------------------------------------------------------------------------------------------
# scaled_float_frame
# ---------------------------------------------------------------------------------------------


@register_wrapper("scaled_float_frame")
class ScaledFloatFrameWrapper(DingObservationWrapper):
    """Map uint8 frames in [0, 255] to float32 in [0, 1] (any layout; shape unchanged).

    Example:
        >>> from gymnasium.spaces import Box
        >>> ScaledFloatFrameWrapper.new_space(Box(0, 255, (84, 84), np.uint8), spaces.Discrete(6), None)[0]
        Box(0.0, 1.0, (84, 84), float32)
    """

    def __init__(self, env: gym.Env[Any, Any], fields: Fields = None) -> None:
        super().__init__(env)
        self.fields = fields
        self._declare_spaces(fields=fields)

    @staticmethod
    def new_shape(obs_shape: Shape, act_shape: Shape, rew_shape: Shape, fields: Fields = None) -> ShapeTriple:
        return obs_shape, act_shape, rew_shape

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any], fields: Fields = None
    ) -> SpaceTriple:
        def scaled(space: spaces.Space[Any]) -> spaces.Box:
            if not isinstance(space, spaces.Box):
                raise TypeError(f"scaled_float_frame needs a Box observation, got {space}")
            return spaces.Box(0.0, 1.0, shape=space.shape, dtype=np.float32)

        return map_fields(obs_space, fields, scaled), act_space, rew_space

    def observation(self, obs: Any) -> Any:
        return map_fields(obs, self.fields, lambda x: np.asarray(x, dtype=np.float32) * np.float32(1.0 / 255.0))


# ---------------------------------------------------------------------------------------------
# warp_frame
# ---------------------------------------------------------------------------------------------


def _warp_shape(shape: Shape, size: int, grayscale: bool, channel_order: str) -> tuple[int, ...]:
    who = "warp_frame"
    _check_positive(size, "size", who)
    layout = _image_layout(shape, channel_order, who)
    _, _, channels = _dims(shape, layout)
    if not grayscale:
        return _image_shape(layout, size, size, channels)
    if channels is not None and channels not in _COLOR_CHANNELS:
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

    def __init__(
        self,
        env: gym.Env[Any, Any],
        size: int = 84,
        grayscale: bool = True,
        channel_order: str = "auto",
        fields: Fields = None,
    ) -> None:
        super().__init__(env)
        self._declare_spaces(size=size, grayscale=grayscale, channel_order=channel_order, fields=fields)
        self.size = int(size)
        self.grayscale = grayscale
        self.fields = fields
        self._layouts = _layouts(self.env.observation_space, fields, channel_order, "warp_frame")

    @staticmethod
    def new_shape(
        obs_shape: Shape,
        act_shape: Shape,
        rew_shape: Shape,
        size: int = 84,
        grayscale: bool = True,
        channel_order: str = "auto",
        fields: Fields = None,
    ) -> ShapeTriple:
        rule = functools.partial(_warp_shape, size=size, grayscale=grayscale, channel_order=channel_order)
        return map_fields(obs_shape, fields, rule), act_shape, rew_shape

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        size: int = 84,
        grayscale: bool = True,
        channel_order: str = "auto",
        fields: Fields = None,
    ) -> SpaceTriple:
        def warped(space: spaces.Space[Any]) -> spaces.Box:
            box = _image_box(space, "warp_frame", opencv=True)
            return _value_range_box(box, _warp_shape(box.shape, size, grayscale, channel_order))

        return map_fields(obs_space, fields, warped), act_space, rew_space

    def _warp(self, path: FieldPath, frame: Any) -> np.ndarray:
        frame = np.asarray(frame)
        layout = self._layouts[path]
        if self.grayscale:
            frame, layout = _to_gray(frame, layout), "hw"
        return _resize(frame, layout, self.size, self.size, cv2.INTER_AREA)

    def observation(self, obs: Any) -> Any:
        return _map_paths(obs, self.fields, self._warp)


# ---------------------------------------------------------------------------------------------
# frame_resize
# ---------------------------------------------------------------------------------------------


def _resize_shape(shape: Shape, height: int, width: int, interpolation: str, channel_order: str) -> tuple[int, ...]:
    who = "frame_resize"
    height = _check_positive(height, "height", who)
    width = _check_positive(width, "width", who)
    if interpolation not in _INTERPOLATIONS:
        raise ConfigError(
            f"{who}: interpolation must be one of {', '.join(map(repr, _INTERPOLATIONS))}; got {interpolation!r}"
        )
    layout = _image_layout(shape, channel_order, who)
    return _image_shape(layout, height, width, _dims(shape, layout)[2])


@register_wrapper("frame_resize")
class FrameResizeWrapper(DingObservationWrapper):
    """Resize frames to ``height`` x ``width`` keeping layout, channel count and dtype.

    ``interpolation`` is one of ``"nearest"``, ``"linear"``, ``"area"`` or ``"cubic"`` (OpenCV's
    modes); cubic results are clipped to the input's value range.

    Example:
        >>> from gymnasium.spaces import Box, Discrete
        >>> FrameResizeWrapper.new_shape((3, 48, 64), 4, (1,), height=24, width=32)
        ((3, 24, 32), 4, (1,))
        >>> FrameResizeWrapper.new_shape((48, 64), 4, (1,), height=24, width=32)
        ((24, 32), 4, (1,))
    """

    def __init__(
        self,
        env: gym.Env[Any, Any],
        height: int = 84,
        width: int = 84,
        interpolation: str = "area",
        channel_order: str = "auto",
        fields: Fields = None,
    ) -> None:
        super().__init__(env)
        self._declare_spaces(
            height=height, width=width, interpolation=interpolation, channel_order=channel_order, fields=fields
        )
        self.height = int(height)
        self.width = int(width)
        self.interpolation = interpolation
        self.fields = fields
        self._cv_interpolation = _INTERPOLATIONS[interpolation]
        self._layouts = _layouts(self.env.observation_space, fields, channel_order, "frame_resize")
        # Cubic interpolation overshoots at edges; clip it back into the declared range.
        self._clip: dict[FieldPath, tuple[Any, Any]] = {}
        if interpolation == "cubic":
            for path, sub in _leaf_spaces(self.observation_space, fields).items():
                box = _image_box(sub, "frame_resize")
                self._clip[path] = (box.low.min(), box.high.max())

    @staticmethod
    def new_shape(
        obs_shape: Shape,
        act_shape: Shape,
        rew_shape: Shape,
        height: int = 84,
        width: int = 84,
        interpolation: str = "area",
        channel_order: str = "auto",
        fields: Fields = None,
    ) -> ShapeTriple:
        rule = functools.partial(
            _resize_shape, height=height, width=width, interpolation=interpolation, channel_order=channel_order
        )
        return map_fields(obs_shape, fields, rule), act_shape, rew_shape

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        height: int = 84,
        width: int = 84,
        interpolation: str = "area",
        channel_order: str = "auto",
        fields: Fields = None,
    ) -> SpaceTriple:
        def resized(space: spaces.Space[Any]) -> spaces.Box:
            box = _image_box(space, "frame_resize", opencv=True)
            return _value_range_box(box, _resize_shape(box.shape, height, width, interpolation, channel_order))

        return map_fields(obs_space, fields, resized), act_space, rew_space

    def _resize(self, path: FieldPath, frame: Any) -> np.ndarray:
        out = _resize(np.asarray(frame), self._layouts[path], self.height, self.width, self._cv_interpolation)
        if self._clip:
            low, high = self._clip[path]
            np.clip(out, low, high, out=out)
        return out

    def observation(self, obs: Any) -> Any:
        return _map_paths(obs, self.fields, self._resize)


# ---------------------------------------------------------------------------------------------
# frame_crop
# ---------------------------------------------------------------------------------------------


def _crop_index(
    shape: Shape | None, top: int, left: int, height: int | None, width: int | None, channel_order: str
) -> tuple[tuple[int, ...], tuple[slice, ...]]:
    """The cropped shape and the index that cuts it out of a frame of ``shape``."""
    who = "frame_crop"
    for name, value in (("top", top), ("left", left)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ConfigError(f"{who}: {name} must be an int; got {value!r}")
    if height is not None:
        height = _check_positive(height, "height", who)
    if width is not None:
        width = _check_positive(width, "width", who)
    layout = _image_layout(shape, channel_order, who)
    frame_h, frame_w, channels = _dims(shape, layout)
    rows = frame_h - top if height is None else height
    cols = frame_w - left if width is None else width
    if top < 0 or left < 0 or rows <= 0 or cols <= 0 or top + rows > frame_h or left + cols > frame_w:
        raise ShapeRuleError(
            f"{who}: the rectangle top={top}, left={left}, height={height}, width={width} "
            f"(rows {top}:{top + rows}, columns {left}:{left + cols}) is outside the {frame_h}x{frame_w} frame "
            f"of shape {shape}"
        )
    index = _window_index(layout, top, left, rows, cols)
    return _image_shape(layout, rows, cols, channels), index


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

    def __init__(
        self,
        env: gym.Env[Any, Any],
        top: int = 0,
        left: int = 0,
        height: int | None = None,
        width: int | None = None,
        channel_order: str = "auto",
        fields: Fields = None,
    ) -> None:
        super().__init__(env)
        self._declare_spaces(top=top, left=left, height=height, width=width, channel_order=channel_order, fields=fields)
        self.fields = fields
        self._index = {
            path: _crop_index(sub.shape, top, left, height, width, channel_order)[1]
            for path, sub in _leaf_spaces(self.env.observation_space, fields).items()
        }

    @staticmethod
    def new_shape(
        obs_shape: Shape,
        act_shape: Shape,
        rew_shape: Shape,
        top: int = 0,
        left: int = 0,
        height: int | None = None,
        width: int | None = None,
        channel_order: str = "auto",
        fields: Fields = None,
    ) -> ShapeTriple:
        def cropped(shape: Shape) -> tuple[int, ...]:
            return _crop_index(shape, top, left, height, width, channel_order)[0]

        return map_fields(obs_shape, fields, cropped), act_shape, rew_shape

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        top: int = 0,
        left: int = 0,
        height: int | None = None,
        width: int | None = None,
        channel_order: str = "auto",
        fields: Fields = None,
    ) -> SpaceTriple:
        def cropped(space: spaces.Space[Any]) -> spaces.Box:
            box = _image_box(space, "frame_crop")
            shape, index = _crop_index(box.shape, top, left, height, width, channel_order)
            return spaces.Box(low=box.low[index], high=box.high[index], shape=shape, dtype=box.dtype)

        return map_fields(obs_space, fields, cropped), act_space, rew_space

    def _crop(self, path: FieldPath, frame: Any) -> np.ndarray:
        return np.ascontiguousarray(np.asarray(frame)[self._index[path]])

    def observation(self, obs: Any) -> Any:
        return _map_paths(obs, self.fields, self._crop)


# ---------------------------------------------------------------------------------------------
# gray_scale
# ---------------------------------------------------------------------------------------------


def _gray_shape(shape: Shape, keep_dim: bool, channel_order: str) -> tuple[int, ...]:
    who = "gray_scale"
    layout = _image_layout(shape, channel_order, who)
    height, width, channels = _dims(shape, layout)
    if channels != 3:
        raise ShapeRuleError(f"{who} needs an RGB frame with 3 channels; got shape {shape} (layout {layout})")
    return _image_shape(layout, height, width, 1) if keep_dim else (height, width)


@register_wrapper("gray_scale")
class GrayScaleWrapper(DingObservationWrapper):
    """Convert RGB frames to luminance (OpenCV RGB2GRAY): ``(H, W)``, or a channel axis of 1 with ``keep_dim``.

    Example:
        >>> GrayScaleWrapper.new_shape((48, 64, 3), 4, (1,))
        ((48, 64), 4, (1,))
        >>> GrayScaleWrapper.new_shape((3, 48, 64), 4, (1,), keep_dim=True)
        ((1, 48, 64), 4, (1,))
    """

    def __init__(
        self, env: gym.Env[Any, Any], keep_dim: bool = False, channel_order: str = "auto", fields: Fields = None
    ) -> None:
        super().__init__(env)
        self._declare_spaces(keep_dim=keep_dim, channel_order=channel_order, fields=fields)
        self.fields = fields
        self._layouts = _layouts(self.env.observation_space, fields, channel_order, "gray_scale")
        self._out_shapes = {path: sub.shape for path, sub in _leaf_spaces(self.observation_space, fields).items()}

    @staticmethod
    def new_shape(
        obs_shape: Shape,
        act_shape: Shape,
        rew_shape: Shape,
        keep_dim: bool = False,
        channel_order: str = "auto",
        fields: Fields = None,
    ) -> ShapeTriple:
        rule = functools.partial(_gray_shape, keep_dim=keep_dim, channel_order=channel_order)
        return map_fields(obs_shape, fields, rule), act_shape, rew_shape

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        keep_dim: bool = False,
        channel_order: str = "auto",
        fields: Fields = None,
    ) -> SpaceTriple:
        def gray(space: spaces.Space[Any]) -> spaces.Box:
            box = _image_box(space, "gray_scale", opencv=True)
            return _value_range_box(box, _gray_shape(box.shape, keep_dim, channel_order))

        return map_fields(obs_space, fields, gray), act_space, rew_space

    def _gray(self, path: FieldPath, frame: Any) -> np.ndarray:
        return _to_gray(np.asarray(frame), self._layouts[path]).reshape(self._out_shapes[path])

    def observation(self, obs: Any) -> Any:
        return _map_paths(obs, self.fields, self._gray)


# ---------------------------------------------------------------------------------------------
# image_channel_first and obs_transpose
# ---------------------------------------------------------------------------------------------


def _channel_first_layout(shape: Shape | None, who: str) -> Layout:
    if (
        isinstance(shape, tuple)
        and len(shape) == 3
        and is_flat_shape(shape)
        and shape[-1] not in _COLOR_CHANNELS
        and shape[0] not in _COLOR_CHANNELS
    ):
        raise ShapeRuleError(
            f"{who} cannot tell the channel axis of {shape}: it needs a channels-last (H, W, C) frame "
            "with C in 1, 3 or 4, or a 2-D (H, W) frame"
        )
    layout = _image_layout(shape, "auto", who)
    if layout == "chw":
        raise ShapeRuleError(
            f"{who} needs a channels-last (H, W, C) or a 2-D (H, W) frame; shape {shape} is already channels-first"
        )
    return layout


def _channel_first_shape(shape: Shape | None, who: str) -> tuple[int, ...]:
    height, width, channels = _dims(shape, _channel_first_layout(shape, who))
    return (1 if channels is None else channels, height, width)


def _channel_first_array(array: np.ndarray, layout: Layout) -> np.ndarray:
    """An HWC (or HW) array as a C-contiguous CHW (or 1HW) array."""
    if layout == "hw":
        return np.ascontiguousarray(array[None])
    return np.ascontiguousarray(array.transpose(2, 0, 1))


def _channel_first_box(space: spaces.Space[Any], who: str) -> spaces.Box:
    box = _image_box(space, who)
    layout = _channel_first_layout(box.shape, who)
    shape = _channel_first_shape(box.shape, who)
    low, high = _channel_first_array(box.low, layout), _channel_first_array(box.high, layout)
    return spaces.Box(low=low, high=high, shape=shape, dtype=box.dtype)


@register_wrapper("image_channel_first")
class ImageChannelFirstWrapper(DingObservationWrapper):
    """Move the channel axis first: ``(H, W, C)`` → ``(C, H, W)``, ``(H, W)`` → ``(1, H, W)``.

    A frame that already looks channels-first is an error. Any dtype; the bounds move alike.

    Example:
        >>> ImageChannelFirstWrapper.new_shape({'image': (48, 64, 3), 'pos': (3,)}, 4, (1,), fields=['image'])
        ({'image': (3, 48, 64), 'pos': (3,)}, 4, (1,))
        >>> ImageChannelFirstWrapper.new_shape((84, 84), 4, (1,))
        ((1, 84, 84), 4, (1,))
    """

    def __init__(self, env: gym.Env[Any, Any], fields: Fields = None) -> None:
        super().__init__(env)
        self._declare_spaces(fields=fields)
        self.fields = fields
        self._layouts = {
            path: _channel_first_layout(sub.shape, "image_channel_first")
            for path, sub in _leaf_spaces(self.env.observation_space, fields).items()
        }

    @staticmethod
    def new_shape(obs_shape: Shape, act_shape: Shape, rew_shape: Shape, fields: Fields = None) -> ShapeTriple:
        rule = functools.partial(_channel_first_shape, who="image_channel_first")
        return map_fields(obs_shape, fields, rule), act_shape, rew_shape

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any], fields: Fields = None
    ) -> SpaceTriple:
        rule = functools.partial(_channel_first_box, who="image_channel_first")
        return map_fields(obs_space, fields, rule), act_space, rew_space

    def _transpose(self, path: FieldPath, frame: Any) -> np.ndarray:
        return _channel_first_array(np.asarray(frame), self._layouts[path])

    def observation(self, obs: Any) -> Any:
        return _map_paths(obs, self.fields, self._transpose)


def _transpose_shape(shape: Shape) -> Shape:
    """obs_transpose's rule on one observation shape: an image, or a tuple of images."""
    if isinstance(shape, tuple) and not is_flat_shape(shape):
        return tuple(_channel_first_shape(sub, "obs_transpose") for sub in shape)
    return _channel_first_shape(shape, "obs_transpose")


def _transpose_space(space: spaces.Space[Any]) -> spaces.Space[Any]:
    if isinstance(space, spaces.Tuple):
        return spaces.Tuple(tuple(_channel_first_box(sub, "obs_transpose") for sub in space.spaces))
    return _channel_first_box(space, "obs_transpose")


@register_wrapper("obs_transpose")
class ObsTransposeWrapper(DingObservationWrapper):
    """DI-engine's observation transpose: an HWC image, or each image of a Tuple observation, becomes CHW.

    2-D frames become ``(1, H, W)``; frames already channels-first are an error.

    Example:
        >>> ObsTransposeWrapper.new_shape(((48, 64, 3), (32, 32, 1)), 4, (1,))
        (((3, 48, 64), (1, 32, 32)), 4, (1,))
    """

    def __init__(self, env: gym.Env[Any, Any], fields: Fields = None) -> None:
        super().__init__(env)
        self._declare_spaces(fields=fields)
        self.fields = fields
        self._layouts: dict[FieldPath, Layout | tuple[Layout, ...]] = {}
        for path, sub in _leaf_spaces(self.env.observation_space, fields).items():
            if isinstance(sub, spaces.Tuple):
                self._layouts[path] = tuple(_channel_first_layout(s.shape, "obs_transpose") for s in sub.spaces)
            else:
                self._layouts[path] = _channel_first_layout(sub.shape, "obs_transpose")

    @staticmethod
    def new_shape(obs_shape: Shape, act_shape: Shape, rew_shape: Shape, fields: Fields = None) -> ShapeTriple:
        return map_fields(obs_shape, fields, _transpose_shape), act_shape, rew_shape

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any], fields: Fields = None
    ) -> SpaceTriple:
        return map_fields(obs_space, fields, _transpose_space), act_space, rew_space

    def _transpose(self, path: FieldPath, obs: Any) -> Any:
        layout = self._layouts[path]
        if isinstance(layout, tuple):
            return tuple(_channel_first_array(np.asarray(o), sub) for o, sub in zip(obs, layout, strict=True))
        return _channel_first_array(np.asarray(obs), layout)

    def observation(self, obs: Any) -> Any:
        return _map_paths(obs, self.fields, self._transpose)


# ---------------------------------------------------------------------------------------------
# frame_flip
# ---------------------------------------------------------------------------------------------


def _flip_axes(shape: Shape | None, horizontal: bool, vertical: bool, channel_order: str) -> tuple[int, ...]:
    """The axes frame_flip reverses for a frame of ``shape`` (raises if it is not an image)."""
    row_axis, col_axis = _hw_axes(_image_layout(shape, channel_order, "frame_flip"))
    return (row_axis,) * bool(vertical) + (col_axis,) * bool(horizontal)


@register_wrapper("frame_flip")
class FrameFlipWrapper(DingObservationWrapper):
    """Mirror frames left-right (``horizontal``) and/or upside down (``vertical``); shapes unchanged.

    Any dtype; per-pixel bounds are mirrored alike.

    Example:
        >>> FrameFlipWrapper.new_shape((3, 48, 64), 4, (1,), vertical=True)
        ((3, 48, 64), 4, (1,))
    """

    def __init__(
        self,
        env: gym.Env[Any, Any],
        horizontal: bool = True,
        vertical: bool = False,
        channel_order: str = "auto",
        fields: Fields = None,
    ) -> None:
        super().__init__(env)
        self._declare_spaces(horizontal=horizontal, vertical=vertical, channel_order=channel_order, fields=fields)
        self.fields = fields
        self._axes = {
            path: _flip_axes(sub.shape, horizontal, vertical, channel_order)
            for path, sub in _leaf_spaces(self.env.observation_space, fields).items()
        }

    @staticmethod
    def new_shape(
        obs_shape: Shape,
        act_shape: Shape,
        rew_shape: Shape,
        horizontal: bool = True,
        vertical: bool = False,
        channel_order: str = "auto",
        fields: Fields = None,
    ) -> ShapeTriple:
        def flipped(shape: Shape) -> Shape:
            _flip_axes(shape, horizontal, vertical, channel_order)
            return shape

        return map_fields(obs_shape, fields, flipped), act_shape, rew_shape

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        horizontal: bool = True,
        vertical: bool = False,
        channel_order: str = "auto",
        fields: Fields = None,
    ) -> SpaceTriple:
        def flipped(space: spaces.Space[Any]) -> spaces.Box:
            box = _image_box(space, "frame_flip")
            axes = _flip_axes(box.shape, horizontal, vertical, channel_order)
            low, high = np.flip(box.low, axes), np.flip(box.high, axes)
            return spaces.Box(low=low, high=high, shape=box.shape, dtype=box.dtype)

        return map_fields(obs_space, fields, flipped), act_space, rew_space

    def _flip(self, path: FieldPath, frame: Any) -> np.ndarray:
        return np.ascontiguousarray(np.flip(np.asarray(frame), self._axes[path]))

    def observation(self, obs: Any) -> Any:
        return _map_paths(obs, self.fields, self._flip)


# ---------------------------------------------------------------------------------------------
# episodic_random_frame_crop
# ---------------------------------------------------------------------------------------------


def _random_crop_shape(shape: Shape, height: int, width: int, channel_order: str) -> tuple[int, ...]:
    who = "episodic_random_frame_crop"
    height = _check_positive(height, "height", who)
    width = _check_positive(width, "width", who)
    layout = _image_layout(shape, channel_order, who)
    frame_h, frame_w, channels = _dims(shape, layout)
    if height > frame_h or width > frame_w:
        raise ShapeRuleError(f"{who}: a {height}x{width} crop does not fit in the {frame_h}x{frame_w} frame {shape}")
    return _image_shape(layout, height, width, channels)


def _check_shared_crop(frame_shapes: list[Any], share_cropping: bool, channel_order: str) -> None:
    """With ``share_cropping``, all cropped frames must have one H x W so one offset fits them all."""
    if not share_cropping or len(frame_shapes) < 2:
        return
    sizes = set()
    for shape in frame_shapes:
        layout = _image_layout(shape, channel_order, "episodic_random_frame_crop")
        sizes.add(_dims(shape, layout)[:2])
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

    def __init__(
        self,
        env: gym.Env[Any, Any],
        height: int,
        width: int,
        share_cropping: bool = True,
        channel_order: str = "auto",
        fields: Fields = None,
    ) -> None:
        super().__init__(env)
        self._declare_spaces(
            height=height, width=width, share_cropping=share_cropping, channel_order=channel_order, fields=fields
        )
        self.height = int(height)
        self.width = int(width)
        self.share_cropping = share_cropping
        self.fields = fields
        self._layouts = _layouts(self.env.observation_space, fields, channel_order, "episodic_random_frame_crop")
        self._sizes = {
            path: _dims(sub.shape, self._layouts[path])[:2]
            for path, sub in _leaf_spaces(self.env.observation_space, fields).items()
        }
        self._index: dict[FieldPath, tuple[slice, ...]] | None = None

    @staticmethod
    def new_shape(
        obs_shape: Shape,
        act_shape: Shape,
        rew_shape: Shape,
        height: int,
        width: int,
        share_cropping: bool = True,
        channel_order: str = "auto",
        fields: Fields = None,
    ) -> ShapeTriple:
        frames = [obs_shape] if fields is None else [get_field(obs_shape, path) for path in fields]
        _check_shared_crop(frames, share_cropping, channel_order)
        rule = functools.partial(_random_crop_shape, height=height, width=width, channel_order=channel_order)
        return map_fields(obs_shape, fields, rule), act_shape, rew_shape

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        height: int,
        width: int,
        share_cropping: bool = True,
        channel_order: str = "auto",
        fields: Fields = None,
    ) -> SpaceTriple:
        who = "episodic_random_frame_crop"
        boxes = [_image_box(sub, who) for sub in _leaf_spaces(obs_space, fields).values()]
        _check_shared_crop([box.shape for box in boxes], share_cropping, channel_order)

        def cropped(space: spaces.Space[Any]) -> spaces.Box:
            box = _image_box(space, who)
            return _value_range_box(box, _random_crop_shape(box.shape, height, width, channel_order))

        return map_fields(obs_space, fields, cropped), act_space, rew_space

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
        return _map_paths(obs, self.fields, self._crop), info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return _map_paths(obs, self.fields, self._crop), reward, terminated, truncated, info


# ---------------------------------------------------------------------------------------------
# frame_stack
# ---------------------------------------------------------------------------------------------


def _stack_shape(shape: Shape, n_frames: int) -> tuple[int, ...]:
    n_frames = _check_positive(n_frames, "n_frames", "frame_stack")
    if not isinstance(shape, tuple) or not is_flat_shape(shape):
        hint = " (for a Dict observation, name the arrays with fields=[...])" if isinstance(shape, Mapping) else ""
        raise ShapeRuleError(f"frame_stack needs an array (Box) observation with a tuple shape; got {shape!r}{hint}")
    return (n_frames, *shape)


class _FrameBuffer:
    """The last ``n`` frames in a doubled ring: each frame is written at ``i`` and ``i + n``,
    so the n most recent frames, oldest first, are always the one slice ``[next, next + n)``."""

    def __init__(self, n: int, shape: tuple[int, ...], dtype: Any) -> None:
        self._n = n
        self._buffer = np.zeros((2 * n, *shape), dtype=dtype)
        self._next = 0

    def fill(self, frame: Any) -> np.ndarray:
        self._buffer[:] = frame
        self._next = 0
        return self._buffer[: self._n].copy()

    def push(self, frame: Any) -> np.ndarray:
        i = self._next
        self._buffer[i] = frame
        self._buffer[i + self._n] = frame
        self._next = i + 1 if i + 1 < self._n else 0
        return self._buffer[self._next : self._next + self._n].copy()


@register_wrapper("frame_stack")
class FrameStackWrapper(DingWrapper):
    """Stack the last ``n_frames`` observations on a new leading axis: ``shape`` → ``(n_frames, *shape)``.

    Oldest first, newest at index -1; a reset fills the stack with the reset observation. Any
    shape and dtype; bounds are repeated. Each call returns a new array that callers may keep.

    Example:
        >>> from gymnasium.spaces import Box, Discrete
        >>> FrameStackWrapper.new_space(Box(0.0, 1.0, (84, 84), np.float32), Discrete(6), None)[0]
        Box(0.0, 1.0, (4, 84, 84), float32)
    """

    def __init__(self, env: gym.Env[Any, Any], n_frames: int = 4, fields: Fields = None) -> None:
        super().__init__(env)
        self._declare_spaces(n_frames=n_frames, fields=fields)
        self.n_frames = int(n_frames)
        self.fields = fields
        self._buffers = {
            path: _FrameBuffer(self.n_frames, sub.shape, sub.dtype)  # type: ignore[arg-type]
            for path, sub in _leaf_spaces(self.env.observation_space, fields).items()
        }

    @staticmethod
    def new_shape(
        obs_shape: Shape, act_shape: Shape, rew_shape: Shape, n_frames: int = 4, fields: Fields = None
    ) -> ShapeTriple:
        rule = functools.partial(_stack_shape, n_frames=n_frames)
        return map_fields(obs_shape, fields, rule), act_shape, rew_shape

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        n_frames: int = 4,
        fields: Fields = None,
    ) -> SpaceTriple:
        def stacked(space: spaces.Space[Any]) -> spaces.Box:
            if not isinstance(space, spaces.Box):
                raise TypeError(f"frame_stack needs a Box observation; got {space}")
            shape = _stack_shape(space.shape, n_frames)
            low = np.broadcast_to(space.low, shape).copy()
            high = np.broadcast_to(space.high, shape).copy()
            return spaces.Box(low=low, high=high, shape=shape, dtype=space.dtype)

        return map_fields(obs_space, fields, stacked), act_space, rew_space

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return _map_paths(obs, self.fields, lambda path, frame: self._buffers[path].fill(frame)), info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        stacked = _map_paths(obs, self.fields, lambda path, frame: self._buffers[path].push(frame))
        return stacked, reward, terminated, truncated, info
