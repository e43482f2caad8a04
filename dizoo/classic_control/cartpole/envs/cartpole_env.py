"""CartPole with statically declared spaces (DI-engine's ``cartpole`` env)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.classic_control import CartPoleEnv as GymCartPole
from gymnasium.wrappers import TimeLimit

from ding.envs import ENV_REGISTRY, DingEnvWrapper, EnvSpaces
from ding.envs.base_env import env_wrapper_key
from ding.envs.env_wrappers import WrapperChain
from ding.utils.accepts import count, optional, typed
from dizoo.env_ids import check_env_id
from dizoo.flags import bool_flag

_X_LIMIT = 2.4 * 2
_THETA_LIMIT = 12 * 2 * math.pi / 360 * 2
_OBS_HIGH = np.array([_X_LIMIT, np.inf, _THETA_LIMIT, np.inf], dtype=np.float32)
CARTPOLE_IDS = ("CartPole-v0", "CartPole-v1")
"""gymnasium's CartPole ids; they differ only in episode length, which ``max_episode_steps`` sets here."""


@ENV_REGISTRY.register("cartpole")
class CartPoleEnv(DingEnvWrapper):
    """Balance a pole on a cart: 4 float32 observations, 2 discrete actions, reward 1 per step.

    Episodes are cut at ``max_episode_steps`` (200 by default, as in CartPole-v0 and DI-engine), whichever of
    :data:`CARTPOLE_IDS` ``env_id`` names. ``obs_plus_prev_action_reward`` (DI-engine's key) adds the previous
    action and reward to the observation (the ``obs_plus_prev_action_reward`` wrapper).

    Example:
        >>> CartPoleEnv.spaces_from_config({}).shapes
        ((4,), 2, (1,))
        >>> sorted(CartPoleEnv.spaces_from_config({'obs_plus_prev_action_reward': True}).observation.spaces)
        ['obs', 'prev_action', 'prev_reward_extrinsic']
    """

    config: ClassVar[dict[str, Any]] = {
        "env_id": typed("CartPole-v1"),
        "max_episode_steps": optional(count(200), note="None: no time limit"),
        "env_wrapper": env_wrapper_key("default"),
        "obs_plus_prev_action_reward": False,
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg=cfg or {})

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        check_env_id(cfg.get("env_id", "CartPole-v1"), CARTPOLE_IDS, "cartpole")
        return EnvSpaces(spaces.Box(-_OBS_HIGH, _OBS_HIGH, dtype=np.float32), spaces.Discrete(2))

    @classmethod
    def wrapper_chain(cls, cfg: Mapping[str, Any]) -> WrapperChain:
        chain = list(super().wrapper_chain(cfg) or [])  # type: ignore[arg-type]
        if bool_flag(cfg, "obs_plus_prev_action_reward", "cartpole"):
            chain.append("obs_plus_prev_action_reward")
        return chain

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        env = GymCartPole(render_mode="rgb_array" if render else None)
        return TimeLimit(env, max_episode_steps=int(self._cfg.max_episode_steps))
