"""Deterministic fault-injection envs: raise, hang, exit, stall, or report a non-data info at a chosen step.

A fault fires when the env instance reaches step ``at_step`` (1-based, counted over the instance's
life); with ``once_path`` it fires only the first time across every process and instance (a marker
file records that it happened), so retries and renewed envs run clean afterwards. ``raise_every``
raises at every step from the ``at_step``-th on.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from ding.envs import BaseEnv, BaseEnvTimestep, EnvSpaces


class InjectedFault(RuntimeError):
    """The exception a FaultyEnv raises on purpose."""


class Handle:
    """A Python object that is not data: what a FaultyEnv with fault ``object_info`` puts in its info."""


def explode(step: int) -> None:
    raise InjectedFault(f"injected failure at step {step}")


class FaultyEnv(BaseEnv):
    """Observation: [step count, instance id, pid]; reward 1; episodes of ``episode_len`` steps."""

    config: ClassVar[dict[str, Any]] = {
        # None | "raise" | "raise_every" | "hang" | "exit" | "slow_reset" | "raise_reset" | "object_info"
        "fault": None,
        "at_step": 3,
        "once_path": None,
        "episode_len": 5,
    }
    instances = 0

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        return EnvSpaces(spaces.Box(-np.inf, np.inf, (3,), np.float32), spaces.Discrete(2))

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg)
        FaultyEnv.instances += 1
        self.instance = FaultyEnv.instances
        self.total_steps = 0
        self.t = 0

    def _obs(self) -> np.ndarray:
        return np.array([self.t, self.instance, os.getpid()], dtype=np.float32)

    def _should_fire(self, kind: str, count: int) -> bool:
        if self._cfg.fault != kind or count != self._cfg.at_step:
            return False
        path = self._cfg.once_path
        if path is None:
            return True
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return False
        return True

    def reset(self) -> np.ndarray:
        self.t = 0
        if self._should_fire("slow_reset", self.instance):
            threading.Event().wait(3600)
        if self._should_fire("raise_reset", self.instance):
            raise InjectedFault("injected failure in reset")
        return self._obs()

    def step(self, action: Any) -> BaseEnvTimestep:
        self.total_steps += 1
        self.t += 1
        count = self.total_steps
        if self._should_fire("raise", count) or (self._cfg.fault == "raise_every" and count >= self._cfg.at_step):
            explode(count)
        if self._should_fire("hang", count):
            threading.Event().wait(3600)
        if self._should_fire("exit", count):
            os._exit(3)
        done = self.t >= self._cfg.episode_len
        info: dict[str, Any] = {"eval_episode_return": np.array([self.t], np.float32)} if done else {}
        if self._should_fire("object_info", count):
            info["handle"] = Handle()
        return BaseEnvTimestep(self._obs(), np.ones(1, np.float32), done, info)

    def close(self) -> None:
        pass
