"""dm_control suite tasks as ding envs (``dmc``): state or pixel observations, spaces declared from the config."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
from gymnasium.wrappers import TimeLimit

from ding.envs import ENV_REGISTRY, DingEnvWrapper, EnvSpaces
from ding.envs.base_env import env_wrapper_key
from ding.envs.env_wrappers import WrapperChain
from ding.errors import ConfigError
from ding.utils.accepts import count, optional
from dizoo.dmc.envs.dmc_adapter import DMCAdapter, dmc_spaces
from dizoo.limits import DMC_FRAME_HEIGHT, DMC_FRAME_WIDTH, MAX_FRAME_STACK


def _positive_int(cfg: Mapping[str, Any], key: str) -> int:
    value = cfg.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"env.{key} must be a positive int, got {value!r}")
    return value


def _check_env_id(cfg: Mapping[str, Any]) -> str:
    """The task's label ``dmc:<domain>-<task>``; ``env_id`` must be None or that label."""
    label = f"dmc:{cfg.get('domain_name')}-{cfg.get('task_name')}"
    if cfg.get("env_id") not in (None, label):
        raise ConfigError(
            f"env.env_id {cfg['env_id']!r}: dm_control tasks are named by domain_name and task_name; "
            f"leave env_id unset (it becomes {label!r})"
        )
    return label


@ENV_REGISTRY.register("dmc")
class DMCEnv(DingEnvWrapper):
    """A dm_control suite task (``domain_name``, ``task_name``) through :class:`DMCAdapter`.

    Config keys besides the common ones:

    - ``from_pixels``, ``height``, ``width``, ``camera_id``, ``channels_first``, ``frame_skip``,
      ``visualize_reward``, ``task_kwargs``: the adapter's arguments. ``height`` and ``width`` also size
      replay videos.
    - ``grayscale``: pixel frames to luminance (``gray_scale``): ``(1, H, W)`` (or ``(H, W, 1)``), or ``(H, W)``
      when frames are stacked.
    - ``frame_stack``: stack the last n observations (``frame_stack``) when n > 1. Gray frames stack to
      ``(n, H, W)``, an image a conv encoder takes; RGB frames to ``(n, 3, H, W)``.
    - pixel frames stay uint8 in [0, 255] (models scale them to [0, 1] on their device); state observations,
      float64 in dm_control, become float32 through ``flat_obs``, the chain's first step.
    - ``max_episode_steps``: a time limit in agent steps (None: the task's own, 1000 control steps, that is
      ``ceil(1000 / frame_skip)`` agent steps).
    - ``act_scale``: the agent acts in [-1, 1] through ``normalized_action`` (which also clips).

    ``env_id`` is set from the task (``"dmc:<domain>-<task>"``).

    Example:
        >>> DMCEnv.spaces_from_config({'domain_name': 'walker', 'task_name': 'walk'}).observation
        Box(-inf, inf, (24,), float32)
        >>> cfg = {'from_pixels': True, 'grayscale': True, 'frame_stack': 3}
        >>> DMCEnv.spaces_from_config(cfg).observation
        Box(0, 255, (3, 84, 84), uint8)
    """

    config: ClassVar[dict[str, Any]] = {
        "env_id": optional(str, note="None: from domain_name and task_name"),
        "env_wrapper": env_wrapper_key("default"),
        "domain_name": "cartpole",
        "task_name": "swingup",
        "from_pixels": False,
        "height": count(84, high=DMC_FRAME_HEIGHT, note="dm_control's offscreen framebuffer"),
        "width": count(84, high=DMC_FRAME_WIDTH, note="dm_control's offscreen framebuffer"),
        "camera_id": count(0, low=-1, note="-1: the free camera"),
        "channels_first": True,
        "frame_skip": count(1),
        "visualize_reward": False,
        "task_kwargs": {},
        "grayscale": False,
        "frame_stack": count(1, high=MAX_FRAME_STACK),
        "max_episode_steps": optional(count(), note="None: the task's own limit"),
        "act_scale": True,
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        cfg = dict(cfg or {})
        defaults = type(self).default_config()
        cfg["env_id"] = _check_env_id({**defaults, **cfg})
        super().__init__(cfg=cfg)

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        _check_env_id(cfg)
        observation, action = dmc_spaces(
            str(cfg.get("domain_name")),
            str(cfg.get("task_name")),
            from_pixels=bool(cfg.get("from_pixels")),
            height=cfg.get("height", 84),
            width=cfg.get("width", 84),
            channels_first=bool(cfg.get("channels_first", True)),
        )
        return EnvSpaces(observation, action)

    @classmethod
    def wrapper_chain(cls, cfg: Mapping[str, Any]) -> WrapperChain:
        n_frames = _positive_int(cfg, "frame_stack")
        pixels = bool(cfg.get("from_pixels"))
        chain: list[Any] = [] if pixels else ["flat_obs"]  # dm_control's float64 states as float32
        chain += list(super().wrapper_chain(cfg) or [])  # type: ignore[arg-type]
        if cfg.get("grayscale"):
            if not pixels:
                raise ConfigError("env.grayscale needs from_pixels=True")
            order = "chw" if cfg.get("channels_first", True) else "hwc"
            chain.append({"type": "gray_scale", "kwargs": {"keep_dim": n_frames == 1, "channel_order": order}})
        if n_frames > 1:
            chain.append({"type": "frame_stack", "kwargs": {"n_frames": n_frames}})
        if cfg.get("act_scale", True):
            chain.append("normalized_action")
        return chain

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        cfg = self._cfg
        env: gym.Env[Any, Any] = DMCAdapter(
            cfg.domain_name,
            cfg.task_name,
            from_pixels=bool(cfg.from_pixels),
            height=cfg.height,
            width=cfg.width,
            camera_id=cfg.camera_id,
            frame_skip=_positive_int(cfg, "frame_skip"),
            channels_first=bool(cfg.channels_first),
            visualize_reward=bool(cfg.visualize_reward),
            task_kwargs=dict(cfg.task_kwargs or {}),
            render_mode="rgb_array" if render else None,
        )
        if cfg.max_episode_steps is not None:
            env = TimeLimit(env, max_episode_steps=_positive_int(cfg, "max_episode_steps"))
        return env
