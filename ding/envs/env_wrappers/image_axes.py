"""Wrappers that move or reverse image axes: ``image_channel_first``, ``obs_transpose`` and ``frame_flip``.

Layout, dtype and bounds conventions are those of :mod:`ding.envs.env_wrappers.image`.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.env_wrappers.arguments import ChannelOrder
from ding.envs.env_wrappers.base import DingObservationWrapper, SpaceTriple, register_wrapper
from ding.envs.env_wrappers.fields import Fields, map_fields
from ding.envs.env_wrappers.image import (
    COLOR_CHANNELS,
    FieldPath,
    Layout,
    image_box,
    image_dims,
    image_layout,
    leaf_spaces,
    map_paths,
)
from ding.envs.values.spaces import Shape, is_flat_shape
from ding.errors import ShapeRuleError

# ---------------------------------------------------------------------------------------------
# image_channel_first and obs_transpose
# ---------------------------------------------------------------------------------------------


def _channel_first_layout(shape: Shape | None, who: str) -> Layout:
    if (
        isinstance(shape, tuple)
        and len(shape) == 3
        and is_flat_shape(shape)
        and shape[-1] not in COLOR_CHANNELS
        and shape[0] not in COLOR_CHANNELS
    ):
        raise ShapeRuleError(
            f"{who} cannot tell the channel axis of {shape}: it needs a channels-last (H, W, C) frame "
            "with C in 1, 3 or 4, or a 2-D (H, W) frame"
        )
    layout = image_layout(shape, "auto", who)
    if layout == "chw":
        raise ShapeRuleError(
            f"{who} needs a channels-last (H, W, C) or a 2-D (H, W) frame; shape {shape} is already channels-first"
        )
    return layout


def _channel_first_shape(shape: Shape | None, who: str) -> tuple[int, ...]:
    height, width, channels = image_dims(shape, _channel_first_layout(shape, who))
    return (1 if channels is None else channels, height, width)


def _channel_first_array(array: np.ndarray, layout: Layout) -> np.ndarray:
    """An HWC (or HW) array as a C-contiguous CHW (or 1HW) array."""
    if layout == "hw":
        return np.ascontiguousarray(array[None])
    return np.ascontiguousarray(array.transpose(2, 0, 1))


def _channel_first_box(space: spaces.Space[Any], who: str) -> spaces.Box:
    box = image_box(space, who)
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

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        fields: Fields = None,
    ) -> SpaceTriple:
        rule = functools.partial(_channel_first_box, who="image_channel_first")
        return map_fields(obs_space, fields, rule), act_space, rew_space

    def _setup(self) -> None:
        self._layouts = {
            path: _channel_first_layout(sub.shape, "image_channel_first")
            for path, sub in leaf_spaces(self.env.observation_space, self.fields).items()
        }

    def _transpose(self, path: FieldPath, frame: Any) -> np.ndarray:
        return _channel_first_array(np.asarray(frame), self._layouts[path])

    def observation(self, obs: Any) -> Any:
        return map_paths(obs, self.fields, self._transpose)


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

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        fields: Fields = None,
    ) -> SpaceTriple:
        return map_fields(obs_space, fields, _transpose_space), act_space, rew_space

    def _setup(self) -> None:
        self._layouts: dict[FieldPath, Layout | tuple[Layout, ...]] = {}
        for path, sub in leaf_spaces(self.env.observation_space, self.fields).items():
            if isinstance(sub, spaces.Tuple):
                self._layouts[path] = tuple(_channel_first_layout(s.shape, "obs_transpose") for s in sub.spaces)
            else:
                self._layouts[path] = _channel_first_layout(sub.shape, "obs_transpose")

    def _transpose(self, path: FieldPath, obs: Any) -> Any:
        layout = self._layouts[path]
        if isinstance(layout, tuple):
            return tuple(_channel_first_array(np.asarray(o), sub) for o, sub in zip(obs, layout, strict=True))
        return _channel_first_array(np.asarray(obs), layout)

    def observation(self, obs: Any) -> Any:
        return map_paths(obs, self.fields, self._transpose)


# ---------------------------------------------------------------------------------------------
# frame_flip
# ---------------------------------------------------------------------------------------------


def _hw_axes(layout: Layout) -> tuple[int, int]:
    """The axes of H and W in ``layout``."""
    return (1, 2) if layout == "chw" else (0, 1)


def _flip_axes(shape: Shape | None, horizontal: bool, vertical: bool, channel_order: str) -> tuple[int, ...]:
    """The axes frame_flip reverses for a frame of ``shape`` (raises if it is not an image)."""
    row_axis, col_axis = _hw_axes(image_layout(shape, channel_order, "frame_flip"))
    return (row_axis,) * bool(vertical) + (col_axis,) * bool(horizontal)


@register_wrapper("frame_flip")
class FrameFlipWrapper(DingObservationWrapper):
    """Mirror frames left-right (``horizontal``) and/or upside down (``vertical``); shapes unchanged.

    Any dtype; per-pixel bounds are mirrored alike.

    Example:
        >>> FrameFlipWrapper.new_shape((3, 48, 64), 4, (1,), vertical=True)
        ((3, 48, 64), 4, (1,))
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        horizontal: bool = True,
        vertical: bool = False,
        channel_order: ChannelOrder = "auto",
        fields: Fields = None,
    ) -> SpaceTriple:
        def flipped(space: spaces.Space[Any]) -> spaces.Box:
            box = image_box(space, "frame_flip")
            axes = _flip_axes(box.shape, horizontal, vertical, channel_order)
            low, high = np.flip(box.low, axes), np.flip(box.high, axes)
            return spaces.Box(low=low, high=high, shape=box.shape, dtype=box.dtype)

        return map_fields(obs_space, fields, flipped), act_space, rew_space

    def _setup(self) -> None:
        self._axes = {
            path: _flip_axes(sub.shape, self.horizontal, self.vertical, self.channel_order)
            for path, sub in leaf_spaces(self.env.observation_space, self.fields).items()
        }

    def _flip(self, path: FieldPath, frame: Any) -> np.ndarray:
        return np.ascontiguousarray(np.flip(np.asarray(frame), self._axes[path]))

    def observation(self, obs: Any) -> Any:
        return map_paths(obs, self.fields, self._flip)
