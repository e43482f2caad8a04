"""Shared helpers of the image wrappers: layout detection, argument checks, field handling and OpenCV operations.

The image wrappers (:mod:`.image_resize`, :mod:`.image_crop`, :mod:`.image_axes`) process image
observations (HWC, CHW or HW), applied per ``fields``; they and :mod:`.frame_stack` build on
these helpers and follow these conventions.

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
import numpy as np
from gymnasium import spaces

from ding.envs.env_wrappers.arguments import ChannelOrder, check_argument
from ding.envs.env_wrappers.fields import Fields, get_field, map_fields
from ding.envs.env_wrappers.rule import SpaceKindError, require_box
from ding.envs.values.spaces import is_flat_shape, is_placeholder
from ding.errors import ShapeRuleError

Layout = Literal["hwc", "chw", "hw"]
FieldPath = str | None

COLOR_CHANNELS = (1, 3, 4)
_CV2_DTYPES = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.float32))
_TO_GRAY = {3: cv2.COLOR_RGB2GRAY, 4: cv2.COLOR_RGBA2GRAY}


# ---------------------------------------------------------------------------------------------
# Layout and argument helpers shared by the shape rules
# ---------------------------------------------------------------------------------------------


def image_layout(shape: object, channel_order: str = "auto", who: str = "image wrapper") -> Layout:
    """Name the layout of an image shape: ``"hw"``, ``"hwc"`` or ``"chw"``.

    ``channel_order`` (``"auto"``, ``"hwc"`` or ``"chw"``) only matters for 3-D shapes.

    >>> image_layout((84, 84)), image_layout((210, 160, 3)), image_layout((3, 48, 64))
    ('hw', 'hwc', 'chw')
    >>> image_layout((4, 84, 3), channel_order='chw')
    'chw'
    """
    check_argument(who, "channel_order", channel_order, ChannelOrder)
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
    if shape[-1] in COLOR_CHANNELS:
        return "hwc"
    if shape[0] in COLOR_CHANNELS:
        return "chw"
    raise ShapeRuleError(
        f"{who} cannot tell the channel axis of image shape {shape}: neither its last nor its first dimension "
        "is 1, 3 or 4; pass channel_order='hwc' or 'chw'"
    )


def image_dims(shape: Any, layout: Layout) -> tuple[int, int, int | None]:
    """``(H, W, C)`` of an image shape already checked by :func:`image_layout`; ``C`` is None for 2-D frames."""
    if layout == "hw":
        return int(shape[0]), int(shape[1]), None
    if layout == "hwc":
        return int(shape[0]), int(shape[1]), int(shape[2])
    return int(shape[1]), int(shape[2]), int(shape[0])


def image_shape(layout: Layout, height: int, width: int, channels: int | None) -> tuple[int, ...]:
    """The shape of a ``height`` x ``width`` frame with ``channels`` in ``layout`` (2-D when channels is None)."""
    if channels is None:
        return (height, width)
    return (height, width, channels) if layout == "hwc" else (channels, height, width)


def image_box(space: spaces.Space[Any], who: str, *, opencv: bool = False) -> spaces.Box:
    """``space`` if it is a Box (of a dtype OpenCV processes, with ``opencv``); a TypeError otherwise."""
    box = require_box(space, who, "image observation")
    if opencv and not is_placeholder(box) and box.dtype not in _CV2_DTYPES:
        raise SpaceKindError(
            f"{who} processes frames with OpenCV, which needs uint8, uint16 or float32; got {box.dtype}"
        )
    return box


def value_range_box(space: spaces.Box, shape: tuple[int, ...]) -> spaces.Box:
    """A Box of ``shape`` and the input's dtype, bounded by the input's overall value range.

    Resized and gray-scaled pixels are weighted averages of input pixels, so they stay in that range
    (the wrappers clip float rounding back into it, see :func:`value_range`).
    """
    return spaces.Box(low=space.low.min(), high=space.high.max(), shape=shape, dtype=space.dtype)


def value_range(box: spaces.Space[Any]) -> tuple[Any, Any]:
    """The overall ``(low, high)`` of a Box's bounds, to clip computed pixels into a :func:`value_range_box`.

    Float weighted averages may land an ulp outside the inputs' range; clipping is exact and cheap.
    """
    if not isinstance(box, spaces.Box):
        raise TypeError(f"value_range needs a Box; got {box}")
    return box.low.min(), box.high.max()


def leaf_spaces(space: spaces.Space[Any], fields: Fields) -> dict[FieldPath, spaces.Space[Any]]:
    """The observation spaces the wrapper works on, by field path (``None`` for the whole observation)."""
    if fields is None:
        return {None: space}
    return {path: get_field(space, path) for path in fields}


def map_paths(obs: Any, fields: Fields, fn: Callable[[FieldPath, Any], Any]) -> Any:
    """Apply ``fn(path, value)`` at every field path of ``obs`` (at ``None`` with the whole obs)."""
    if fields is None:
        return fn(None, obs)
    for path in fields:
        obs = map_fields(obs, [path], functools.partial(fn, path))
    return obs


def field_layouts(space: spaces.Space[Any], fields: Fields, channel_order: str, who: str) -> dict[FieldPath, Layout]:
    """The layout of each image the wrapper works on, by field path."""
    return {path: image_layout(sub.shape, channel_order, who) for path, sub in leaf_spaces(space, fields).items()}


# ---------------------------------------------------------------------------------------------
# OpenCV frame operations
# ---------------------------------------------------------------------------------------------


def resize_frame(frame: np.ndarray, layout: Layout, height: int, width: int, interpolation: int) -> np.ndarray:
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


def to_gray(frame: np.ndarray, layout: Layout) -> np.ndarray:
    """Luminance of one frame as a 2-D array (OpenCV's RGB/RGBA to gray weights)."""
    if layout == "hw":
        return frame
    hwc = frame.transpose(1, 2, 0) if layout == "chw" else frame
    channels = hwc.shape[2]
    if channels == 1:
        return hwc[:, :, 0]
    return np.asarray(cv2.cvtColor(hwc, _TO_GRAY[channels]))
