"""Envs written DI-engine's way, for the tests of managers running them.

- :class:`PlainEnv`: not a ``BaseEnv``; spaces are attributes set in ``__init__``, rewards are int64
  arrays, ``reset`` takes ``stat=...``, and string actions inject faults (``"error"`` raises,
  ``"catched_error"`` returns the env's own abnormal timestep, ``"none_obs"`` returns ``None`` as the
  observation). Observations are deterministic: ``[t, t, t] / 10`` at step ``t`` of an episode.
- :class:`PropertySpacesEnv`: a ``BaseEnv`` subclass that declares no ``raw_spaces`` and states its
  spaces as properties, first known after ``reset`` (as many DI-engine envs do).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from ding.envs import BaseEnv, BaseEnvTimestep

OBS_SPACE = spaces.Box(-1.0, 1.0, (3,), np.float32)
ACTION_SPACE = spaces.Box(-2.0, 2.0, (1,), np.float32)
REWARD_SPACE = spaces.Box(-1.0, 1.0, (1,), np.float32)
EPISODE_LEN = 3


class PlainEnv:
    """A DI-engine-style env that is no ``BaseEnv``: see the module docstring."""

    def __init__(self, cfg: Mapping[str, Any]) -> None:
        self._name = cfg["name"]
        self._stat: Any = None
        self._seed: int | None = None
        self._data_count = 0
        self.t = 0
        self.closed = False
        self.observation_space = OBS_SPACE
        self.action_space = ACTION_SPACE
        self.reward_space = REWARD_SPACE

    @property
    def name(self) -> str:
        return self._name

    def reset(self, stat: Any = None) -> np.ndarray:
        if stat == "error":
            raise RuntimeError("reset asked to fail")
        self._stat = stat
        self.t = 0
        return np.zeros(3, np.float32)

    def step(self, action: Any) -> BaseEnvTimestep:
        if isinstance(action, str) and action == "error":
            raise RuntimeError(f"env {self._name} asked to fail")
        if isinstance(action, str) and action == "catched_error":
            return BaseEnvTimestep(None, None, True, {"abnormal": True})
        self.t += 1
        self._data_count += 1
        obs = None if isinstance(action, str) and action == "none_obs" else np.full(3, self.t / 10, np.float32)
        reward = np.array([self.t % 2], dtype=np.int64)
        return BaseEnvTimestep(obs, reward, self.t >= EPISODE_LEN, {"name": self._name, "t": self.t})

    def seed(self, seed: int) -> None:
        self._seed = seed

    def close(self) -> None:
        self.closed = True

    def reward_shaping(self, transitions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**item, "shaped_by": self._name} for item in transitions]

    def where(self) -> int:
        """The process this env lives in (a method not in method_name_list)."""
        return os.getpid()


class PropertySpacesEnv(BaseEnv):
    """A ``BaseEnv`` without ``raw_spaces``: its spaces are properties, known once ``reset`` ran."""

    config: ClassVar[dict[str, Any]] = {"episode_len": EPISODE_LEN}

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg)
        self._observation_space: spaces.Space[Any] | None = None
        self.t = 0

    @property
    def observation_space(self) -> spaces.Space[Any]:
        if self._observation_space is None:
            raise AttributeError("observation_space is known after reset()")
        return self._observation_space

    @property
    def action_space(self) -> spaces.Space[Any]:
        return spaces.Discrete(2)

    @property
    def reward_space(self) -> spaces.Space[Any]:
        return REWARD_SPACE

    def reset(self) -> np.ndarray:
        self._observation_space = OBS_SPACE
        self.t = 0
        start = 0 if self._seed is None else self._seed % 5
        return np.full(3, start / 10, np.float32)

    def step(self, action: Any) -> BaseEnvTimestep:
        self.t += 1
        obs = np.full(3, self.t / 10, np.float32)
        done = self.t >= self._cfg.episode_len
        return BaseEnvTimestep(obs, np.array([float(action)], np.float32), done, {})

    def close(self) -> None:
        pass
