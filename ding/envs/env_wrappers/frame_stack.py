"""The ``frame_stack`` wrapper: the last ``n_frames`` observations on a new leading axis.

Works on any Box observation (images or vectors), applied per ``fields``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.env_wrappers.arguments import PositiveInt
from ding.envs.env_wrappers.base import DingWrapper, SpaceTriple, episode_began, register_wrapper
from ding.envs.env_wrappers.fields import Fields, map_fields
from ding.envs.env_wrappers.image import leaf_spaces, map_paths
from ding.envs.env_wrappers.rule import SpaceKindError, describe_space

# ---------------------------------------------------------------------------------------------
# frame_stack
# ---------------------------------------------------------------------------------------------


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

    Oldest first, newest at index -1; a reset fills the stack with the reset observation (and so does the first
    observation of an episode begun inside ``step``). Any
    shape and dtype; bounds are repeated. Each call returns a new array that callers may keep.

    Example:
        >>> from gymnasium.spaces import Box, Discrete
        >>> FrameStackWrapper.new_space(Box(0.0, 1.0, (84, 84), np.float32), Discrete(6), None)[0]
        Box(0.0, 1.0, (4, 84, 84), float32)
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        n_frames: PositiveInt = 4,
        fields: Fields = None,
    ) -> SpaceTriple:
        def stacked(space: spaces.Space[Any]) -> spaces.Box:
            if not isinstance(space, spaces.Box):
                hint = " (for a Dict observation, name the arrays with fields=[...])" if fields is None else ""
                what = describe_space(space, "observation")
                raise SpaceKindError(f"frame_stack needs an array (Box) observation; got {what}{hint}")
            shape = (n_frames, *space.shape)
            low = np.broadcast_to(space.low, shape).copy()
            high = np.broadcast_to(space.high, shape).copy()
            return spaces.Box(low=low, high=high, shape=shape, dtype=space.dtype)

        return map_fields(obs_space, fields, stacked), act_space, rew_space

    def _setup(self) -> None:
        self._buffers = {
            path: _FrameBuffer(self.n_frames, sub.shape, sub.dtype)  # type: ignore[arg-type]
            for path, sub in leaf_spaces(self.env.observation_space, self.fields).items()
        }

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return map_paths(obs, self.fields, lambda path, frame: self._buffers[path].fill(frame)), info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if episode_began(info) is not None:  # a new episode's first frame: the stack starts over, as at reset
            stacked = map_paths(obs, self.fields, lambda path, frame: self._buffers[path].fill(frame))
        else:
            stacked = map_paths(obs, self.fields, lambda path, frame: self._buffers[path].push(frame))
        return stacked, reward, terminated, truncated, info
