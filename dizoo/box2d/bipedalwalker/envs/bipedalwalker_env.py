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
from ding.envs.base_env import env_wrapper_key
from ding.envs.env_wrappers import WrapperChain
from ding.utils.accepts import count, optional
from dizoo.act_scale import ACT_SCALE_STEPS
from dizoo.env_ids import resolve_variant
from dizoo.flags import bool_flag

_PI = math.pi
# hull angle, angular velocity, vx, vy; per leg: hip angle, hip speed, knee angle, knee speed, ground contact;
# then 10 lidar range readings.
_LEG_LOW = [-_PI, -5.0, -_PI, -5.0, 0.0]
_LEG_HIGH = [_PI, 5.0, _PI, 5.0, 5.0]
_OBS_LOW = np.array([-_PI, -5.0, -5.0, -5.0, *_LEG_LOW, *_LEG_LOW, *[-1.0] * 10], dtype=np.float32)
_OBS_HIGH = np.array([_PI, 5.0, 5.0, 5.0, *_LEG_HIGH, *_LEG_HIGH, *[1.0] * 10], dtype=np.float32)
BIPEDALWALKER_IDS = {"BipedalWalker-v3": False, "BipedalWalkerHardcore-v3": True}
"""gymnasium's ids and the ``hardcore`` value each stands for."""
# Episode lengths of BipedalWalker-v3 and BipedalWalkerHardcore-v3.
_DEFAULT_STEPS = {False: 1600, True: 2000}
REWARD_FLOOR = -10.0
"""``rew_clip`` raises every reward below this to it (DI-engine's value): a fall's -100 becomes -10."""


@ENV_REGISTRY.register("bipedalwalker")
class BipedalWalkerEnv(DingEnvWrapper):
    """Walk a two-legged robot across terrain: 24 float32 observations, 4 joint torques in [-1, 1].

    ``hardcore=True`` (or ``env_id='BipedalWalkerHardcore-v3'``) adds stumps, pits and stairs; given both, they
    must agree. Falling ends the episode with reward -100; ``max_episode_steps=None`` picks the variant's length
    (1600 or 2000).

    DI-engine's keys: ``act_scale`` clips the agent's actions into [-1, 1] and maps them onto the torque bounds
    (:data:`~dizoo.act_scale.ACT_SCALE_STEPS`: an action outside is clipped, not refused; the bounds are [-1, 1]
    already); ``rew_clip`` raises rewards below -10 to -10
    (``clip_reward``, in training and evaluation; ``info['eval_episode_return']`` sums the unclipped rewards).

    Example:
        >>> BipedalWalkerEnv.spaces_from_config({'hardcore': True}).shapes
        ((24,), (4,), (1,))
        >>> BipedalWalkerEnv.spaces_from_config({'rew_clip': True}).reward
        Box(-10.0, inf, (1,), float32)
    """

    config: ClassVar[dict[str, Any]] = {
        "env_id": optional(str, note="None: from hardcore"),
        "hardcore": optional(bool, note="None: from env_id"),
        "max_episode_steps": optional(count(), note="None: the gymnasium id's limit"),
        "env_wrapper": env_wrapper_key("default"),
        "act_scale": False,
        "rew_clip": False,
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg=cfg or {})

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        _is_hardcore(cfg)
        return EnvSpaces(
            spaces.Box(_OBS_LOW, _OBS_HIGH, dtype=np.float32),
            spaces.Box(-1.0, 1.0, shape=(4,), dtype=np.float32),
        )

    @classmethod
    def wrapper_chain(cls, cfg: Mapping[str, Any]) -> WrapperChain:
        chain: list[Any] = list(super().wrapper_chain(cfg) or [])  # type: ignore[arg-type]
        if bool_flag(cfg, "rew_clip", "bipedalwalker"):
            chain.append({"type": "clip_reward", "kwargs": {"low": REWARD_FLOOR, "high": math.inf, "sign": False}})
        if bool_flag(cfg, "act_scale", "bipedalwalker"):
            chain.extend(ACT_SCALE_STEPS)
        return chain

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        hardcore = _is_hardcore(self._cfg)
        env = BipedalWalker(render_mode="rgb_array" if render else None, hardcore=hardcore)
        steps = self._cfg.max_episode_steps
        return TimeLimit(env, max_episode_steps=int(steps) if steps is not None else _DEFAULT_STEPS[hardcore])


def _is_hardcore(cfg: Mapping[str, Any]) -> bool:
    return resolve_variant(cfg, "hardcore", BIPEDALWALKER_IDS, "bipedalwalker")[1]
