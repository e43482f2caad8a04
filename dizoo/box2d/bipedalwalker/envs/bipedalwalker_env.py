"""BipedalWalker (Box2D), normal or hardcore terrain, with statically declared spaces."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.box2d.bipedal_walker import BipedalWalker
from gymnasium.wrappers import TimeLimit

from ding.envs import ENV_REGISTRY, DingEnvWrapper, EnvSpaces
from dizoo.flags import bool_flag

_PI = math.pi
# hull angle, angular velocity, vx, vy; per leg: hip angle, hip speed, knee angle, knee speed, ground contact;
# then 10 lidar range readings.
_LEG_LOW = [-_PI, -5.0, -_PI, -5.0, 0.0]
_LEG_HIGH = [_PI, 5.0, _PI, 5.0, 5.0]
_OBS_LOW = np.array([-_PI, -5.0, -5.0, -5.0, *_LEG_LOW, *_LEG_LOW, *[-1.0] * 10], dtype=np.float32)
_OBS_HIGH = np.array([_PI, 5.0, 5.0, 5.0, *_LEG_HIGH, *_LEG_HIGH, *[1.0] * 10], dtype=np.float32)
# Episode lengths of BipedalWalker-v3 and BipedalWalkerHardcore-v3.
_DEFAULT_STEPS = {False: 1600, True: 2000}


@ENV_REGISTRY.register("bipedalwalker")
class BipedalWalkerEnv(DingEnvWrapper):
    """Walk a two-legged robot across terrain: 24 float32 observations, 4 joint torques in [-1, 1].

    ``hardcore=True`` adds stumps, pits and stairs (BipedalWalkerHardcore-v3). Falling ends the episode
    with reward -100; ``max_episode_steps=None`` picks the variant's length (1600 or 2000).

    Example:
        >>> BipedalWalkerEnv.spaces_from_config({'hardcore': True}).shapes
        ((24,), (4,), (1,))
    """

    config: ClassVar[dict[str, Any]] = {
        "env_id": "BipedalWalker-v3",  # a label only: ``hardcore`` picks the terrain
        "hardcore": False,
        "max_episode_steps": None,
        "env_wrapper": "default",
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg=cfg or {})

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        bool_flag(cfg, "hardcore", "bipedalwalker")
        return EnvSpaces(
            spaces.Box(_OBS_LOW, _OBS_HIGH, dtype=np.float32),
            spaces.Box(-1.0, 1.0, shape=(4,), dtype=np.float32),
        )

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        hardcore = bool_flag(self._cfg, "hardcore", "bipedalwalker")
        env = BipedalWalker(render_mode="rgb_array" if render else None, hardcore=hardcore)
        steps = self._cfg.max_episode_steps
        return TimeLimit(env, max_episode_steps=int(steps) if steps is not None else _DEFAULT_STEPS[hardcore])
