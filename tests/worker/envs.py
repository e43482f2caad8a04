"""A small deterministic env for worker tests: it counts steps and can fail at a chosen one."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from ding.envs import BaseEnv, BaseEnvTimestep, EnvSpaces


class CountEnv(BaseEnv):
    """Observation ``[t, tag]``; reward ``reward`` per step; episodes terminate after ``episode_len`` steps.

    With ``fail_at`` set, the instance's step number ``fail_at`` (counted over its life) raises.
    ``info['eval_episode_return']`` at an episode's end is ``info_return`` when given, else the summed reward.
    """

    config: ClassVar[dict[str, Any]] = {
        "episode_len": 5,
        "reward": 1.0,
        "tag": 0,
        "fail_at": None,
        "info_return": None,
    }

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        return EnvSpaces(spaces.Box(-np.inf, np.inf, (2,), np.float32), spaces.Discrete(2))

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg)
        self.t = 0
        self.life_steps = 0
        self.summed = 0.0

    def _obs(self) -> np.ndarray:
        return np.array([self.t, self._cfg.tag], dtype=np.float32)

    def reset(self) -> np.ndarray:
        self.t = 0
        self.summed = 0.0
        return self._obs()

    def step(self, action: Any) -> BaseEnvTimestep:
        self.life_steps += 1
        if self.life_steps == self._cfg.fail_at:
            raise RuntimeError(f"injected failure at step {self.life_steps}")
        self.t += 1
        self.summed += self._cfg.reward
        done = self.t >= self._cfg.episode_len
        info: dict[str, Any] = {}
        if done:
            info_return = self._cfg.info_return
            info["eval_episode_return"] = np.array([self.summed if info_return is None else info_return], np.float32)
        reward = np.array([self._cfg.reward], dtype=np.float32)
        return BaseEnvTimestep(self._obs(), reward, done, info, terminated=done)

    def close(self) -> None:
        pass


def count_env(**cfg: Any) -> Any:
    """A constructor for an env manager: ``count_env(tag=1, fail_at=3)``."""
    return functools.partial(CountEnv, cfg=cfg)
