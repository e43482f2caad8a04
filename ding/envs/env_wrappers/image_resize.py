"""Wrappers that compute new pixel values: ``scaled_float_frame``, ``warp_frame``, ``frame_resize`` and ``gray_scale``.

Layout, dtype and bounds conventions are those of :mod:`ding.envs.env_wrappers.image`.
"""

from __future__ import annotations

import functools
from typing import Any

import cv2
import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ding.envs.env_wrappers.base import DingObservationWrapper, ShapeTriple, SpaceTriple, register_wrapper
from ding.envs.env_wrappers.fields import Fields, map_fields
from ding.envs.env_wrappers.image import (
    COLOR_CHANNELS,
    FieldPath,
    check_positive,
    field_layouts,
    image_box,
    image_dims,
    image_layout,
    image_shape,
    leaf_spaces,
    map_paths,
    resize_frame,
    to_gray,
    value_range_box,
)
from ding.envs.spaces import Shape
from ding.errors import ConfigError, ShapeRuleError

_INTERPOLATIONS = {
    "nearest": cv2.INTER_NEAREST,
    "linear": cv2.INTER_LINEAR,
    "area": cv2.INTER_AREA,
    "cubic": cv2.INTER_CUBIC,
}


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
    check_positive(size, "size", who)
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
        self._layouts = field_layouts(self.env.observation_space, fields, channel_order, "warp_frame")

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
            box = image_box(space, "warp_frame", opencv=True)
            return value_range_box(box, _warp_shape(box.shape, size, grayscale, channel_order))

        return map_fields(obs_space, fields, warped), act_space, rew_space

    def _warp(self, path: FieldPath, frame: Any) -> np.ndarray:
        frame = np.asarray(frame)
        layout = self._layouts[path]
        if self.grayscale:
            frame, layout = to_gray(frame, layout), "hw"
        return resize_frame(frame, layout, self.size, self.size, cv2.INTER_AREA)

    def observation(self, obs: Any) -> Any:
        return map_paths(obs, self.fields, self._warp)


# ---------------------------------------------------------------------------------------------
# frame_resize
# ---------------------------------------------------------------------------------------------


def _resize_shape(shape: Shape, height: int, width: int, interpolation: str, channel_order: str) -> tuple[int, ...]:
    who = "frame_resize"
    height = check_positive(height, "height", who)
    width = check_positive(width, "width", who)
    if interpolation not in _INTERPOLATIONS:
        raise ConfigError(
            f"{who}: interpolation must be one of {', '.join(map(repr, _INTERPOLATIONS))}; got {interpolation!r}"
        )
    layout = image_layout(shape, channel_order, who)
    return image_shape(layout, height, width, image_dims(shape, layout)[2])


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
        self._layouts = field_layouts(self.env.observation_space, fields, channel_order, "frame_resize")
        # Cubic interpolation overshoots at edges; clip it back into the declared range.
        self._clip: dict[FieldPath, tuple[Any, Any]] = {}
        if interpolation == "cubic":
            for path, sub in leaf_spaces(self.observation_space, fields).items():
                box = image_box(sub, "frame_resize")
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
            box = image_box(space, "frame_resize", opencv=True)
            return value_range_box(box, _resize_shape(box.shape, height, width, interpolation, channel_order))

        return map_fields(obs_space, fields, resized), act_space, rew_space

    def _resize(self, path: FieldPath, frame: Any) -> np.ndarray:
        out = resize_frame(np.asarray(frame), self._layouts[path], self.height, self.width, self._cv_interpolation)
        if self._clip:
            low, high = self._clip[path]
            np.clip(out, low, high, out=out)
        return out

    def observation(self, obs: Any) -> Any:
        return map_paths(obs, self.fields, self._resize)


# ---------------------------------------------------------------------------------------------
# gray_scale
# ---------------------------------------------------------------------------------------------


def _gray_shape(shape: Shape, keep_dim: bool, channel_order: str) -> tuple[int, ...]:
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

    def __init__(
        self, env: gym.Env[Any, Any], keep_dim: bool = False, channel_order: str = "auto", fields: Fields = None
    ) -> None:
        super().__init__(env)
        self._declare_spaces(keep_dim=keep_dim, channel_order=channel_order, fields=fields)
        self.fields = fields
        self._layouts = field_layouts(self.env.observation_space, fields, channel_order, "gray_scale")
        self._out_shapes = {path: sub.shape for path, sub in leaf_spaces(self.observation_space, fields).items()}

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
            box = image_box(space, "gray_scale", opencv=True)
            return value_range_box(box, _gray_shape(box.shape, keep_dim, channel_order))

        return map_fields(obs_space, fields, gray), act_space, rew_space

    def _gray(self, path: FieldPath, frame: Any) -> np.ndarray:
        return to_gray(np.asarray(frame), self._layouts[path]).reshape(self._out_shapes[path])

    def observation(self, obs: Any) -> Any:
        return map_paths(obs, self.fields, self._gray)
