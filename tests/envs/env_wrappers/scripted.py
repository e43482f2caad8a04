"""A scripted env shared by the tests of the Atari-style and action-repeating wrappers."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

FRAME_SHAPE = (2, 3)


class ScriptedEnv(gym.Env[Any, Any]):
    """A deterministic env: step ``t`` (1-based) shows ``frames[t]`` and pays ``t`` (or ``(t, -t, 0.5)``).

    ``frames[0]`` is the reset frame; without ``frames`` the frame at ``t`` is filled with ``t``.
    Records every action it receives and counts resets.
    """

    def __init__(
        self,
        frames: list[np.ndarray] | None = None,
        episode_len: int = 1000,
        truncate_len: int | None = None,
        vector_reward: bool = False,
        report_lives: bool = True,
    ) -> None:
        self.frames = frames
        self.episode_len = episode_len
        self.truncate_len = truncate_len
        self.vector_reward = vector_reward
        self.report_lives = report_lives
        self.observation_space = spaces.Box(0, 255, FRAME_SHAPE, np.uint8)
        self.action_space = spaces.Discrete(4)
        if vector_reward:
            self.reward_space = spaces.Box(-np.inf, np.inf, (3,), np.float32)
        self.actions: list[int] = []
        self.resets = 0
        self.t = 0

    def _frame(self) -> np.ndarray:
        if self.frames is not None:
            return self.frames[self.t].copy()
        return np.full(FRAME_SHAPE, self.t % 256, dtype=np.uint8)

    def _info(self) -> dict[str, Any]:
        return {"lives": 0} if self.report_lives else {}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        self.resets += 1
        return self._frame(), self._info()

    def step(self, action: int) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        self.actions.append(int(action))
        self.t += 1
        reward: Any = np.array([self.t, -self.t, 0.5], np.float32) if self.vector_reward else float(self.t)
        terminated = self.t >= self.episode_len
        truncated = self.truncate_len is not None and self.t >= self.truncate_len
        return self._frame(), reward, terminated, truncated, self._info()
