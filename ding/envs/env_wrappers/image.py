"""Frame processing wrappers for image observations (HWC, CHW or HW), applied per ``fields``."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ding.envs.env_wrappers.base import DingObservationWrapper, ShapeTriple, SpaceTriple, register_wrapper
from ding.envs.env_wrappers.fields import Fields, map_fields
from ding.envs.spaces import Shape


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
