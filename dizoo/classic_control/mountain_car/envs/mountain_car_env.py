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
from ding.envs.base_env import env_wrapper_key
from ding.utils.accepts import count, optional
from dizoo.env_ids import resolve_variant

# (position, velocity)
_OBS_LOW = np.array([-1.2, -0.07], dtype=np.float32)
_OBS_HIGH = np.array([0.6, 0.07], dtype=np.float32)
MOUNTAIN_CAR_IDS = {"MountainCar-v0": False, "MountainCarContinuous-v0": True}
"""gymnasium's ids and the ``continuous`` value each stands for."""
# Episode lengths of MountainCar-v0 and MountainCarContinuous-v0.
_DEFAULT_STEPS = {False: 200, True: 999}


@ENV_REGISTRY.register("mountain_car")
class MountainCarEnv(DingEnvWrapper):
    """Drive an underpowered car up a hill: observation (position, velocity).

    ``continuous=False`` (MountainCar-v0): 3 actions (push left, none, right), reward -1 per step, 200 steps.
    ``continuous=True`` (MountainCarContinuous-v0): a force in [-1, 1], reward +100 at the flag minus
    0.1 * force², 999 steps. ``env_id`` picks the variant too (None: the one ``continuous`` says, discrete
    by default); given both, they must agree. ``max_episode_steps=None`` picks that variant's length.
    ``MountainCarEnv()`` with no config is the discrete car, as in DI-engine.

    Example:
        >>> MountainCarEnv.spaces_from_config({}).shapes
        ((2,), 3, (1,))
        >>> MountainCarEnv.spaces_from_config({'env_id': 'MountainCarContinuous-v0'}).action
        Box(-1.0, 1.0, (1,), float32)
    """

    config: ClassVar[dict[str, Any]] = {
        "env_id": optional(str, note="None: from continuous"),
        "continuous": optional(bool, note="None: from env_id"),
        "max_episode_steps": optional(count(), note="None: the gymnasium id's limit"),
        "env_wrapper": env_wrapper_key("default"),
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg=cfg or {})

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        obs = spaces.Box(_OBS_LOW, _OBS_HIGH, dtype=np.float32)
        if _is_continuous(cfg):
            return EnvSpaces(obs, spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32))
        return EnvSpaces(obs, spaces.Discrete(3))

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        continuous = _is_continuous(self._cfg)
        render_mode = "rgb_array" if render else None
        env: gym.Env[Any, Any] = (
            Continuous_MountainCarEnv(render_mode=render_mode)
            if continuous
            else GymMountainCar(render_mode=render_mode)
        )
        steps = self._cfg.max_episode_steps
        return TimeLimit(env, max_episode_steps=int(steps) if steps is not None else _DEFAULT_STEPS[continuous])


def _is_continuous(cfg: Mapping[str, Any]) -> bool:
    return resolve_variant(cfg, "continuous", MOUNTAIN_CAR_IDS, "mountain_car")[1]
