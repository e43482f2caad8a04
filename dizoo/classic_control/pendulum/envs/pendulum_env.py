"""Pendulum with statically declared spaces (DI-engine's ``pendulum`` env)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.classic_control import PendulumEnv as GymPendulum
from gymnasium.wrappers import TimeLimit

from ding.envs import ENV_REGISTRY, DingEnvWrapper, EnvSpaces
from ding.envs.env_wrappers import WrapperChain

_OBS_HIGH = np.array([1.0, 1.0, 8.0], dtype=np.float32)


@ENV_REGISTRY.register("pendulum")
class PendulumEnv(DingEnvWrapper):
    """Swing a pendulum upright: observation (cos, sin, angular velocity), torque in [-2, 2].

    With ``act_scale`` (the default, as in DI-engine) the agent acts in [-1, 1] through the
    ``normalized_action`` wrapper.

    Example:
        >>> PendulumEnv.spaces_from_config({}).action
        Box(-1.0, 1.0, (1,), float32)
    """

    config: ClassVar[dict[str, Any]] = {
        "env_id": "Pendulum-v1",
        "max_episode_steps": 200,
        "act_scale": True,
        "env_wrapper": "default",
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg=cfg or {})

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        return EnvSpaces(
            spaces.Box(-_OBS_HIGH, _OBS_HIGH, dtype=np.float32),
            spaces.Box(-2.0, 2.0, shape=(1,), dtype=np.float32),
        )

    @classmethod
    def wrapper_chain(cls, cfg: Mapping[str, Any]) -> WrapperChain:
        chain = list(super().wrapper_chain(cfg) or [])  # type: ignore[arg-type]
        return [*chain, "normalized_action"] if cfg.get("act_scale", True) else chain

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        env = GymPendulum(render_mode="rgb_array" if render else None)
        return TimeLimit(env, max_episode_steps=int(self._cfg.max_episode_steps))
