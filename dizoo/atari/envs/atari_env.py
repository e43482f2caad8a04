"""Any ALE game as a ding env, with its spaces stated from the config alone (DI-engine's ``atari`` env).

The emulator runs without frame skipping or sticky actions of its own (``frameskip=1``); the
wrapper chain does the Atari preprocessing, so ``ding -m spec`` predicts every shape. ``env_id``
only selects the game: ``'ALE/Pong-v5'`` and ``'PongNoFrameskip-v4'`` build the same env, since
this config, not the id, sets frame skipping, sticky actions and the observation type (ale-py 0.12
registers both with ALE's cap of 108,000 frames, 30 minutes of play, per game).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ding.envs import ENV_REGISTRY, DingEnvWrapper, EnvSpaces
from ding.envs.env_wrappers import WrapperChain
from ding.errors import ConfigError
from dizoo.atari.envs.ale_games import RAM_SIZE, SCREEN_HEIGHT, SCREEN_WIDTH, game_of, minimal_action_count

OBS_TYPES = ("rgb", "grayscale")
_SKIPPING_WRAPPERS = ("max_and_skip", "frame_skip", "action_repeat")


def atari_ram_chain(*, train: bool = True) -> list[Any]:
    """``atari_default`` for the RAM: the same episode handling, the 128 RAM bytes as float32 in [0, 1].

    Frames are skipped with ``frame_skip`` (the last RAM state; a max over two RAM states means
    nothing), and the screen steps (``warp_frame``, ``frame_stack``) give way to ``ram`` and a
    flattening, so the model sees a ``(128,)`` vector.

    >>> atari_ram_chain(train=False)
    [('noop_reset', {'noop_max': 30}), ('frame_skip', {'skip': 4}), 'eval_episode_return', 'fire_reset', 'ram', \
'flatten_observation', 'scaled_float_frame']
    """
    chain: list[Any] = [("noop_reset", {"noop_max": 30}), ("frame_skip", {"skip": 4}), "eval_episode_return"]
    if train:
        chain.append("episodic_life")
    chain += ["fire_reset", "ram", "flatten_observation", "scaled_float_frame"]
    if train:
        chain.append("clip_reward")
    return chain


def _check_atari_config(cfg: Mapping[str, Any]) -> None:
    p = cfg.get("repeat_action_probability")
    if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)):
        raise TypeError(f"repeat_action_probability must be a number in [0, 1], got {p!r} ({type(p).__name__})")
    if not 0.0 <= float(p) <= 1.0:
        raise ConfigError(f"repeat_action_probability must be in [0, 1] (0.25 for sticky actions), got {p!r}")
    if not isinstance(cfg.get("ram"), bool):
        raise TypeError(f"ram must be a bool, got {cfg.get('ram')!r}")
    obs_type = cfg.get("obs_type")
    if obs_type not in OBS_TYPES:
        raise ConfigError(f"obs_type must be one of {OBS_TYPES} (the screen observation), got {obs_type!r}")
    if cfg.get("ram") and obs_type != "rgb":
        raise ConfigError(f"ram=True observes the RAM, so obs_type (a screen option) must stay 'rgb'; got {obs_type!r}")
    if cfg.get("env_kwargs"):
        raise ConfigError(
            f"AtariEnv takes no env_kwargs (got {dict(cfg['env_kwargs'])!r}); its options are the config keys "
            "env_id, repeat_action_probability, obs_type, ram, max_episode_steps and env_wrapper"
        )
    _episode_limit(cfg)


def _episode_limit(cfg: Mapping[str, Any]) -> int | None:
    limit = cfg.get("max_episode_steps")
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 1:
        raise ConfigError(f"max_episode_steps must be a positive int or None, got {limit!r}")
    return int(limit)


def _step_name(item: Any) -> str:
    return str(item["type"] if isinstance(item, Mapping) else item)


@ENV_REGISTRY.register("atari")
class AtariEnv(DingEnvWrapper):
    """One ALE game: by default the ``atari_default`` chain on the RGB screen, minimal action set.

    Config keys (besides the common ones):

    - ``env_id``: the game, as a gymnasium id (``'ALE/Breakout-v5'``, ``'BreakoutNoFrameskip-v4'``).
    - ``env_wrapper``: a preset or a wrapper list applied to the raw observation.
    - ``repeat_action_probability``: ALE's sticky actions; 0.0 (the DQN convention) or 0.25 (Machado et al.).
    - ``obs_type``: the screen, ``'rgb'`` (210, 160, 3) or ALE's own ``'grayscale'`` (210, 160).
    - ``ram``: observe the 128-byte RAM instead; with ``env_wrapper='atari_default'`` the chain is
      :func:`atari_ram_chain`, any other chain is applied to the raw ``(128,)`` uint8 RAM.
    - ``max_episode_steps``: cut a game after this many steps of the frame-skipping wrapper
      (``time_limit`` right above it, so the start's FIRE presses and the no-op after a lost life
      count too, the reset's no-ops do not); None leaves ALE's cap of 108,000 frames.

    In training (``is_train``) a lost life ends the episode and the next ``reset`` continues the
    game; ``info['eval_episode_return']`` comes at the end of the whole game.

    Example:
        >>> AtariEnv.spaces_from_config({'env_id': 'ALE/Breakout-v5'}).shapes
        ((4, 84, 84), 4, (1,))
        >>> AtariEnv.spaces_from_config({'env_id': 'ALE/Pong-v5', 'ram': True}).observation
        Box(0.0, 1.0, (128,), float32)
    """

    config: ClassVar[dict[str, Any]] = {
        "env_id": "ALE/Pong-v5",
        "env_wrapper": "atari_default",
        "repeat_action_probability": 0.0,
        "obs_type": "rgb",
        "ram": False,
        "max_episode_steps": None,
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg=cfg or {})

    # ----- spaces --------------------------------------------------------------------------------
    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        """The emulator's spaces: the screen (or RAM) as uint8 and the game's minimal action set."""
        _check_atari_config(cfg)
        actions = spaces.Discrete(minimal_action_count(game_of(cfg["env_id"])))
        if cfg["ram"]:
            shape: tuple[int, ...] = (RAM_SIZE,)
        elif cfg["obs_type"] == "grayscale":
            shape = (SCREEN_HEIGHT, SCREEN_WIDTH)
        else:
            shape = (SCREEN_HEIGHT, SCREEN_WIDTH, 3)
        return EnvSpaces(spaces.Box(0, 255, shape, np.uint8), actions)

    @classmethod
    def wrapper_chain(cls, cfg: Mapping[str, Any]) -> WrapperChain:
        chain = cfg.get("env_wrapper", "atari_default")
        if cfg.get("ram") and chain == "atari_default":
            chain = atari_ram_chain(train=bool(cfg.get("is_train", True)))
        items = list(super().wrapper_chain({**cfg, "env_wrapper": chain}) or [])  # type: ignore[arg-type]
        limit = _episode_limit(cfg)
        if limit is not None:
            # Below episodic_life, so the limit counts the steps of the whole game and ends it for real.
            names = [_step_name(item) for item in items]
            at = next((i + 1 for i, name in enumerate(names) if name in _SKIPPING_WRAPPERS), 0)
            items.insert(at, {"type": "time_limit", "kwargs": {"max_episode_steps": limit}})
        return items

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        cfg = self._cfg
        return gym.make(
            cfg.env_id,
            frameskip=1,
            repeat_action_probability=float(cfg.repeat_action_probability),
            full_action_space=False,
            obs_type="ram" if cfg.ram else cfg.obs_type,
            render_mode="rgb_array" if render else None,
            disable_env_checker=True,
        )
