"""LunarLander (Box2D), discrete or continuous, with statically declared spaces."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.box2d.lunar_lander import LunarLander
from gymnasium.wrappers import TimeLimit

from ding.envs import ENV_REGISTRY, DingEnvWrapper, EnvSpaces
from dizoo.flags import bool_flag

# x, y, vx, vy, angle, angular velocity, left leg contact, right leg contact
_OBS_HIGH = np.array([2.5, 2.5, 10.0, 10.0, 2 * math.pi, 10.0, 1.0, 1.0], dtype=np.float32)
_OBS_LOW = np.array([-2.5, -2.5, -10.0, -10.0, -2 * math.pi, -10.0, 0.0, 0.0], dtype=np.float32)


@ENV_REGISTRY.register("lunarlander")
class LunarLanderEnv(DingEnvWrapper):
    """Land a craft on a pad: 8 float32 observations; ``continuous`` picks the action space.

    ``continuous=False``: 4 actions (nothing, left engine, main engine, right engine).
    ``continuous=True``: Box(-1, 1, (2,)) for (main throttle, lateral throttle). Episodes end on landing,
    crashing or leaving the screen, or at ``max_episode_steps`` (1000, as in LunarLander-v3).
    ``gravity``, ``enable_wind``, ``wind_power`` and ``turbulence_power`` are passed to the simulator.

    Example:
        >>> LunarLanderEnv.spaces_from_config({}).shapes
        ((8,), 4, (1,))
        >>> LunarLanderEnv.spaces_from_config({'continuous': True}).action
        Box(-1.0, 1.0, (2,), float32)
    """

    config: ClassVar[dict[str, Any]] = {
        "env_id": "LunarLander-v3",  # a label only: ``continuous`` picks the action space
        "continuous": False,
        "max_episode_steps": 1000,
        "gravity": -10.0,
        "enable_wind": False,
        "wind_power": 15.0,
        "turbulence_power": 1.5,
        "env_wrapper": "default",
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg=cfg or {})

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        obs = spaces.Box(_OBS_LOW, _OBS_HIGH, dtype=np.float32)
        if bool_flag(cfg, "continuous", "lunarlander"):
            return EnvSpaces(obs, spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32))
        return EnvSpaces(obs, spaces.Discrete(4))

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        cfg = self._cfg
        env = LunarLander(
            render_mode="rgb_array" if render else None,
            continuous=bool_flag(cfg, "continuous", "lunarlander"),
            gravity=float(cfg.gravity),
            enable_wind=bool_flag(cfg, "enable_wind", "lunarlander"),
            wind_power=float(cfg.wind_power),
            turbulence_power=float(cfg.turbulence_power),
        )
        return TimeLimit(env, max_episode_steps=int(cfg.max_episode_steps))
