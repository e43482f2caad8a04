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
from ding.envs.base_env import env_wrapper_key
from ding.envs.env_wrappers import WrapperChain
from ding.errors import ConfigError
from ding.utils.accepts import count, non_negative, optional, satisfying
from ding.utils.value_rules import conforms
from dizoo.env_ids import resolve_variant
from dizoo.flags import bool_flag
from dizoo.gif_replay import GIF_REPLAY_CONFIG, gif_replay_dir, with_gif_replay

# x, y, vx, vy, angle, angular velocity, left leg contact, right leg contact
_OBS_HIGH = np.array([2.5, 2.5, 10.0, 10.0, 2 * math.pi, 10.0, 1.0, 1.0], dtype=np.float32)
_OBS_LOW = np.array([-2.5, -2.5, -10.0, -10.0, -2 * math.pi, -10.0, 0.0, 0.0], dtype=np.float32)
LUNARLANDER_IDS = {"LunarLander-v3": False, "LunarLanderContinuous-v3": True}
"""gymnasium's ids and the ``continuous`` value each stands for."""


@ENV_REGISTRY.register("lunarlander")
class LunarLanderEnv(DingEnvWrapper):
    """Land a craft on a pad: 8 float32 observations; discrete or continuous engines.

    ``continuous=False`` (``LunarLander-v3``): 4 actions (nothing, left engine, main engine, right engine).
    ``continuous=True`` (``LunarLanderContinuous-v3``): Box(-1, 1, (2,)) for (main throttle, lateral throttle).
    ``env_id`` picks the variant as DI-engine's configs do, ``continuous`` too; given both, they must agree
    (None: the discrete lander). Episodes end on landing, crashing or leaving the screen, or at
    ``max_episode_steps`` (1000, as in LunarLander-v3). ``gravity``, ``enable_wind``, ``wind_power`` and
    ``turbulence_power`` are passed to the simulator.

    DI-engine's keys: ``act_scale`` (continuous only) maps the agent's [-1, 1] actions onto the throttle bounds
    (``normalized_action``, which also clips; the bounds are [-1, 1] already), ``action_clip`` (continuous only)
    clips actions to the bounds (``continuous_action_clip``), ``obs_plus_prev_action_reward`` adds the previous
    action and reward to the observation, ``save_replay_gif`` / ``replay_path_gif`` save each episode as a GIF.

    Example:
        >>> LunarLanderEnv.spaces_from_config({}).shapes
        ((8,), 4, (1,))
        >>> LunarLanderEnv.spaces_from_config({'env_id': 'LunarLanderContinuous-v3'}).action
        Box(-1.0, 1.0, (2,), float32)
    """

    config: ClassVar[dict[str, Any]] = {
        "env_id": optional(str, note="None: from continuous"),
        "continuous": optional(bool, note="None: from env_id"),
        "max_episode_steps": optional(count(1000), note="None: no time limit"),
        "gravity": satisfying("a number in (-12, 0)", lambda v: conforms(float, v) and -12.0 < v < 0.0, default=-10.0),
        "enable_wind": False,
        "wind_power": non_negative(15.0),
        "turbulence_power": non_negative(1.5),
        "env_wrapper": env_wrapper_key("default"),
        "act_scale": False,
        "action_clip": False,
        "obs_plus_prev_action_reward": False,
        **GIF_REPLAY_CONFIG,
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg=cfg or {})

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        gif_replay_dir(cfg, "lunarlander")  # checked with the rest of the config
        obs = spaces.Box(_OBS_LOW, _OBS_HIGH, dtype=np.float32)
        if _variant(cfg)[1]:
            return EnvSpaces(obs, spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32))
        return EnvSpaces(obs, spaces.Discrete(4))

    @classmethod
    def wrapper_chain(cls, cfg: Mapping[str, Any]) -> WrapperChain:
        chain = list(super().wrapper_chain(cfg) or [])  # type: ignore[arg-type]
        env_id, continuous = _variant(cfg)
        for key, step in (("act_scale", "normalized_action"), ("action_clip", "continuous_action_clip")):
            if bool_flag(cfg, key, "lunarlander"):
                if not continuous:
                    raise ConfigError(
                        f"lunarlander: {key}=True acts on continuous throttles, but {env_id!r} has Discrete(4) "
                        f"actions; leave {key} False, or use env_id 'LunarLanderContinuous-v3'"
                    )
                chain.append(step)
        if bool_flag(cfg, "obs_plus_prev_action_reward", "lunarlander"):
            chain.append("obs_plus_prev_action_reward")
        return chain

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        cfg = self._cfg
        env_id, continuous = _variant(cfg)
        gif = gif_replay_dir(cfg, "lunarlander") is not None
        env = LunarLander(
            render_mode="rgb_array" if render or gif else None,
            continuous=continuous,
            gravity=float(cfg.gravity),
            enable_wind=bool_flag(cfg, "enable_wind", "lunarlander"),
            wind_power=float(cfg.wind_power),
            turbulence_power=float(cfg.turbulence_power),
        )
        return with_gif_replay(TimeLimit(env, max_episode_steps=int(cfg.max_episode_steps)), cfg, "lunarlander", env_id)


def _variant(cfg: Mapping[str, Any]) -> tuple[str, bool]:
    return resolve_variant(cfg, "continuous", LUNARLANDER_IDS, "lunarlander")
