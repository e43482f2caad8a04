"""Acrobot with statically declared spaces."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.classic_control import AcrobotEnv as GymAcrobot
from gymnasium.wrappers import TimeLimit

from ding.envs import ENV_REGISTRY, DingEnvWrapper, EnvSpaces
from ding.envs.base_env import env_wrapper_key
from ding.utils.accepts import count, optional, typed
from dizoo.env_ids import check_env_id

# cos/sin of both joint angles, then the two angular velocities (bounded at 4 pi and 9 pi rad/s).
_OBS_HIGH = np.array([1.0, 1.0, 1.0, 1.0, 4 * math.pi, 9 * math.pi], dtype=np.float32)
ACROBOT_IDS = ("Acrobot-v1",)


@ENV_REGISTRY.register("acrobot")
class AcrobotEnv(DingEnvWrapper):
    """Swing a two-link chain up past a line: 6 float32 observations, 3 torques (-1, 0, +1), reward -1 per step.

    Episodes end when the tip reaches the line or at ``max_episode_steps`` (500, as in Acrobot-v1).

    Example:
        >>> AcrobotEnv.spaces_from_config({}).shapes
        ((6,), 3, (1,))
    """

    config: ClassVar[dict[str, Any]] = {
        "env_id": typed("Acrobot-v1"),
        "max_episode_steps": optional(count(500), note="None: no time limit"),
        "env_wrapper": env_wrapper_key("default"),
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg=cfg or {})

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        check_env_id(cfg.get("env_id", "Acrobot-v1"), ACROBOT_IDS, "acrobot")
        return EnvSpaces(spaces.Box(-_OBS_HIGH, _OBS_HIGH, dtype=np.float32), spaces.Discrete(3))

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        env = GymAcrobot(render_mode="rgb_array" if render else None)
        return TimeLimit(env, max_episode_steps=int(self._cfg.max_episode_steps))


AcroBotEnv = AcrobotEnv
"""DI-engine's spelling of the class name."""
