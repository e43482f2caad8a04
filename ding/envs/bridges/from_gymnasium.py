"""``DingEnvWrapper``: any gymnasium (or old-gym-API) env as a ding ``BaseEnv``."""

from __future__ import annotations

import copy
import inspect
import pickle
from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from easydict import EasyDict

from ding.envs.base_env import BaseEnv, env_wrapper_key
from ding.envs.bridges.from_old_gym import as_gymnasium, call_with_env_kwargs, make_env
from ding.envs.env_registry import ENV_REGISTRY
from ding.envs.env_state import EnvStateToken, capture_env_state, restore_env_state
from ding.envs.env_wrappers import PRESETS, WrapperChain, apply_wrappers, resolve_wrappers
from ding.envs.values.conversion import action_converter, observation_converter, reward_converter
from ding.envs.values.spaces import EnvSpaces, reward_space_of
from ding.envs.values.timestep import BaseEnvTimestep
from ding.errors import ConfigError, EnvSpecError
from ding.utils.accepts import optional
from ding.utils.headless import use_headless_sdl
from ding.utils.video_files import EpisodeVideoRecorder

CALLERS = ("collector", "evaluator")

DI_ENGINE_ONLY_KEYS = {
    "act_scale": "add the 'normalized_action' wrapper to cfg.env_wrapper (agent actions in [-1, 1])",
    "rew_clip": "add ('clip_reward', {'low': -10, 'high': float('inf'), 'sign': False}) to cfg.env_wrapper",
}
"""Keys of DI-engine's ``DingEnvWrapper`` config that ding expresses as wrappers, with what to write instead."""


_REGISTERED_SPACES: dict[Any, EnvSpaces] = {}


