"""Pendulum with statically declared spaces (DI-engine's ``pendulum`` env), continuous or with 11 discrete torques."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.classic_control import PendulumEnv as GymPendulum
from gymnasium.wrappers import TimeLimit, TransformAction

from ding.envs import ENV_REGISTRY, DingEnvWrapper, EnvSpaces
from ding.envs.base_env import env_wrapper_key
from ding.envs.env_wrappers import WrapperChain
from ding.utils.accepts import count, optional, typed
from dizoo.act_scale import ACT_SCALE_STEPS
from dizoo.action_grid import grid_action_space, grid_discrete_action
from dizoo.env_ids import check_env_id
from dizoo.flags import bool_flag

_OBS_HIGH = np.array([1.0, 1.0, 8.0], dtype=np.float32)
_TORQUE = spaces.Box(-2.0, 2.0, shape=(1,), dtype=np.float32)
_UNIT = spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)
PENDULUM_IDS = ("Pendulum-v1",)
DISCRETE_ACTIONS = 11
"""The number of torques of the discrete Pendulum (``continuous=False``), as in DI-engine."""


@ENV_REGISTRY.register("pendulum")
class PendulumEnv(DingEnvWrapper):
    """Swing a pendulum upright: observation (cos, sin, angular velocity), torque in [-2, 2].

    - ``act_scale`` (default True, as in DI-engine): the agent acts in [-1, 1], clipped into it, then mapped onto the
      torque range (:data:`~dizoo.act_scale.ACT_SCALE_STEPS`: an action outside [-1, 1] is clipped, not refused).
    - ``continuous=False`` (DI-engine's key): ``Discrete(11)``; action ``i`` is the torque ``-2 + 0.4 i``, the
      11 evenly spaced torques from -2 to 2. As in DI-engine, with ``act_scale=False`` the 11 values span
      [-1, 1] instead (the normalized range, applied as torque unscaled).

    Example:
        >>> PendulumEnv.spaces_from_config({}).action
        ClippedBox(-1.0, 1.0, (1,), float32)
        >>> PendulumEnv.spaces_from_config({'continuous': False}).action
        Discrete(11)
    """

    config: ClassVar[dict[str, Any]] = {
        "env_id": typed("Pendulum-v1"),
        "max_episode_steps": optional(count(200), note="None: no time limit"),
        "act_scale": True,
        "continuous": True,
        "env_wrapper": env_wrapper_key("default"),
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg=cfg or {})

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        check_env_id(cfg.get("env_id", "Pendulum-v1"), PENDULUM_IDS, "pendulum")
        obs = spaces.Box(-_OBS_HIGH, _OBS_HIGH, dtype=np.float32)
        if bool_flag(cfg, "continuous", "pendulum", default=True):
            return EnvSpaces(obs, _TORQUE)
        return EnvSpaces(obs, grid_action_space(_torque_grid_box(cfg), DISCRETE_ACTIONS))

    @classmethod
    def wrapper_chain(cls, cfg: Mapping[str, Any]) -> WrapperChain:
        chain = list(super().wrapper_chain(cfg) or [])  # type: ignore[arg-type]
        continuous = bool_flag(cfg, "continuous", "pendulum", default=True)
        if continuous and bool_flag(cfg, "act_scale", "pendulum", default=True):
            chain.extend(ACT_SCALE_STEPS)
        return chain

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        env: gym.Env[Any, Any] = TimeLimit(
            GymPendulum(render_mode="rgb_array" if render else None),
            max_episode_steps=int(self._cfg.max_episode_steps),
        )
        if bool_flag(self._cfg, "continuous", "pendulum", default=True):
            return env
        if _torque_grid_box(self._cfg) is _UNIT:
            env = TransformAction(env, lambda action: action, _UNIT)  # DI-engine's unscaled discrete torques
        return grid_discrete_action(env, DISCRETE_ACTIONS)


def _torque_grid_box(cfg: Mapping[str, Any]) -> spaces.Box:
    """The range the discrete torques span: the torque range, or [-1, 1] without ``act_scale``."""
    return _TORQUE if bool_flag(cfg, "act_scale", "pendulum", default=True) else _UNIT
