"""Test envs and reference frame operations shared by the image wrapper tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
import gymnasium as gym
import numpy as np
from gymnasium import spaces


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


def random_frames(shape: tuple[int, ...], n: int = 3, seed: int = 0) -> list[np.ndarray]:
    """``n`` uint8 frames of ``shape`` with uniformly random pixels."""
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, size=shape, dtype=np.uint8) for _ in range(n)]


def playback_env(frames: list[np.ndarray], low: Any = 0, high: Any = 255) -> FnEnv:
    """An env whose observations cycle through ``frames``, declared in [``low``, ``high``]."""
    space = spaces.Box(low, high, frames[0].shape, frames[0].dtype)
    return FnEnv(space, lambda t: frames[t % len(frames)])


def area_resize(frame: np.ndarray, h: int, w: int) -> np.ndarray:
    """OpenCV's INTER_AREA resize of ``frame`` to ``h`` x ``w``."""
    return np.asarray(cv2.resize(frame, (w, h), interpolation=cv2.INTER_AREA))


def rgb_gray(frame: np.ndarray) -> np.ndarray:
    """OpenCV's RGB to gray conversion of an HWC ``frame``."""
    return np.asarray(cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY))
