"""``BaseEnvManager``: the manager API, running every env in the calling process.

It defines the semantics every manager shares (the conformance suite checks them):

- ``launch`` builds and resets every env; ``ready_obs`` holds the observation of each env waiting
  for an action; ``step({env_id: action})`` steps those envs and returns their timesteps.
- With ``auto_reset`` an env whose episode ended is reset inside the same ``step`` call, so its
  next ``ready_obs`` entry is the new episode's first observation; without it the env waits in
  ``DONE_EPISODE`` until ``reset({env_id: ...})``.
- After ``episode_num`` completed episodes an env is ``DONE`` and leaves ``ready_obs``; ``done`` is
  true when every env is.
- A fault (an exception in reset or step) ends the env's episode with an *abnormal* timestep
  (``done=True``, ``info['abnormal'] = True``, ``info['error']`` the error text) and, while the env
  has retries left (``max_retry``), resets it (``retry_type='reset'``) or builds it anew
  (``'renew'``). Abnormal episodes do not count towards ``episode_num``. Past ``max_retry`` the
  manager closes and raises :class:`~ding.errors.EnvStepError`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from easydict import EasyDict
from gymnasium import spaces

from ding.envs.conversion import Converter, action_converter
from ding.envs.env_manager.config import manager_default_config
from ding.envs.env_manager.env_fn import EnvFn, common_spaces
from ding.envs.env_manager.state import EnvState
from ding.envs.spaces import EnvSpaces
from ding.envs.timestep import BaseEnvTimestep
from ding.errors import ConfigError, EnvManagerError, EnvSpecError, EnvStepError

RETRY_TYPES = ("reset", "renew")
CONTEXTS = ("fork", "spawn", "forkserver")


@dataclasses.dataclass(frozen=True)
class BatchTimestep:
    """One step of every env as arrays with a leading env axis (what vectorized trainers consume).

    ``obs`` holds each env's next observation: the new episode's first one where an episode ended
    and the env was reset; ``final_obs`` maps the env ids whose episode ended to its last one.
    """

    obs: Any
    reward: np.ndarray
    done: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    info: list[dict[str, Any]]
    final_obs: dict[int, Any]


@dataclasses.dataclass(frozen=True)
class ObsBatch:
    """Observations of several envs stacked on a leading axis, with the env id of each row."""

    env_ids: np.ndarray
    obs: Any


def check_manager_config(cfg: Mapping[str, Any]) -> None:
    """Reject manager settings outside their accepted values, naming the key and value."""
    if cfg["retry_type"] not in RETRY_TYPES:
        raise ConfigError(f"env.manager.retry_type must be one of {RETRY_TYPES}, got {cfg['retry_type']!r}")
    if cfg["context"] is not None and cfg["context"] not in CONTEXTS:
        raise ConfigError(f"env.manager.context must be one of {CONTEXTS}, got {cfg['context']!r}")
    if not isinstance(cfg["max_retry"], int) or cfg["max_retry"] < 0:
        raise ConfigError(f"env.manager.max_retry must be an int >= 0, got {cfg['max_retry']!r}")
    if not isinstance(cfg["envs_per_worker"], int) or cfg["envs_per_worker"] < 1:
        raise ConfigError(f"env.manager.envs_per_worker must be an int >= 1, got {cfg['envs_per_worker']!r}")
    episode_num = cfg["episode_num"]
    if not (episode_num == float("inf") or (isinstance(episode_num, int) and episode_num >= 1)):
        raise ConfigError(f"env.manager.episode_num must be an int >= 1 or inf, got {episode_num!r}")
    for key in ("step_timeout", "reset_timeout", "step_wait_timeout"):
        value = cfg[key]
        if value is not None and (not isinstance(value, (int, float)) or value <= 0):
            raise ConfigError(f"env.manager.{key} must be a positive number of seconds or None, got {value!r}")


def stack_obs(items: Sequence[Any]) -> Any:
    """Stack observations (arrays, or dicts/tuples of arrays) on a new leading axis."""
    first = items[0]
    if isinstance(first, Mapping):
        return {key: stack_obs([item[key] for item in items]) for key in first}
    if isinstance(first, tuple):
        return tuple(stack_obs([item[i] for item in items]) for i in range(len(first)))
    return np.stack([np.asarray(item) for item in items])


def _seed_value(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"{where} (the seed of env {where[5:-1]}) must be an int, got {value!r} ({type(value).__name__})"
        )
    return int(value)


def expand_seeds(seed: int | Sequence[int] | Mapping[int, int], env_num: int) -> dict[int, int]:
    """Seeds per env id: an int gives ``seed + env_id``; a list gives one per env; a dict gives some envs theirs."""
    if isinstance(seed, Mapping):
        for env_id in seed:
            if not isinstance(env_id, int) or not 0 <= env_id < env_num:
                raise ValueError(f"seed dict names env id {env_id!r}; accepted ids: 0..{env_num - 1}")
        return {int(k): _seed_value(v, f"seed[{k}]") for k, v in seed.items()}
    if isinstance(seed, (list, tuple)):
        if len(seed) != env_num:
            raise ValueError(f"seed list has {len(seed)} entries for {env_num} envs")
        return {i: _seed_value(s, f"seed[{i}]") for i, s in enumerate(seed)}
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return {i: int(seed) + i for i in range(env_num)}
    raise TypeError(f"seed must be an int, a list of ints or a dict {{env_id: int}}, got {seed!r}")


def replay_dirs(replay_path: str | Sequence[str], env_num: int) -> list[str]:
    """One replay directory per env: a list as given, or ``<path>/env<i>`` for a single path."""
    if isinstance(replay_path, str):
        return [replay_path] if env_num == 1 else [os.path.join(replay_path, f"env{i}") for i in range(env_num)]
    paths = list(replay_path)
    if len(paths) != env_num:
        raise ValueError(f"replay_path list has {len(paths)} entries for {env_num} envs")
    return paths


class BaseEnvManager:
    """Serial env manager: every env lives and steps in the calling process.

    Example:
        >>> from functools import partial
        >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
        >>> manager = BaseEnvManager([partial(CartPoleEnv, cfg={}) for _ in range(2)], {'episode_num': 1})
        >>> manager.observation_space.shape        # known before launch
        (4,)
        >>> manager.seed(0)
        >>> manager.launch()
        >>> while not manager.done:
        ...     timesteps = manager.step({i: 0 for i in manager.ready_obs_id})
        >>> manager.close()
    """

    manager_type = "base"

    def __init__(self, env_fn: Sequence[EnvFn], cfg: Mapping[str, Any] | None = None) -> None:
        from ding.utils.merge import deep_merge_dicts

        defaults = manager_default_config(self.manager_type)
        user = {k: v for k, v in dict(cfg or {}).items() if not (k == "type" and v == self.manager_type)}
        self._cfg = EasyDict(deep_merge_dicts(defaults, user, strict=True, path="env.manager"))
        check_manager_config(self._cfg)
        self._env_fns: list[EnvFn] = list(env_fn)
        if not self._env_fns:
            raise ValueError("an env manager needs at least one env constructor")
        if not all(callable(fn) for fn in self._env_fns):
            raise TypeError("env_fn must be a list of callables that build envs")
        self._env_num = len(self._env_fns)
        self._spaces: EnvSpaces | None = common_spaces(self._env_fns)
        self._states = [EnvState.VOID] * self._env_num
        self._seeds: dict[int, int] = {}
        self._dynamic_seed = True
        self._episode_count = [0] * self._env_num
        self._retry_count = [0] * self._env_num
        self._ready_obs: dict[int, Any] = {}
        self._replay_dirs: list[str] | None = None
        self._launched = False
        self._closed = False
        self._action_check: Converter | None = None
        self._envs: list[Any] = []

    # ----- properties ----------------------------------------------------------------------------
    @property
    def env_num(self) -> int:
        return self._env_num

    @property
    def env_states(self) -> dict[int, EnvState]:
        return dict(enumerate(self._states))

    @property
    def ready_obs(self) -> dict[int, Any]:
        """Observations of the envs waiting for an action, by env id."""
        return dict(sorted(self._ready_obs.items()))

    @property
    def ready_obs_id(self) -> list[int]:
        return sorted(self._ready_obs)

    def ready_obs_batch(self) -> ObsBatch:
        """The ready observations stacked on a leading axis, with their env ids."""
        ids = self.ready_obs_id
        if not ids:
            raise EnvManagerError(f"no env is ready; env states: {self._state_summary()}")
        return ObsBatch(np.asarray(ids), stack_obs([self._ready_obs[i] for i in ids]))

    @property
    def done(self) -> bool:
        """True once every env has completed ``episode_num`` episodes."""
        return all(state in (EnvState.DONE, EnvState.CLOSED) for state in self._states)

    @property
    def worker_pids(self) -> list[int | None]:
        """Process ids of worker processes (none: this manager runs envs in the calling process)."""
        return []

    @property
    def shared_memory_names(self) -> list[str]:
        """Names of shared-memory segments (none for the in-process manager)."""
        return []

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def launched(self) -> bool:
        return self._launched

    @property
    def env_spaces(self) -> EnvSpaces:
        if self._spaces is None:
            raise EnvManagerError(
                "the envs' spaces are not declared by their constructors; they are known after launch()"
            )
        return self._spaces

    @property
    def observation_space(self) -> spaces.Space[Any]:
        return self.env_spaces.observation

    @property
    def action_space(self) -> spaces.Space[Any]:
        return self.env_spaces.action

    @property
    def reward_space(self) -> spaces.Space[Any]:
        return self.env_spaces.reward

    # ----- lifecycle -----------------------------------------------------------------------------
    def launch(self, reset_param: Mapping[int, Mapping[str, Any]] | None = None) -> None:
        """Build every env, apply seeds and replay settings, and reset them all."""
        self._check_open()
        if self._launched:
            raise EnvManagerError(f"{type(self).__name__} is already launched")
        self._create_envs()
        self._launched = True
        self._action_check = action_converter(self.action_space, owner="")
        self.reset(reset_param)

    def reset(self, reset_param: Mapping[int, Mapping[str, Any]] | None = None) -> None:
        """Reset the envs named in ``reset_param`` (every env when None); their episode counts restart."""
        self._check_launched()
        params = self._check_reset_param(reset_param)
        for env_id in params:
            self._episode_count[env_id] = 0
            self._ready_obs.pop(env_id, None)
        self._reset_envs(params)

    def step(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        """Step the envs named in ``actions``; every action is checked before any env moves."""
        self._check_launched()
        checked = self._check_actions(actions)
        timesteps = self._step_envs(checked)
        ready = self._ready_obs
        for env_id, timestep in timesteps.items():
            if timestep.done:
                self._after_step(env_id, timestep)
            else:  # the common case, inlined
                ready[env_id] = timestep.obs
        return timesteps

    def step_batch(self, actions: Any) -> BatchTimestep:
        """Step every env with ``actions[env_id]`` (an array or sequence with one row per env).

        Every env must be waiting for an action. Equivalent to ``step({i: actions[i] ...})`` with the
        results stacked; subprocess managers do it without per-env messages.
        """
        self._check_launched()
        self._require_all_ready()
        if len(actions) != self._env_num:
            raise ValueError(f"step_batch() got {len(actions)} actions for {self._env_num} envs")
        return self._batch_from(self.step({i: actions[i] for i in range(self._env_num)}))

    def _require_all_ready(self) -> None:
        if len(self._ready_obs) != self._env_num:
            raise EnvManagerError(
                f"step_batch needs every env waiting for an action; ready: {self.ready_obs_id}, "
                f"states: {self._state_summary()}"
            )

    def _batch_from(self, timesteps: Mapping[int, BaseEnvTimestep]) -> BatchTimestep:
        ids = range(self._env_num)
        ready = self._ready_obs
        return BatchTimestep(
            obs=stack_obs([ready[i] if i in ready else timesteps[i].obs for i in ids]),
            reward=np.stack([np.asarray(timesteps[i].reward) for i in ids]),
            done=np.array([timesteps[i].done for i in ids], dtype=bool),
            terminated=np.array([timesteps[i].terminated for i in ids], dtype=bool),
            truncated=np.array([timesteps[i].truncated for i in ids], dtype=bool),
            info=[timesteps[i].info for i in ids],
            final_obs={i: ts.obs for i, ts in timesteps.items() if ts.done},
        )

    def seed(self, seed: int | Sequence[int] | Mapping[int, int], dynamic_seed: bool = True) -> None:
        """Seed envs: an int seeds env i with ``seed + i``; a list or dict gives seeds explicitly.

        Seeds take effect at each env's next reset (``launch`` included).
        """
        self._check_open()
        self._seeds.update(expand_seeds(seed, self._env_num))
        self._dynamic_seed = bool(dynamic_seed)
        if self._launched:
            self._apply_seeds()

    def enable_save_replay(self, replay_path: str | Sequence[str]) -> None:
        """Record episodes of every env as videos (one directory per env)."""
        self._check_open()
        self._replay_dirs = replay_dirs(replay_path, self._env_num)
        if self._launched:
            self._apply_replay()

    def close(self) -> None:
        """Close every env; calling it again does nothing."""
        if self._closed:
            return
        self._closed = True
        self._ready_obs.clear()
        try:
            self._close_envs()
        finally:
            self._states = [EnvState.CLOSED] * self._env_num

    def __enter__(self) -> BaseEnvManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at interpreter shutdown there is nobody to report to
            self.close()

    def __getattr__(self, name: str) -> Callable[..., list[Any]]:
        """Fan a method call out to every env: ``manager.render()`` → ``[env.render() for env in envs]``."""
        if name.startswith("_"):
            raise AttributeError(name)
        if self.__dict__.get("_closed", True):
            raise AttributeError(f"{type(self).__name__} is closed: no env method {name!r} to fan out")
        if not self.__dict__.get("_launched", False):
            raise AttributeError(
                f"{type(self).__name__} is not launched: env methods such as {name!r} fan out after launch()"
            )
        if not self._has_env_method(name):
            raise AttributeError(
                f"{type(self).__name__} has no attribute {name!r}, and its envs have no method {name!r}"
            )
        return lambda *args, **kwargs: self._call_all(name, args, kwargs)

    # ----- checks --------------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise EnvManagerError(f"{type(self).__name__} is closed")

    def _check_launched(self) -> None:
        self._check_open()
        if not self._launched:
            raise EnvManagerError(f"{type(self).__name__} is not launched; call launch() first")

    def _state_summary(self) -> str:
        return ", ".join(f"{i}:{state.value}" for i, state in enumerate(self._states))

    def _check_reset_param(self, reset_param: Mapping[int, Mapping[str, Any]] | None) -> dict[int, dict[str, Any]]:
        if reset_param is None:
            return {i: {} for i in range(self._env_num)}
        if not isinstance(reset_param, Mapping):
            raise TypeError(f"reset_param must be a dict {{env_id: kwargs}}, got {reset_param!r}")
        params = {}
        for env_id, kwargs in reset_param.items():
            if not isinstance(env_id, (int, np.integer)) or not 0 <= env_id < self._env_num:
                raise ValueError(f"reset_param names env id {env_id!r}; accepted ids: 0..{self._env_num - 1}")
            if kwargs is not None and not isinstance(kwargs, Mapping):
                raise TypeError(f"reset_param[{env_id}] must be a dict of reset kwargs, got {kwargs!r}")
            params[int(env_id)] = dict(kwargs or {})
        return params

    def _check_actions(self, actions: Mapping[int, Any]) -> dict[int, Any]:
        if not isinstance(actions, Mapping):
            raise TypeError(f"step() takes a dict {{env_id: action}}, got {type(actions).__name__}")
        ready = self._ready_obs
        if not actions:
            raise ValueError(f"step() got no actions; ready env ids: {self.ready_obs_id}")
        assert self._action_check is not None
        checked = {}
        check = self._action_check
        for env_id, action in actions.items():
            if env_id not in ready:
                if isinstance(env_id, (int, np.integer)) and 0 <= env_id < self._env_num:
                    state = self._states[int(env_id)].value
                    raise ValueError(
                        f"env {env_id} is not waiting for an action (state {state!r}); ready: {self.ready_obs_id}"
                    )
                raise ValueError(
                    f"unknown env id {env_id!r}; ids are 0..{self._env_num - 1}, ready: {self.ready_obs_id}"
                )
            try:
                checked[int(env_id)] = check(action)
            except (TypeError, ValueError) as err:
                raise type(err)(f"env {env_id}: {err}") from None
        return checked

    # ----- in-process implementation (subprocess managers override these) --------------------------
    def _create_envs(self) -> None:
        self._envs = [fn() for fn in self._env_fns]
        self._states = [EnvState.INIT] * self._env_num
        built = [EnvSpaces(env.observation_space, env.action_space, env.reward_space) for env in self._envs]
        if self._spaces is None:
            self._spaces = built[0]
        for env_id, env_spaces in enumerate(built):
            if env_spaces != self._spaces:
                raise EnvSpecError(f"env {env_id} has spaces {env_spaces}, but the batch declares {self._spaces}")
        self._apply_seeds()
        if self._replay_dirs is not None:
            self._apply_replay()

    def _apply_seeds(self, env_ids: Sequence[int] | None = None) -> None:
        for env_id in env_ids if env_ids is not None else range(self._env_num):
            if env_id in self._seeds:
                self._envs[env_id].seed(self._seeds[env_id], dynamic_seed=self._dynamic_seed)

    def _apply_replay(self, env_ids: Sequence[int] | None = None) -> None:
        assert self._replay_dirs is not None
        for env_id in env_ids if env_ids is not None else range(self._env_num):
            self._envs[env_id].enable_save_replay(self._replay_dirs[env_id])

    def _reset_envs(self, params: Mapping[int, dict[str, Any]]) -> None:
        for env_id, kwargs in params.items():
            self._reset_one(env_id, kwargs)

    def _reset_one(self, env_id: int, kwargs: Mapping[str, Any]) -> None:
        while True:
            self._states[env_id] = EnvState.RESET
            try:
                self._ready_obs[env_id] = self._envs[env_id].reset(**kwargs)
            except Exception as exc:  # env code may raise anything; it is reported with its traceback
                self._recover(env_id, self._error_from(env_id, "reset", exc))
                continue
            self._states[env_id] = EnvState.RUN
            return

    def _step_envs(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        timesteps = {}
        for env_id, action in actions.items():
            try:
                timesteps[env_id] = self._envs[env_id].step(action)
            except Exception as exc:  # see _reset_one
                timesteps[env_id] = self._abnormal(env_id, self._error_from(env_id, "step", exc))
        return timesteps

    def _renew_env(self, env_id: int) -> None:
        with contextlib.suppress(Exception):  # a broken env may fail to close; it is replaced either way
            self._envs[env_id].close()
        self._envs[env_id] = self._env_fns[env_id]()
        self._apply_seeds([env_id])
        if self._replay_dirs is not None:
            self._apply_replay([env_id])

    def _close_envs(self) -> None:
        errors = []
        for env in self._envs:
            try:
                env.close()
            except Exception as exc:  # close every env before reporting
                errors.append(exc)
        self._envs = []
        if errors:
            raise EnvManagerError(f"{len(errors)} env(s) failed to close; first: {errors[0]!r}") from errors[0]

    def _has_env_method(self, name: str) -> bool:
        return bool(self._envs) and callable(getattr(self._envs[0], name, None))

    def _call_all(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        methods = [getattr(env, name, None) for env in self._envs]
        if not all(callable(m) for m in methods):
            raise AttributeError(f"the envs of this manager have no method {name!r}")
        return [m(*args, **kwargs) for m in methods]  # type: ignore[misc]

    # ----- shared fault and episode logic ---------------------------------------------------------
    @staticmethod
    def _error_from(env_id: int, operation: str, exc: BaseException) -> EnvStepError:
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return EnvStepError(env_id, operation, type(exc).__name__, str(exc), text)

    def _spend_retry(self, env_id: int, error: EnvManagerError) -> None:
        """Spend one retry on ``env_id``, or mark it failed, close the manager and raise ``error``."""
        self._retry_count[env_id] += 1
        if self._retry_count[env_id] > self._cfg.max_retry:
            self._states[env_id] = EnvState.ERROR
            self.close()
            raise error

    def _recover(self, env_id: int, error: EnvManagerError) -> None:
        """Spend one retry on ``env_id`` and renew it if so configured (a ``reset`` follows either way)."""
        self._spend_retry(env_id, error)
        if self._cfg.retry_type == "renew":
            self._renew_env(env_id)

    def _abnormal(self, env_id: int, error: EnvManagerError, *, renew: bool = True) -> BaseEnvTimestep:
        """Account a failed step: spend a retry and return the abnormal end of the env's episode."""
        obs = self._ready_obs.get(env_id)
        if renew:
            self._recover(env_id, error)
        else:
            self._spend_retry(env_id, error)
        reward = np.zeros(self.reward_space.shape or (1,), dtype=np.float32)
        info = {"abnormal": True, "error": error.summary, "traceback": error.traceback_text}
        return BaseEnvTimestep(obs, reward, True, info, terminated=False, truncated=True)

    def _after_step(self, env_id: int, timestep: BaseEnvTimestep) -> None:
        if not timestep.done:
            self._ready_obs[env_id] = timestep.obs
            return
        self._ready_obs.pop(env_id, None)
        if not timestep.info.get("abnormal", False):
            self._episode_count[env_id] += 1
        if self._episode_count[env_id] >= self._cfg.episode_num:
            self._states[env_id] = EnvState.DONE
        elif self._cfg.auto_reset or timestep.info.get("abnormal", False):
            self._reset_envs({env_id: {}})
        else:
            self._states[env_id] = EnvState.DONE_EPISODE
