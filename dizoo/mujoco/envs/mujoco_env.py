"""Gymnasium's MuJoCo v5 locomotion envs (Hopper, HalfCheetah, Walker2d, Ant) with statically declared spaces.

The observation size of each env is fixed by its model and by two options, so it is stated in a table
(:data:`MUJOCO_ENVS`) instead of being read from a built simulator; a test proves every entry and option
against the real envs.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ding.envs import ENV_REGISTRY, DingEnvWrapper, EnvSpaces
from ding.envs.base_env import env_wrapper_key
from ding.envs.env_wrappers import WrapperChain
from ding.envs.env_wrappers.normalization import ClipRange
from ding.errors import ConfigError
from ding.utils.accepts import Accepts, count, optional, typed, unit
from dizoo.act_scale import ACT_SCALE_STEPS
from dizoo.env_ids import check_env_id
from dizoo.flags import bool_flag
from dizoo.gif_replay import GIF_REPLAY_CONFIG, gif_replay_dir, with_gif_replay
from dizoo.limits import MAX_REWARD_DELAY
from dizoo.mujoco.gl import use_headless_gl

use_headless_gl()

_LOGGER = logging.getLogger(__name__)


def _log_mujoco_warning(message: str) -> None:
    _LOGGER.warning("MuJoCo: %s", message)


def route_mujoco_warnings() -> None:
    """Send MuJoCo's warnings to Python logging, unless a handler is already set.

    By default MuJoCo appends them to ``MUJOCO_LOG.TXT`` in the working directory, and HalfCheetah's model
    warns on every build.
    """
    import mujoco  # after use_headless_gl(): mujoco reads MUJOCO_GL when it is imported

    if mujoco.get_mju_user_warning() is None:
        mujoco.set_mju_user_warning(_log_mujoco_warning)


route_mujoco_warnings()


# Keyword arguments of gymnasium's MuJoCo envs that leave their spaces as they are.
_RENDER_KWARGS = ("width", "height", "camera_id", "camera_name", "default_camera_config", "max_geom", "visual_options")
_COMMON_KWARGS = ("frame_skip", "forward_reward_weight", "ctrl_cost_weight", "reset_noise_scale")
_HEALTH_KWARGS = ("healthy_reward", "terminate_when_unhealthy", "healthy_z_range")
_RENAMED = {"use_contact_forces": "include_cfrc_ext_in_observation"}  # the v4 name of the option


@dataclasses.dataclass(frozen=True)
class MujocoEnvSpec:
    """What fixes one env's spaces: observation size with gymnasium's defaults, action size, and the options.

    ``position_size`` entries (the torso's x, and y for Ant) are left out of the observation unless
    ``exclude_current_positions_from_observation=False``; ``cfrc_ext_size`` contact-force entries are in it
    unless ``include_cfrc_ext_in_observation=False`` (Ant only).
    """

    obs_size: int
    action_size: int
    position_size: int
    cfrc_ext_size: int = 0
    extra_kwargs: tuple[str, ...] = ()

    def observation_size(self, env_kwargs: Mapping[str, Any]) -> int:
        size = self.obs_size
        if not env_kwargs.get("exclude_current_positions_from_observation", True):
            size += self.position_size
        if self.cfrc_ext_size and not env_kwargs.get("include_cfrc_ext_in_observation", True):
            size -= self.cfrc_ext_size
        return size

    @property
    def accepted_kwargs(self) -> tuple[str, ...]:
        options = ["exclude_current_positions_from_observation"]
        if self.cfrc_ext_size:
            options.append("include_cfrc_ext_in_observation")
        return (*options, *_COMMON_KWARGS, *self.extra_kwargs, *_RENDER_KWARGS)


MUJOCO_ENVS: dict[str, MujocoEnvSpec] = {
    "Hopper-v5": MujocoEnvSpec(11, 3, 1, extra_kwargs=(*_HEALTH_KWARGS, "healthy_state_range", "healthy_angle_range")),
    "HalfCheetah-v5": MujocoEnvSpec(17, 6, 1),
    "Walker2d-v5": MujocoEnvSpec(17, 6, 1, extra_kwargs=(*_HEALTH_KWARGS, "healthy_angle_range")),
    "Ant-v5": MujocoEnvSpec(
        105,
        8,
        2,
        cfrc_ext_size=78,
        extra_kwargs=(*_HEALTH_KWARGS, "contact_cost_weight", "contact_force_range", "main_body"),
    ),
}
"""The supported envs by gymnasium id. Every action space is ``Box(-1, 1, (action_size,), float32)`` and every
observation space ``Box(-inf, inf, (n,), float64)``."""


def mujoco_env_spec(env_id: str, env_kwargs: Mapping[str, Any]) -> MujocoEnvSpec:
    """The table entry for ``env_id``, after checking ``env_kwargs`` against the options that env takes.

    >>> mujoco_env_spec('Ant-v5', {'include_cfrc_ext_in_observation': False}).cfrc_ext_size
    78
    """
    spec = MUJOCO_ENVS[check_env_id(env_id, MUJOCO_ENVS, "mujoco")]
    if not isinstance(env_kwargs, Mapping):
        raise TypeError(f"env_kwargs must be a dict, got {type(env_kwargs).__name__} {env_kwargs!r}")
    for key in env_kwargs:
        if key not in spec.accepted_kwargs:
            hint = f" (gymnasium's v5 envs call it {_RENAMED[key]!r})" if key in _RENAMED else ""
            raise ConfigError(
                f"env_kwargs key {key!r} is not accepted for {env_id}{hint}; "
                f"accepted: {', '.join(spec.accepted_kwargs)}"
            )
    return spec


def mujoco_raw_spaces(env_id: str, env_kwargs: Mapping[str, Any]) -> EnvSpaces:
    """The spaces gymnasium's ``env_id`` has with ``env_kwargs``, from :data:`MUJOCO_ENVS` alone.

    >>> mujoco_raw_spaces('Hopper-v5', {'exclude_current_positions_from_observation': False}).observation
    Box(-inf, inf, (12,), float64)
    """
    spec = mujoco_env_spec(env_id, env_kwargs)
    size = spec.observation_size(env_kwargs)
    return EnvSpaces(
        spaces.Box(-np.inf, np.inf, (size,), np.float64),
        spaces.Box(-1.0, 1.0, (spec.action_size,), np.float32),
    )


def _delay_reward_step(cfg: Mapping[str, Any]) -> int:
    value = cfg.get("delay_reward_step", 0)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ConfigError(f"mujoco: delay_reward_step must be an int >= 0 (0 and 1: no delay), got {value!r}")
    return int(value)


@ENV_REGISTRY.register("mujoco")
class MujocoEnv(DingEnvWrapper):
    """A gymnasium MuJoCo v5 env (``env_id``: Hopper-v5, HalfCheetah-v5, Walker2d-v5, Ant-v5) as a ding env.

    Observations are float32: gymnasium's MuJoCo envs give float64 vectors, and the chain's first step,
    ``flat_obs``, casts them (a ``(n,)`` vector flattens to itself), as DI-engine's MuJoCo env does.

    Config keys besides the common ones:

    - ``env_kwargs``: gymnasium's keyword arguments for the env (options such as
      ``exclude_current_positions_from_observation``, reward weights, render ``width``/``height``).
    - ``max_episode_steps``: the time limit (gymnasium's is 1000).
    - ``norm_obs``: with ``use_norm`` the ``obs_norm`` wrapper normalizes observations by their running mean
      and std (after ``warmup`` observations) and clips them to ``clip_range``; each env keeps its own statistics.
    - ``norm_reward``: with ``use_norm`` and while training, the ``reward_norm`` wrapper divides rewards by the
      running std of the return discounted by ``reward_discount``. ``info['eval_episode_return']`` always sums
      the env's own rewards.
    - ``delay_reward_step``: above 1, rewards are held back and released as sums every that many steps and at
      the episode's end (``delay_reward``).
    - ``act_scale`` (ding's key, default True): the agent acts in [-1, 1], clipped into it, then mapped onto the
      bounds (:data:`~dizoo.act_scale.ACT_SCALE_STEPS`; DI-engine's MuJoCo envs take any action, which the simulator
      clamps, so an action outside is clipped, not refused).
    - ``action_clip``: clip the agent's actions to the action bounds (``continuous_action_clip``; ``act_scale``
      clips already).
    - ``action_bins_per_branch``: n > 1 makes each action dimension a choice of n evenly spaced values from its
      low to its high bound (``discrete_action``: ``MultiDiscrete([n] * k)``), DI-engine's mapping for
      branching policies.
    - ``save_replay_gif``, ``replay_path_gif``: save each episode as a GIF in that directory.

    Example:
        >>> MujocoEnv.spaces_from_config({'env_id': 'Ant-v5'}).observation
        Box(-inf, inf, (105,), float32)
        >>> MujocoEnv.spaces_from_config({'env_id': 'Hopper-v5', 'norm_obs': {'use_norm': True}}).observation
        Box(-5.0, 5.0, (11,), float32)
        >>> MujocoEnv.spaces_from_config({'env_id': 'Hopper-v5', 'action_bins_per_branch': 5}).action
        MultiDiscrete([5 5 5])
    """

    config: ClassVar[dict[str, Any]] = {
        "env_id": typed("Hopper-v5"),
        "env_kwargs": {},
        "env_wrapper": env_wrapper_key("default"),
        "max_episode_steps": optional(count(1000), note="None: no time limit"),
        "norm_obs": {
            "use_norm": False,
            "clip_range": Accepts([-5.0, 5.0], ClipRange, note="the obs_norm wrapper's"),
            "warmup": count(30, low=0),
        },
        "norm_reward": {"use_norm": False, "reward_discount": unit(0.99), "warmup": count(30, low=0)},
        "delay_reward_step": count(0, low=0, high=MAX_REWARD_DELAY, note="0 and 1: no delay"),
        "act_scale": True,
        "action_clip": False,
        "action_bins_per_branch": optional(count(low=2), note="values per action dimension; None: continuous"),
        **GIF_REPLAY_CONFIG,
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg=cfg or {})

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        gif_replay_dir(cfg, "mujoco")  # checked with the rest of the config
        return mujoco_raw_spaces(str(cfg.get("env_id")), cfg.get("env_kwargs") or {})

    @classmethod
    def wrapper_chain(cls, cfg: Mapping[str, Any]) -> WrapperChain:
        chain: list[Any] = ["flat_obs"]  # gymnasium's float64 observations as float32
        chain += list(super().wrapper_chain(cfg) or [])  # type: ignore[arg-type]
        norm_obs = cfg.get("norm_obs") or {}
        if norm_obs.get("use_norm"):
            clip = norm_obs.get("clip_range", (-5.0, 5.0))
            kwargs = {"clip_range": None if clip is None else tuple(clip), "warmup": norm_obs.get("warmup", 30)}
            chain.append({"type": "obs_norm", "kwargs": kwargs})
        norm_reward = cfg.get("norm_reward") or {}
        if norm_reward.get("use_norm") and cfg.get("is_train", True):
            kwargs = {
                "reward_discount": norm_reward.get("reward_discount", 0.99),
                "warmup": norm_reward.get("warmup", 30),
            }
            chain.append({"type": "reward_norm", "kwargs": kwargs})
        delay = _delay_reward_step(cfg)
        if delay > 1:
            chain.append({"type": "delay_reward", "kwargs": {"delay_reward_step": delay}})
        return chain + cls.action_steps(cfg)

    @classmethod
    def action_steps(cls, cfg: Mapping[str, Any]) -> list[Any]:
        """The wrapper steps between the agent's actions and the simulator's (outermost last)."""
        scale = bool_flag(cfg, "act_scale", "mujoco", default=True)
        bins = cfg.get("action_bins_per_branch")
        clip = bool_flag(cfg, "action_clip", "mujoco")
        if bins is not None:
            if clip:
                raise ConfigError(
                    "mujoco: action_clip=True with action_bins_per_branch: discrete actions always map onto values "
                    "within the bounds, so there is nothing to clip; leave action_clip False"
                )
            return [*(["normalized_action"] if scale else []), {"type": "discrete_action", "kwargs": {"bins": bins}}]
        if scale:  # clips as well (as DI-engine's MuJoCo envs take any action: the simulator clamps it)
            return list(ACT_SCALE_STEPS)
        return ["continuous_action_clip"] if clip else []

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        kwargs = dict(self._cfg.env_kwargs or {})
        if render or gif_replay_dir(self._cfg, "mujoco") is not None:
            kwargs["render_mode"] = "rgb_array"
        steps = self._cfg.max_episode_steps
        if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
            raise ConfigError(f"max_episode_steps must be a positive int or None, got {steps!r}")
        env = gym.make(self._cfg.env_id, max_episode_steps=steps, **kwargs)
        return with_gif_replay(env, self._cfg, "mujoco", str(self._cfg.env_id))
