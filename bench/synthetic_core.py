"""The synthetic env's simulator and its gymnasium face, with nothing but the standard library, NumPy and gymnasium.

The peers' child processes (``bench/peer_child.py``) run in venvs of their own, without ding, and import this file
from its folder, so every contender steps the very same code. :mod:`bench.envs` puts ding's ``BaseEnv`` face on it
(and ding's ``ConfigError`` on its config errors); the config keys are described there.

Example:
    >>> env = GymSyntheticEnv({'obs_kind': 'vector4', 'episode_len': 2})
    >>> obs, _ = env.reset(seed=0)
    >>> [env.step(1)[3] for _ in range(2)]
    [False, True]
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

OBS_KINDS = ("vector4", "image")
IMAGE_SHAPE = (4, 84, 84)
BANK_SIZE = 16
"""Distinct frames an env cycles through."""
BANK_SEED = 20261122

SYNTHETIC_DEFAULTS: dict[str, Any] = {
    "step_cost_us": 0,
    "reset_cost_us": 0,
    "obs_kind": "vector4",
    "episode_len": 100,
    "hang_at_step": None,
}


def burn_cpu(microseconds: float) -> None:
    """Keep the CPU busy for ``microseconds`` (a busy loop on the monotonic clock; no sleeping)."""
    if microseconds <= 0:
        return
    deadline = time.perf_counter_ns() + int(microseconds * 1000)
    while time.perf_counter_ns() < deadline:
        pass


def hang_forever() -> None:
    """Never return (the process is expected to be killed from outside)."""
    while True:
        time.sleep(3600)


def _non_negative_int(cfg: Mapping[str, Any], key: str, minimum: int) -> int:
    value = cfg.get(key, SYNTHETIC_DEFAULTS[key])
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"synthetic env: {key} must be an int >= {minimum}, got {value!r}")
    return int(value)


def check_synthetic_config(cfg: Mapping[str, Any]) -> None:
    """Reject synthetic-env settings outside their accepted values, naming key and value (``ValueError``)."""
    _non_negative_int(cfg, "step_cost_us", 0)
    _non_negative_int(cfg, "reset_cost_us", 0)
    _non_negative_int(cfg, "episode_len", 1)
    if cfg.get("hang_at_step") is not None:
        _non_negative_int(cfg, "hang_at_step", 1)
    kind = cfg.get("obs_kind", SYNTHETIC_DEFAULTS["obs_kind"])
    if kind not in OBS_KINDS:
        raise ValueError(f"synthetic env: obs_kind must be one of {OBS_KINDS}, got {kind!r}")


def synthetic_spaces(cfg: Mapping[str, Any]) -> tuple[spaces.Box, spaces.Discrete]:
    """The simulator's observation and action spaces for ``cfg``: a 4-float vector or a 4x84x84 uint8 image; 2
    actions."""
    check_synthetic_config(cfg)
    if cfg.get("obs_kind", SYNTHETIC_DEFAULTS["obs_kind"]) == "image":
        return spaces.Box(0, 255, IMAGE_SHAPE, np.uint8), spaces.Discrete(2)
    return spaces.Box(-1.0, 1.0, (4,), np.float32), spaces.Discrete(2)


class SyntheticCore:
    """The simulator every face drives: a frame bank, a position, costs and an optional hang."""

    def __init__(self, cfg: Mapping[str, Any]) -> None:
        check_synthetic_config(cfg)
        full = {**SYNTHETIC_DEFAULTS, **{k: v for k, v in cfg.items() if k in SYNTHETIC_DEFAULTS}}
        self.step_cost_us = int(full["step_cost_us"])
        self.reset_cost_us = int(full["reset_cost_us"])
        self.episode_len = int(full["episode_len"])
        self.hang_at_step: int | None = None if full["hang_at_step"] is None else int(full["hang_at_step"])
        rng = np.random.default_rng(BANK_SEED)
        if full["obs_kind"] == "image":
            self.bank: np.ndarray = rng.integers(0, 256, (BANK_SIZE, *IMAGE_SHAPE), dtype=np.uint8)
        else:
            self.bank = rng.uniform(-1.0, 1.0, (BANK_SIZE, 4)).astype(np.float32)
        self.total_steps = 0
        self.t: int | None = None  # steps into the current episode; None before the first reset
        self.position = 0
        self.base_seed = 0
        self.episode = 0

    def observation(self) -> np.ndarray:
        """A fresh array (a copy, of the declared dtype) of the current frame."""
        return self.bank[self.position % BANK_SIZE].copy()

    def reset(self, seed: int | None) -> np.ndarray:
        """Start an episode: a given seed fixes the first frame; without one the episodes go on cycling."""
        burn_cpu(self.reset_cost_us)
        if seed is not None:
            self.base_seed, self.episode = int(seed), 0
        else:
            self.episode += 1
        self.position = self.base_seed + 7 * self.episode
        self.t = 0
        return self.observation()

    def step(self, action: int) -> tuple[np.ndarray, bool]:
        """Advance by one step; returns the observation and whether the episode hit its length."""
        if self.t is None:
            raise RuntimeError("synthetic env: step() called before reset()")
        if self.t >= self.episode_len:
            raise RuntimeError(f"synthetic env: step() after the episode ended (episode_len={self.episode_len})")
        if action not in (0, 1):
            raise ValueError(f"synthetic env: action must be 0 or 1, got {action!r}")
        self.total_steps += 1
        if self.hang_at_step is not None and self.total_steps == self.hang_at_step:
            hang_forever()
        burn_cpu(self.step_cost_us)
        self.t += 1
        self.position += 1 + action
        return self.observation(), self.t >= self.episode_len


class GymSyntheticEnv(gym.Env[np.ndarray, int]):
    """The simulator as a gymnasium env, for gymnasium's vector envs and the peers'.

    Example:
        >>> env = GymSyntheticEnv({'obs_kind': 'image'})
        >>> obs, info = env.reset(seed=3)
        >>> obs.shape, obs.dtype, env.observation_space.contains(obs)
        ((4, 84, 84), dtype('uint8'), True)
    """

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        cfg = dict(cfg or {})
        unknown = sorted(set(cfg) - set(SYNTHETIC_DEFAULTS))
        if unknown:
            raise ValueError(f"synthetic env: unknown keys {unknown}; accepted: {sorted(SYNTHETIC_DEFAULTS)}")
        self.observation_space, self.action_space = synthetic_spaces(cfg)
        self._core = SyntheticCore(cfg)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        return self._core.reset(seed), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        obs, ended = self._core.step(int(action))
        return obs, 1.0, False, ended, {}
