"""Any ALE game as a ding env, with its spaces stated from the config alone (DI-engine's ``atari`` env).

The emulator runs without frame skipping or sticky actions of its own (``frameskip=1``); the
wrapper chain does the Atari preprocessing, so ``ding -m spec`` predicts every shape. Its
``max_and_skip`` plays the skipped frames on the emulator directly and reads only the screens it
keeps (:mod:`ding.envs.env_wrappers.ale`). ``env_id``
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
from ding.envs.base_env import env_wrapper_key
from ding.envs.env_wrappers import WrapperChain, preset_chain
from ding.errors import ConfigError
from ding.utils.accepts import count, one_of, optional, typed, unit
from dizoo.atari.envs.ale_games import (
    RAM_SIZE,
    SCREEN_HEIGHT,
    SCREEN_WIDTH,
    game_of,
    minimal_action_count,
    registered_ale_id,
)
from dizoo.flags import bool_flag
from dizoo.limits import MAX_FRAME_STACK

OBS_TYPES = ("rgb", "grayscale")
DEFAULT_OBS_TYPE = "grayscale"
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
    if cfg.get("ram") and obs_type != DEFAULT_OBS_TYPE:
        raise ConfigError(
            f"ram=True observes the RAM, so obs_type (a screen option) must stay {DEFAULT_OBS_TYPE!r}; got {obs_type!r}"
        )
    if not isinstance(cfg.get("reseed_each_episode"), bool):
        raise TypeError(f"reseed_each_episode must be a bool, got {cfg.get('reseed_each_episode')!r}")
    if cfg.get("env_kwargs"):
        raise ConfigError(
            f"AtariEnv takes no env_kwargs (got {dict(cfg['env_kwargs'])!r}); its options are the config keys "
            "env_id, repeat_action_probability, obs_type, ram, frame_stack, max_episode_steps, reseed_each_episode "
            "and env_wrapper"
        )
    _episode_limit(cfg)
    _frame_stack(cfg)
    bool_flag(cfg, "obs_plus_prev_action_reward", "atari")


def _frame_stack(cfg: Mapping[str, Any]) -> int | None:
    """``frame_stack`` checked against the chain it sets: only ``atari_default`` on the screen has that step."""
    n = cfg.get("frame_stack")
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ConfigError(f"atari: frame_stack must be an int >= 0 (0: no stacking) or None, got {n!r}")
    if cfg.get("env_wrapper", "atari_default") != "atari_default":
        raise ConfigError(
            f"atari: frame_stack={n} sets the frame_stack step of the 'atari_default' chain, but env_wrapper is "
            f"{cfg.get('env_wrapper')!r}; put ('frame_stack', {{'n_frames': {n}}}) in that chain instead"
        )
    if cfg.get("ram"):
        raise ConfigError(
            f"atari: frame_stack={n} stacks screen frames; with ram=True the 'atari_default' chain observes one "
            "RAM state (leave frame_stack None, or give env_wrapper a list with a frame_stack step)"
        )
    return int(n)


def _with_frame_stack(chain: list[Any], n: int) -> list[Any]:
    """The chain with its ``frame_stack`` step stacking ``n`` frames (removed for 0)."""
    out = [item for item in chain if _step_name(item) != "frame_stack"]
    return [*out, ("frame_stack", {"n_frames": n})] if n else out


def _episode_limit(cfg: Mapping[str, Any]) -> int | None:
    limit = cfg.get("max_episode_steps")
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 1:
        raise ConfigError(f"max_episode_steps must be a positive int or None, got {limit!r}")
    return int(limit)


def _step_name(item: Any) -> str:
    """The wrapper name of a chain item: a name, a ``(name, kwargs)`` pair or a ``{type, kwargs}`` dict."""
    if isinstance(item, Mapping):
        return str(item["type"])
    return str(item[0] if isinstance(item, (tuple, list)) else item)


@ENV_REGISTRY.register("atari")
class AtariEnv(DingEnvWrapper):
    """One ALE game: by default the ``atari_default`` chain on the RGB screen, minimal action set.

    Config keys (besides the common ones):

    - ``env_id``: the game, as a gymnasium id (``'ALE/Breakout-v5'``, ``'BreakoutNoFrameskip-v4'``).
    - ``env_wrapper``: a preset or a wrapper list applied to the raw observation.
    - ``repeat_action_probability``: ALE's sticky actions; 0.0 (the DQN convention) or 0.25 (Machado et al.).
    - ``obs_type``: the screen, ALE's own ``'grayscale'`` (210, 160) or ``'rgb'`` (210, 160, 3). It sets the
      order of ``atari_default``'s max over two frames and its conversion to gray: ``'grayscale'`` (the
      default) maxes ALE's gray screens (gray-then-max; frames equal those of gymnasium's
      ``AtariPreprocessing`` and envpool), ``'rgb'`` maxes the RGB screens and ``warp_frame`` then converts
      to gray with OpenCV's weights (max-then-gray, as DI-engine and the Nature DQN). The two differ by
      a gray level or two on some pixels (ALE's palette luminance against OpenCV's rounding) and more
      where a pixel changes colour between the two frames; ``'rgb'`` costs about 8 % more per step.
    - ``ram``: observe the 128-byte RAM instead; with ``env_wrapper='atari_default'`` the chain is
      :func:`atari_ram_chain`, any other chain is applied to the raw ``(128,)`` uint8 RAM.
    - ``frame_stack`` (DI-engine's key): the number of frames ``atari_default`` stacks (None: 4; 0: none,
      a single ``(84, 84)`` frame).
    - ``obs_plus_prev_action_reward`` (DI-engine's key): add the previous action and reward to the observation.
    - ``reseed_each_episode``: pass a fresh episode seed to the emulator at every reset (DI-engine's way;
      ALE reloads the ROM for a seed, 0.25-0.5 s with ale-py 0.12). False (the default) seeds the
      emulator at the first reset after :meth:`seed` (and at every reset when ``dynamic_seed=False``, so
      evaluation episodes all start alike); later episodes carry on its random streams (the no-op counts,
      sticky actions), so they differ and the whole run is still reproducible from the seed.
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
        "env_id": typed("ALE/Pong-v5"),
        "env_wrapper": env_wrapper_key("atari_default"),
        "repeat_action_probability": unit(0.0),
        "obs_type": one_of(*OBS_TYPES, default=DEFAULT_OBS_TYPE),
        "ram": False,
        "reseed_each_episode": False,
        "frame_stack": optional(count(low=0, high=MAX_FRAME_STACK), note="0: no stacking; None: the chain's 4 frames"),
        "obs_plus_prev_action_reward": False,
        "max_episode_steps": optional(count(), note="None: no time limit"),
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        self._seeded_simulator: gym.Env[Any, Any] | None = None  # the emulator a seed was last passed to
        super().__init__(cfg=cfg or {})

    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        super().seed(seed, dynamic_seed)
        self._seeded_simulator = None

    def _next_episode_seed(self) -> int | None:
        """The seed for the emulator's next reset: see ``reseed_each_episode``."""
        seed = super()._next_episode_seed()
        if seed is None or self._cfg.reseed_each_episode or not self._dynamic_seed:
            return seed
        if self._seeded_simulator is self._env:
            return None
        self._seeded_simulator = self._env
        return seed

    def _own_state(self) -> dict[str, Any]:
        """The base's, and whether the emulator has had its seed (so a restored env seeds it as the original did)."""
        return {**super()._own_state(), "emulator_seeded": self._seeded_simulator is self._env}

    def _restore_own_state(self, own: dict[str, Any]) -> None:
        super()._restore_own_state(own)
        self._seeded_simulator = self._env if own["emulator_seeded"] else None

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
        train = bool(cfg.get("is_train", True))
        n_frames = _frame_stack(cfg)
        if cfg.get("ram") and chain == "atari_default":
            chain = atari_ram_chain(train=train)
        elif n_frames is not None:
            chain = _with_frame_stack(preset_chain("atari_default", train=train), n_frames)
        items = list(super().wrapper_chain({**cfg, "env_wrapper": chain}) or [])  # type: ignore[arg-type]
        limit = _episode_limit(cfg)
        if limit is not None:
            # Below episodic_life, so the limit counts the steps of the whole game and ends it for real.
            names = [_step_name(item) for item in items]
            at = next((i + 1 for i, name in enumerate(names) if name in _SKIPPING_WRAPPERS), 0)
            items.insert(at, {"type": "time_limit", "kwargs": {"max_episode_steps": limit}})
        if bool_flag(cfg, "obs_plus_prev_action_reward", "atari"):
            items.append("obs_plus_prev_action_reward")
        return items

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        cfg = self._cfg
        return gym.make(
            registered_ale_id(cfg.env_id),
            frameskip=1,
            repeat_action_probability=float(cfg.repeat_action_probability),
            full_action_space=False,
            obs_type="ram" if cfg.ram else cfg.obs_type,
            render_mode="rgb_array" if render else None,
            disable_env_checker=True,
        )


MONTEZUMA = "montezuma_revenge"


@ENV_REGISTRY.register("atari_mr")
class AtariEnvMR(AtariEnv):
    """DI-engine's Montezuma's Revenge env: :class:`AtariEnv` on a Montezuma's Revenge id, each episode seeded anew.

    It runs the same chain as :class:`AtariEnv` (DI-engine builds both with the same DeepMind wrappers) and takes
    the same keys. What differs, as in DI-engine: ``env_id`` must name Montezuma's Revenge, and every seeded reset
    (``reseed_each_episode`` is True here) draws a fresh episode seed from the env's seed even after
    ``seed(s, dynamic_seed=False)``, so evaluation
    episodes start differently too (the game itself is deterministic; the start varies by the reset's no-ops).

    Example:
        >>> AtariEnvMR.spaces_from_config({}).shapes
        ((4, 84, 84), 18, (1,))
    """

    config: ClassVar[dict[str, Any]] = {"env_id": "MontezumaRevengeNoFrameskip-v4", "reseed_each_episode": True}

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        game = game_of(cfg["env_id"])
        if game != MONTEZUMA:
            raise ConfigError(
                f"atari_mr: env_id {cfg['env_id']!r} is the game {game!r}; this env plays Montezuma's Revenge "
                "('MontezumaRevengeNoFrameskip-v4', 'ALE/MontezumaRevenge-v5'); use env type 'atari' for other games"
            )
        return super().raw_spaces(cfg)

    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        """Seed the env; episodes always get fresh seeds drawn from ``seed`` (DI-engine's behaviour for this env)."""
        super().seed(seed, dynamic_seed=True)
