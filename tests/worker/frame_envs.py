"""Envs of random frames for replay-buffer tests, stacked by ding's real ``frame_stack`` wrapper.

``FramesEnv`` draws each frame and reward from its seeded generator, terminates an episode with probability
``p_end`` per step and is cut (truncated) by a time limit; ``fail_at`` makes its step number ``fail_at``
(counted over the instance's life) raise, which an env manager turns into an abnormal timestep.
"""

from __future__ import annotations

import functools
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ding.envs import DingEnvWrapper

FRAMES_ID = "DingTest/RandomFrames-v0"


class FramesEnv(gym.Env[np.ndarray, np.int64]):
    def __init__(
        self,
        frame_shape: tuple[int, ...] = (3, 4),
        dtype: str = "uint8",
        p_end: float = 0.15,
        fail_at: int | None = None,
        reset_log: str | None = None,
    ) -> None:
        high = 255 if dtype == "uint8" else 1.0
        self.observation_space = spaces.Box(0, high, tuple(frame_shape), np.dtype(dtype))
        self.action_space = spaces.Discrete(3)
        self._dtype = np.dtype(dtype)
        self._p_end = p_end
        self._fail_at = fail_at
        self._reset_log = reset_log
        self._life_steps = 0

    def _frame(self) -> np.ndarray:
        values = self.np_random.integers(0, 256, self.observation_space.shape)
        return (values if self._dtype == np.uint8 else values / 255).astype(self._dtype)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if self._reset_log is not None:
            with open(self._reset_log, "a") as file:
                file.write("reset\n")
        return self._frame(), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        self._life_steps += 1
        if self._life_steps == self._fail_at:
            raise RuntimeError(f"injected failure at step {self._life_steps}")
        reward = float(self.np_random.normal() * 10.0 ** int(self.np_random.integers(-3, 3)))
        terminated = bool(self.np_random.random() < self._p_end)
        return self._frame(), reward, terminated, False, {}


gym.register(id=FRAMES_ID, entry_point="tests.worker.frame_envs:FramesEnv", max_episode_steps=6)


def frames_cfg(n_frames: int = 4, **env_kwargs: Any) -> dict[str, Any]:
    """A ``DingEnvWrapper`` config: ``FramesEnv`` with ``env_kwargs``, then ``frame_stack(n_frames)``."""
    return {
        "env_id": FRAMES_ID,
        "env_kwargs": env_kwargs,
        "env_wrapper": [{"type": "frame_stack", "kwargs": {"n_frames": n_frames}}],
    }


def frames_env(n_frames: int = 4, **env_kwargs: Any) -> Any:
    """A constructor for an env manager."""
    return functools.partial(DingEnvWrapper, cfg=frames_cfg(n_frames, **env_kwargs))