def _frozen(value: Any) -> Any:
    """A hashable stand-in for ``value`` (lists, dicts and arrays of env kwargs included) to key a cache with."""
    if isinstance(value, Mapping):
        return ("dict", tuple(sorted((str(k), _frozen(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_frozen(v) for v in value))
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    try:
        hash(value)
    except TypeError:
        return ("repr", type(value).__qualname__, repr(value))
    return value


def _probe_registered_spaces(env_id: str, kwargs: Mapping[str, Any]) -> EnvSpaces:
    """The spaces of ``gymnasium.make(env_id, **kwargs)``: made once per id and kwargs, never reset, then cached."""
    key = (env_id, _frozen(kwargs))
    if key not in _REGISTERED_SPACES:
        env = call_with_env_kwargs(make_env, env_id, kwargs, env_id)
        try:
            _REGISTERED_SPACES[key] = EnvSpaces(env.observation_space, env.action_space, reward_space_of(env))
        finally:
            env.close()
    return _REGISTERED_SPACES[key]


def _caller_config(cfg: Mapping[str, Any] | None, caller: str) -> dict[str, Any]:
    """``cfg`` as the ``caller`` builds its env: an evaluator's env is not a training env unless ``cfg`` says so."""
    out = dict(cfg or {})
    if caller == "evaluator":
        out.setdefault("is_train", False)
    return out


@ENV_REGISTRY.register("ding_env_wrapper")
class DingEnvWrapper(BaseEnv):
    """Run a gymnasium env, given as an instance or by ``cfg.env_id``, behind the ``BaseEnv`` API.

    ``cfg.env_wrapper`` names a preset (``default``, ``atari_default``, ``mujoco_default``) or lists
    ``{type, kwargs}`` wrapper steps; ``eval_episode_return`` is appended when the chain lacks it,
    so ``info['eval_episode_return']`` is always there at an episode's end.

    The constructor is DI-engine's: ``env`` (an instance; gymnasium, or gym's old API, adapted),
    ``cfg``, ``seed_api`` (False: never pass seeds to the simulator), ``caller`` (``'evaluator'``
    builds the evaluation chain unless ``cfg.is_train`` says otherwise) and ``is_gymnasium``
    (accepted for compatibility: ding makes every ``env_id`` with gymnasium, and adapts a registered
    class that implements the old gym API).

    Example:
        >>> env = DingEnvWrapper(cfg={'env_id': 'CartPole-v1'})
        >>> env.observation_space.shape, env.action_space, env.reward_space.shape
        ((4,), Discrete(2), (1,))
        >>> env.seed(0)
        >>> obs = env.reset()
        >>> ts = env.step(0)
        >>> ts.obs.dtype, ts.reward.shape, ts.done
        (dtype('float32'), (1,), False)
        >>> env.close()
    """

    config: ClassVar[dict[str, Any]] = {
        "env_id": optional(str, note="a registered gymnasium id"),
        "env_kwargs": {},
        "env_wrapper": env_wrapper_key("default"),
    }

    def __init__(
        self,
        env: Any = None,
        cfg: Mapping[str, Any] | None = None,
        seed_api: bool = True,
        caller: str = "collector",
        is_gymnasium: bool = False,
    ) -> None:
        if caller not in CALLERS:
            raise ValueError(f"caller must be one of {CALLERS}, got {caller!r}")
        if not isinstance(is_gymnasium, bool):
            raise TypeError(f"is_gymnasium must be a bool, got {type(is_gymnasium).__name__} {is_gymnasium!r}")
        cfg = _caller_config(cfg, caller)
        self._env_arg = env
        self._caller = caller
        self._is_gymnasium = is_gymnasium
        builds_own_env = type(self)._make_raw_env is not DingEnvWrapper._make_raw_env
        if env is None and not builds_own_env and not cfg.get("env_id", type(self).default_config().env_id):
            raise ConfigError("DingEnvWrapper needs either an env instance or cfg.env_id")
        self._given_env = as_gymnasium(env) if env is not None else None
        self._seed_api = seed_api
        self._game_goes_on = False  # an episode ended with a lost life (episodic_life): the next reset continues
        self._raw: gym.Env[Any, Any] | None = None
        super().__init__(cfg)
        self._env = self._build()
        self._check_declared_spaces()
        self._to_obs = observation_converter(self._env.observation_space)
        self._to_reward = reward_converter(self.reward_space)
        env_id = self._cfg.get("env_id")
        owner = f"{type(self).__name__}({env_id})" if env_id else type(self).__name__
        self._to_action = action_converter(self._env.action_space, owner=owner)
        self._recorder: EpisodeVideoRecorder | None = None
        self._rebuild_for_render = False
        self._closed = False
        if self._replay_path:
            self.enable_save_replay(self._replay_path)

    @classmethod
    def config_of_call(cls, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The config of ``cls(*args, **kwargs)`` (an evaluator's has ``is_train=False``); None when an env is given."""
        try:
            bound = inspect.signature(cls.__init__).bind(None, *args, **kwargs).arguments
        except TypeError:
            return None  # the call itself would fail; the manager learns that when it builds the env
        if bound.get("env") is not None:
            return None  # an env instance: its spaces are the instance's
        caller = bound.get("caller", "collector")
        return _caller_config(bound.get("cfg"), caller) if caller in CALLERS else None

    @classmethod
    def merge_config(cls, cfg: Mapping[str, Any] | None) -> EasyDict:
        """As :meth:`BaseEnv.merge_config`; DI-engine's ``act_scale`` / ``rew_clip``, where the class lacks them:

        a false value (DI-engine's default) is dropped, a true one raises, naming the wrapper to use instead.
        """
        declared = cls.default_config()
        foreign = [key for key in DI_ENGINE_ONLY_KEYS if cfg and key in cfg and key not in declared]
        for key in foreign:
            if cfg and cfg[key]:
                raise ConfigError(
                    f"{cls.__name__} has no config key {key!r} (DI-engine's DingEnvWrapper had): "
                    f"{DI_ENGINE_ONLY_KEYS[key]}"
                )
        if cfg and foreign:
            cfg = {key: value for key, value in cfg.items() if key not in foreign}
        return super().merge_config(cfg)

    # ----- spaces --------------------------------------------------------------------------------
    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        """Spaces of ``cfg.env_id``: read from the gymnasium registration (made once, never reset, cached)."""
        env_id = cfg.get("env_id")
        if not env_id:
            raise EnvSpecError("DingEnvWrapper spaces need cfg.env_id (or an env instance)")
        try:
            return _probe_registered_spaces(str(env_id), dict(cfg.get("env_kwargs") or {}))
        except (gym.error.Error, ImportError) as err:  # ImportError: the env needs a package that is not installed
            raise EnvSpecError(f"cannot make env_id {env_id!r}: {err}") from err

    @classmethod
    def wrapper_chain(cls, cfg: Mapping[str, Any]) -> WrapperChain:
        chain = cfg.get("env_wrapper", "default")
        if chain is None:
            return ["eval_episode_return"]
        if isinstance(chain, str) and chain not in PRESETS:
            raise ConfigError(f"env_wrapper {chain!r} is not a preset; presets: {', '.join(PRESETS)}, or give a list")
        steps = resolve_wrappers(chain, train=bool(cfg.get("is_train", True)))
        items: list[Any] = [{"type": step.name, "kwargs": dict(step.kwargs)} for step in steps]
        if not any(step.name == "eval_episode_return" for step in steps):
            items.append("eval_episode_return")
        return items

    def _compute_spaces(self) -> EnvSpaces | None:
        if self._given_env is not None:
            given = self._given_env
            raw = EnvSpaces(given.observation_space, given.action_space, reward_space_of(given))
            return type(self).trace_from(raw, self._cfg)[-1][1]
        return super()._compute_spaces()

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        """The simulator, before any wrapper; subclasses override this for their own envs."""
        if self._given_env is not None:
            return self._given_env
        extra = {"render_mode": "rgb_array"} if render else {}
        env_id = self._cfg.env_id
        return call_with_env_kwargs(make_env, str(env_id), self._cfg.env_kwargs or {}, env_id, **extra)

    def _build(self, render: bool = False) -> gym.Env[Any, Any]:
        if render:
            use_headless_sdl()
        self._raw = self._make_raw_env(render=render)
        return apply_wrappers(self._raw, type(self).wrapper_chain(self._cfg), train=bool(self._cfg.is_train))

    def _check_declared_spaces(self) -> None:
        raw = self._raw
        assert raw is not None  # set by _build
        wrapped = type(self).trace_from(
            EnvSpaces(raw.observation_space, raw.action_space, reward_space_of(raw)), self._cfg
        )[-1][1]
        if wrapped != self._spaces:
            raise EnvSpecError(
                f"{type(self).__name__}: the env built for this config has spaces {wrapped}, "
                f"but its declaration says {self._spaces}"
            )

    # ----- env interface -------------------------------------------------------------------------
    def reset(self, options: dict[str, Any] | None = None) -> Any:
        """Start an episode; ``options`` go to the gymnasium env's ``reset(options=...)`` (as SB3's ``set_options``
        gives them)."""
        if self._closed:
            raise RuntimeError(f"{type(self).__name__} is closed")
        if self._rebuild_for_render:
            self._rebuild_for_render = False
            self._game_goes_on = False  # a new simulator starts a new game
            self._env.close()
            self._env = self._build(render=True)
        # A seed restarts the game, so an episode that ended with a lost life, not the game, continues unseeded.
        seed = self._next_episode_seed() if self._seed_api and not self._game_goes_on else None
        self._game_goes_on = False
        obs, _ = self._env.reset(seed=seed, options=options)
        if self._recorder is not None:
            self._recorder.finish_episode()
            self._recorder.add_frame(self._env.render())
        return self._to_obs(obs)

    def step(self, action: Any) -> BaseEnvTimestep:
        obs, reward, terminated, truncated, info = self._env.step(self._to_action(action))
        if self._recorder is not None and self._env.render_mode == "rgb_array":
            self._recorder.add_frame(self._env.render())
            if terminated or truncated:
                self._recorder.finish_episode()
        if type(terminated) is not bool or type(truncated) is not bool:
            terminated, truncated = bool(terminated), bool(truncated)
        done = terminated or truncated
        self._game_goes_on = done and info.get("real_done") is False
        return BaseEnvTimestep(self._to_obs(obs), self._to_reward(reward), done, info, terminated, truncated)

    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        super().seed(seed, dynamic_seed)
        self._game_goes_on = False

    def get_state(self) -> EnvStateToken:
        """The env's whole state: its simulator's, every wrapper's, its current time step and episode seeds.

        Classic control, MuJoCo, ALE and dm_control simulators (and any with its own ``get_state`` /
        ``set_state``) have one; others raise :class:`~ding.envs.env_state.StateNotSupportedError`.

        Example:
            >>> env = DingEnvWrapper(cfg={'env_id': 'CartPole-v1'})
            >>> env.seed(0)
            >>> _ = env.reset()
            >>> state = env.get_state()
            >>> first = [env.step(1).obs for _ in range(3)]
            >>> env.set_state(state)
            >>> all((env.step(1).obs == obs).all() for obs in first)
            True
        """
        return capture_env_state(self._env, type(self).__name__, self._own_state())

    def set_state(self, state: Any) -> None:
        """Restore a state from :meth:`get_state` of this env (or of another env built from the same config)."""
        self._restore_own_state(restore_env_state(self._env, type(self).__name__, state))

    def _own_state(self) -> dict[str, Any]:
        """What this object adds to the state of its gymnasium env; a subclass with more extends both methods."""
        seeding = ("_seed", "_dynamic_seed", "_episode_seeds")
        return {
            "time_step": self._ding_time_step,
            "game_goes_on": self._game_goes_on,
            "seeding": {name: getattr(self, name, None) for name in seeding},
        }

    def _restore_own_state(self, own: dict[str, Any]) -> None:
        self._ding_time_step = own["time_step"]
        self._game_goes_on = own["game_goes_on"]
        for name, value in own["seeding"].items():
            setattr(self, name, value)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._env.close()

    def render(self) -> Any:
        return self._env.render()

    def enable_save_replay(self, replay_path: str | None = None) -> None:
        """Record each following episode to ``replay_path/replay-episode-NNNN.mp4`` (default ``./video``).

        Envs made from ``env_id`` are rebuilt with ``render_mode='rgb_array'``; a given env
        instance must already have been made with that render mode.
        """
        replay_path = "./video" if replay_path is None else replay_path
        super().enable_save_replay(replay_path)
        if self._env.render_mode != "rgb_array":
            if self._given_env is not None:
                raise ValueError(
                    f"enable_save_replay needs render_mode='rgb_array'; the given env has {self._env.render_mode!r}"
                )
            self._rebuild_for_render = True  # at the next reset, so a running episode is not cut
        self._recorder = EpisodeVideoRecorder(replay_path)

    @property
    def env(self) -> gym.Env[Any, Any]:
        """The wrapped gymnasium env."""
        return self._env

    @property
    def render_mode(self) -> str | None:
        """The wrapped gymnasium env's render mode (``'rgb_array'`` once ``enable_save_replay`` has rebuilt it)."""
        return self._env.render_mode

    def has_wrapper(self, wrapper_class: type[Any]) -> bool:
        """Whether a gymnasium wrapper of ``wrapper_class`` is around the simulator (SB3's ``env_is_wrapped``).

        >>> env = DingEnvWrapper(cfg={'env_id': 'CartPole-v1'})
        >>> env.has_wrapper(gym.wrappers.TimeLimit), env.has_wrapper(gym.wrappers.RecordVideo)
        (True, False)
        """
        layer: Any = self._env
        while isinstance(layer, gym.Wrapper):
            if isinstance(layer, wrapper_class):
                return True
            layer = layer.env
        return False

    def clone(self, caller: str = "collector") -> DingEnvWrapper:
        """A new env with this one's config and settings, for ``caller``; it shares no state with this one.

        A given env instance is deep-copied (or, when it cannot be copied, made anew from its
        gymnasium spec); an env made from ``env_id`` is made anew. A ``caller`` other than this env's
        sets ``is_train`` to match it. A subclass with its own ``__init__`` is rebuilt from ``cfg``.
        """
        if caller not in CALLERS:
            raise ValueError(f"caller must be one of {CALLERS}, got {caller!r}")
        cfg = dict(self._cfg)
        if caller != self._caller:
            cfg["is_train"] = caller == "collector"
        if type(self).__init__ is not DingEnvWrapper.__init__:
            return type(self)(cfg=cfg)  # type: ignore[call-arg]
        env = None if self._env_arg is None else _copy_env(self._env_arg)
        return type(self)(env, cfg, seed_api=self._seed_api, caller=caller, is_gymnasium=self._is_gymnasium)


def _copy_env(env: Any) -> Any:
    """An independent copy of an env instance: a deep copy, or else a new env made from its gymnasium spec."""
    try:
        return copy.deepcopy(env)
    except (TypeError, AttributeError, ValueError, RuntimeError, pickle.PicklingError) as copy_error:
        spec = getattr(env, "spec", None)
        if spec is None:
            raise TypeError(
                f"cannot clone {type(env).__name__}: it cannot be deep-copied ({copy_error}) and has no gymnasium "
                "spec to make it anew; pass cfg.env_id instead of an instance"
            ) from copy_error
        return gym.make(spec)
