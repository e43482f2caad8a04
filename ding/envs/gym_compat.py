"""Adapter presenting an old-gym-API env (4-tuple ``step``, ``reset`` without info) as a gymnasium env."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


def convert_space(space: Any) -> spaces.Space[Any]:
    """Convert a gym (or gymnasium) space to the equivalent gymnasium space, by its kind.

    Old gym spaces are recognised by class name and attributes, so gym itself need not be installed.
    """
    if isinstance(space, spaces.Space):
        return space
    kind = type(space).__name__
    if kind == "Box":
        return spaces.Box(np.asarray(space.low), np.asarray(space.high), dtype=np.dtype(space.dtype))
    if kind == "Discrete":
        return spaces.Discrete(int(space.n), start=int(getattr(space, "start", 0)))
    if kind == "MultiDiscrete":
        return spaces.MultiDiscrete(np.asarray(space.nvec))
    if kind == "MultiBinary":
        return spaces.MultiBinary(space.n)
    if kind == "Dict":
        return spaces.Dict({key: convert_space(sub) for key, sub in space.spaces.items()})
    if kind == "Tuple":
        return spaces.Tuple(tuple(convert_space(sub) for sub in space.spaces))
    raise TypeError(
        f"cannot convert space {space!r}; supported: Box, Discrete, MultiDiscrete, MultiBinary, Dict, Tuple"
    )


def is_old_api_env(env: Any) -> bool:
    """True for an object with ``step``/``reset`` that is not a gymnasium env (old gym API)."""
    return (
        not isinstance(env, gym.Env) and callable(getattr(env, "step", None)) and callable(getattr(env, "reset", None))
    )


class OldGymAPIAdapter(gym.Env[Any, Any]):
    """Run an old-API env through the gymnasium API.

    ``done`` becomes ``terminated`` unless ``info['TimeLimit.truncated']`` marks a time-limit cut,
    which becomes ``truncated``; ``reset(seed=...)`` calls the env's ``seed`` first when it has one.
    """

    def __init__(self, env: Any) -> None:
        if not is_old_api_env(env):
            raise TypeError(f"OldGymAPIAdapter needs an object with step() and reset(), got {type(env).__name__}")
        self.old_env = env
        self.observation_space = convert_space(env.observation_space)
        self.action_space = convert_space(env.action_space)
        self.metadata = dict(getattr(env, "metadata", {}) or {})
        self.render_mode = getattr(env, "render_mode", None)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None and callable(getattr(self.old_env, "seed", None)):
            self.old_env.seed(seed)
        result = self.old_env.reset()
        if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict):
            return result[0], result[1]
        return result, {}

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        result = self.old_env.step(action)
        if len(result) != 4:
            raise ValueError(
                f"old-API env {type(self.old_env).__name__}.step returned {len(result)} values; expected "
                "(obs, reward, done, info)"
            )
        obs, reward, done, info = result
        info = dict(info or {})
        truncated = bool(done) and bool(info.get("TimeLimit.truncated", False))
        return obs, reward, bool(done) and not truncated, truncated, info

    def render(self) -> Any:
        return self.old_env.render()

    def close(self) -> None:
        close = getattr(self.old_env, "close", None)
        if callable(close):
            close()
