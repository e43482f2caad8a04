"""MountainCar, discrete or continuous, with statically declared spaces."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.classic_control import Continuous_MountainCarEnv
from gymnasium.envs.classic_control import MountainCarEnv as GymMountainCar
from gymnasium.wrappers import TimeLimit

from ding.envs import ENV_REGISTRY, DingEnvWrapper, EnvSpaces
from dizoo.flags import bool_flag

# (position, velocity)
_OBS_LOW = np.array([-1.2, -0.07], dtype=np.float32)
_OBS_HIGH = np.array([0.6, 0.07], dtype=np.float32)
# Episode lengths of MountainCar-v0 and MountainCarContinuous-v0.
_DEFAULT_STEPS = {False: 200, True: 999}


@ENV_REGISTRY.register("mountain_car")
class MountainCarEnv(DingEnvWrapper):
    """Drive an underpowered car up a hill: observation (position, velocity).

    ``continuous=False`` (MountainCar-v0): 3 actions (push left, none, right), reward -1 per step, 200 steps.
    ``continuous=True`` (MountainCarContinuous-v0): a force in [-1, 1], reward +100 at the flag minus
    0.1 * force², 999 steps. ``max_episode_steps=None`` picks that variant's length.

    Example:
        >>> MountainCarEnv.spaces_from_config({}).shapes
        ((2,), 3, (1,))
        >>> MountainCarEnv.spaces_from_config({'continuous': True}).action
        Box(-1.0, 1.0, (1,), float32)
    """

    config: ClassVar[dict[str, Any]] = {
        "env_id": "MountainCar-v0",  # a label only: ``continuous`` picks the simulator
        "continuous": False,
        "max_episode_steps": None,
        "env_wrapper": "default",
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg=cfg or {})

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        obs = spaces.Box(_OBS_LOW, _OBS_HIGH, dtype=np.float32)
        if bool_flag(cfg, "continuous", "mountain_car"):
            return EnvSpaces(obs, spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32))
        return EnvSpaces(obs, spaces.Discrete(3))

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        continuous = bool_flag(self._cfg, "continuous", "mountain_car")
        render_mode = "rgb_array" if render else None
        env: gym.Env[Any, Any] = (
            Continuous_MountainCarEnv(render_mode=render_mode)
            if continuous
            else GymMountainCar(render_mode=render_mode)
        )
        steps = self._cfg.max_episode_steps
        return TimeLimit(env, max_episode_steps=int(steps) if steps is not None else _DEFAULT_STEPS[continuous])
