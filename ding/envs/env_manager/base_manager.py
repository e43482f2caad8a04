"""``BaseEnvManager``: the manager API, running every env in the calling process.

It defines the semantics every manager shares (the conformance suite checks them):

- ``launch`` builds and resets every env; ``ready_obs`` holds the observation of each env waiting
  for an action; ``step({env_id: action})`` steps those envs and returns their timesteps. A
  manager is ``closed`` before ``launch`` and after ``close``, and can be launched again.
- With ``auto_reset`` an env whose episode ended is reset inside the same ``step`` call, so its
  next ``ready_obs`` entry is the new episode's first observation; without it the env waits in
  ``NEED_RESET`` until ``reset({env_id: ...})``.
- After ``episode_num`` completed episodes (counted from ``launch``) an env is ``DONE`` and
  leaves ``ready_obs``; ``done`` is true when every env is.
- A fault (an exception in reset or step, a call past its timeout, a dead or hung worker) ends the
  env's episode with an *abnormal* timestep (``done=True``, ``info['abnormal'] = True``,
  ``info['error']`` the error text) and the env is reset (``retry_type='reset'``) or built anew
  (``'renew'``). Abnormal episodes do not count towards ``episode_num``. ``max_retry`` is the
  number of attempts: when an env's consecutive failures (since its last successful step or the
  caller's last reset of it) reach it, the env is ``ERROR`` and the call raises; the manager stays
  open, the other envs keep their steps, and ``reset`` revives the env. A failed ``launch``
  leaves the manager closed.

Envs whose constructors declare their spaces are checked against them (actions included); other
envs (DI-engine's style) have their spaces read from one built instance (``env_ref``) and check
their own actions.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, TypeVar

import numpy as np
from easydict import EasyDict
from gymnasium import spaces

from ding.envs.conversion import Converter, action_converter
from ding.envs.env_manager import async_api
from ding.envs.env_manager.async_api import SendRecvState
from ding.envs.env_manager.batch import BatchTimestep, ObsBatch, stack_obs
from ding.envs.env_manager.core.failure import Failure
from ding.envs.env_manager.env_fn import EnvFn, common_spaces
from ding.envs.env_manager.env_thread import CallTimeout, EnvThread
from ding.envs.env_manager.fanout import METHOD_NAME_LIST, describe_attribute, fan_out_values
from ding.envs.env_manager.inputs import check_action_rows, check_actions, check_reset_param
from ding.envs.env_manager.settings import (
    IDENTITY_KEYS,
    check_identity_keys,
    check_manager_config,
    expand_seeds,
    replay_dirs,
    reset_wait,
    seed_env,
)
from ding.envs.env_manager.state import EnvState
from ding.envs.probe import class_declared_spaces, read_spaces
from ding.envs.spaces import DEFAULT_REWARD_SPACE, EnvSpaces
from ding.envs.timestep import BaseEnvTimestep
from ding.errors import EnvManagerError, EnvSpecError, ManagerStateError, WorkerTimeoutError
from ding.utils.merge import deep_merge_dicts

__all__ = ["BaseEnvManager", "BatchTimestep", "ObsBatch", "stack_obs"]
R = TypeVar("R")


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
    partial_batches = False
    """Whether ``step`` may return before every stepped env has its result (async managers)."""
    config: ClassVar[dict[str, Any]] = {
        "episode_num": math.inf,  # episodes each env plays before it is DONE
        "max_retry": 2,  # attempts per failure (1 = no retry)
        "retry_type": "reset",  # "reset" the failed env, or "renew" (rebuild) it
        "auto_reset": True,  # reset an env inside the step that ended its episode
        "step_timeout": None,  # seconds a step may take (None: no limit; set: envs run on per-env threads)
        "reset_timeout": None,  # seconds a reset may take (likewise)
        "connect_timeout": None,  # seconds workers may take to start, and any reset to answer
        "retry_waiting_time": 0.1,  # seconds to wait before retrying a failed reset
        "reset_inplace": False,  # accepted for DI-engine configs: ding always resets within the step
        "copy_on_get": True,  # observations read from shared memory are copies
        "shared_memory": False,  # observations, rewards and flags in shared memory (process managers)
        "context": None,  # start method of worker processes: fork, spawn, forkserver
        "wait_num": math.inf,  # results an async step waits for (inf: every env)
        "step_wait_timeout": None,  # seconds an async step waits for wait_num results
        "envs_per_worker": 1,  # envs each worker process holds
        "batch_size": None,  # envs recv() waits for (None: every env in flight)
    }
    """Declared defaults: the keys this manager accepts (``default_config`` returns a copy)."""

    @classmethod
    def default_config(cls) -> EasyDict:
        """A copy of the declared defaults, with DI-engine's ``cfg_type`` tag.

        >>> BaseEnvManager.default_config().cfg_type
        'BaseEnvManagerDict'
        """
        cfg = EasyDict(copy.deepcopy(cls.config))
        cfg.cfg_type = f"{cls.__name__}Dict"
        return cfg

    def __init__(self, env_fn: Sequence[EnvFn], cfg: Mapping[str, Any] | None = None) -> None:
        user = dict(cfg or {})
        check_identity_keys(user, [self.manager_type])
        merged = deep_merge_dicts(
            type(self).config,
            {k: v for k, v in user.items() if k not in IDENTITY_KEYS},
            strict=True,
            path="env.manager",
        )
        check_manager_config(merged, partial_batches=self.partial_batches)
        self._episode_num: float = merged.pop("episode_num")
        self._max_retry: int = merged.pop("max_retry")
        self._retry_type: str = merged.pop("retry_type")
        self._auto_reset: bool = merged.pop("auto_reset")
        self._step_timeout: float | None = merged.pop("step_timeout")
        self._reset_timeout: float | None = merged.pop("reset_timeout")
        self._connect_timeout: float | None = merged.pop("connect_timeout")
        self._retry_waiting_time: float = merged.pop("retry_waiting_time")
        self._reset_inplace: bool = merged.pop("reset_inplace")
        self._copy_on_get: bool = merged.pop("copy_on_get")
        self._wait_num: float | None = merged.pop("wait_num")
        self._step_wait_timeout: float | None = merged.pop("step_wait_timeout")
        self._batch_size: int | None = merged.pop("batch_size")
        async_api.check_batch_size(self._batch_size, "env.manager.batch_size")
        self._cfg = EasyDict(merged)
        """The remaining settings (how workers run); the ones above are attributes, read where they apply."""
        self._env_fns: list[EnvFn] = list(env_fn)
        if not self._env_fns:
            raise ValueError("an env manager needs at least one env constructor")
        if not all(callable(fn) for fn in self._env_fns):
            raise TypeError("env_fn must be a list of callables that build envs")
        self._env_num = len(self._env_fns)
        self._spaces: EnvSpaces | None = common_spaces(self._env_fns)
        self._spaces_declared = self._spaces is not None
        """True when the constructors state the spaces: actions are checked and laid out in shared memory."""
        self._env_states = dict.fromkeys(range(self._env_num), EnvState.VOID)
        self._env_episode_count = dict.fromkeys(range(self._env_num), 0)
        self._failures: dict[int, int] = {}  # env id -> consecutive failed attempts
        self._fatal: list[EnvManagerError] = []  # failures past max_retry, raised when the call ends
        self._seeds: dict[int, int] = {}
        self._dynamic_seed: bool | None = None
        self._ready_obs: dict[int, Any] = {}
        self._replay_dirs: list[str] | None = None
        self._closed = True
        self._launches = 0
        self._launching = False
        self._action_check: Converter | None = None
        self._envs: list[Any] = []
        self._reference: Any = None  # env_ref, built on first use
        self._threads: dict[int, EnvThread] = {}
        self._stuck: set[int] = set()  # envs whose call overran its timeout: abandoned, rebuilt before use
        self._send_recv = SendRecvState()
        """Envs in flight from ``send`` / ``async_reset`` (see :mod:`~ding.envs.env_manager.async_api`)."""

    # ----- properties ----------------------------------------------------------------------------
    @property
    def env_num(self) -> int:
        return self._env_num

    @property
    def env_states(self) -> dict[int, EnvState]:
        return dict(self._env_states)

    @property
    def ready_obs(self) -> dict[int, Any]:
        """Observations of the envs waiting for an action, by env id (envs in flight from ``send`` are not)."""
        ids = self.ready_obs_id
        return {env_id: self._ready_obs[env_id] for env_id in ids}

    @property
    def ready_obs_id(self) -> list[int]:
        state = self._send_recv
        if state.sent or state.first:
            flying = set(state.in_flight())
            return sorted(i for i in self._ready_obs if i not in flying)
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
        return all(state is EnvState.DONE for state in self._env_states.values())

    def env_state_done(self, env_id: int) -> bool:
        """Whether env ``env_id`` has played its ``episode_num`` episodes."""
        return self._env_states[env_id] is EnvState.DONE

    @property
    def method_name_list(self) -> list[str]:
        """Env methods that ``manager.<name>(...)`` calls on every env; a subclass may extend the list."""
        return list(METHOD_NAME_LIST)

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
        """True before ``launch`` and after ``close``."""
        return self._closed

    @property
    def launched(self) -> bool:
        return not self._closed

    @property
    def env_ref(self) -> Any:
        """One env built in this process (on first use) and kept until ``close``: DI-engine's ``env_ref``."""
        if self._reference is None:
            self._reference = self._env_fns[0]()
        return self._reference

    @property
    def _env_ref(self) -> Any:
        return self.env_ref

    @property
    def env_spaces(self) -> EnvSpaces:
        """The envs' spaces: declared by their constructors, else read from one built env (see ``_probe_spaces``)."""
        if self._spaces is None:
            self._spaces = self._probe_spaces()
        return self._spaces

    def _probe_spaces(self) -> EnvSpaces:
        return read_spaces(self.env_ref)

    @property
    def observation_space(self) -> spaces.Space[Any]:
        return self.env_spaces.observation

    @property
    def action_space(self) -> spaces.Space[Any]:
        return self.env_spaces.action

    @property
    def reward_space(self) -> spaces.Space[Any]:
        return self.env_spaces.reward

    def random_action(self) -> dict[int, Any]:
        """A random action for every ready env, sampled from the action space."""
        return {env_id: self.action_space.sample() for env_id in self.ready_obs_id}

    # ----- lifecycle -----------------------------------------------------------------------------
    def launch(self, reset_param: Mapping[int, Mapping[str, Any] | None] | None = None) -> None:
        """Build every env, apply seeds and replay settings, and reset them all (``reset_param``: kwargs by env id).

        A closed manager starts afresh (new envs, workers and shared memory); a launch that fails
        leaves it closed.
        """
        if not self._closed:
            raise ManagerStateError(f"{type(self).__name__} is already launched; close() it to launch it again")
        params = self._check_reset_param(reset_param)
        self._env_states = dict.fromkeys(range(self._env_num), EnvState.INIT)
        self._env_episode_count = dict.fromkeys(range(self._env_num), 0)
        self._failures, self._fatal, self._ready_obs = {}, [], {}
        self._threads, self._stuck = {}, set()
        self._send_recv.clear()
        self._closed = False
        self._launches += 1
        self._launching = True
        try:
            self._create_envs()
            self._action_check = None
            if self._spaces_declared and self._spaces is not None:
                self._action_check = action_converter(self._spaces.action, owner="")
            self._reset_envs({env_id: params.get(env_id, {}) for env_id in range(self._env_num)})
            self._raise_fatal()
        except BaseException:
            self.close()
            raise
        finally:
            self._launching = False

    def reset(self, reset_param: Mapping[int, Mapping[str, Any] | None] | None = None) -> None:
        """Reset the envs named in ``reset_param`` (every env when None), reviving envs in ``ERROR``.

        Episode counts go on (they restart at ``launch``); each named env gets a fresh retry budget.
        """
        self._check_launched()
        async_api.check_idle(self, "reset")
        params = self._check_reset_param(reset_param)
        for env_id in params:
            self._ready_obs.pop(env_id, None)
            self._failures.pop(env_id, None)
        self._reset_envs(params)
        self._raise_fatal()

    def step(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        """Step the envs named in ``actions``; every action is checked before any env moves."""
        self._check_launched()
        async_api.check_idle(self, "step")
        return self._step_checked(self._check_actions(actions))

    def _step_checked(self, checked: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        """Step envs whose actions are checked, account each env's step once, raise what went past ``max_retry``."""
        timesteps = self._step_envs(checked)
        ready, failures = self._ready_obs, self._failures
        for env_id, timestep in timesteps.items():
            if failures and env_id in failures and not timestep.info.get("abnormal", False):
                del failures[env_id]  # a successful step ends a run of failures
            if timestep.done:
                self._after_step(env_id, timestep)
            else:  # the common case, inlined
                ready[env_id] = timestep.obs
        self._raise_fatal()
        return timesteps

    def step_batch(self, actions: Any) -> BatchTimestep:
        """Step every env with ``actions[env_id]`` (an array or sequence with one row per env).

        Every env must be waiting for an action. Equivalent to ``step({i: actions[i] ...})`` with the
        results stacked; subprocess managers do it without per-env messages.
        """
        self._check_launched()
        async_api.check_idle(self, "step_batch")
        self._require_all_ready()
        if len(actions) != self._env_num:
            raise ValueError(f"step_batch() got {len(actions)} actions for {self._env_num} envs")
        return self._batch_from(self._step_checked(self._check_action_rows(list(range(self._env_num)), actions)))

    def _require_all_ready(self) -> None:
        if len(self._ready_obs) != self._env_num:
            raise EnvManagerError(
                f"step_batch needs every env waiting for an action; ready: {self.ready_obs_id}, "
                f"states: {self._state_summary()}"
            )

    def _batch_from(
        self, timesteps: Mapping[int, BaseEnvTimestep], env_ids: Sequence[int] | None = None
    ) -> BatchTimestep:
        """The timesteps of ``env_ids`` (default: every env) stacked; obs are the ready ones where an env has one."""
        ids = range(self._env_num) if env_ids is None else env_ids
        ready = self._ready_obs
        return BatchTimestep(
            obs=stack_obs([ready[i] if i in ready else timesteps[i].obs for i in ids]),
            reward=np.stack([np.asarray(timesteps[i].reward) for i in ids]),
            done=np.array([timesteps[i].done for i in ids], dtype=bool),
            terminated=np.array([timesteps[i].terminated for i in ids], dtype=bool),
            truncated=np.array([timesteps[i].truncated for i in ids], dtype=bool),
            info=[timesteps[i].info for i in ids],
            final_obs={i: ts.obs for i, ts in timesteps.items() if ts.done},
            env_ids=np.asarray(ids, dtype=np.int64),
        )

    # ----- asynchronous API (see ding.envs.env_manager.async_api) ---------------------------------
    def async_reset(self, reset_param: Mapping[int, Mapping[str, Any] | None] | None = None) -> None:
        """Launch the manager if needed and reset every env; ``recv`` then returns their first observations.

        The first observations come with reward 0 and every flag False. Nothing is returned here.
        """
        async_api.async_reset(self, reset_param)

    def send(self, actions: Any, env_ids: Any = None) -> None:
        """Start stepping envs and return at once: ``actions`` by env id, or an array with one row per ``env_ids``.

        ``env_ids`` None means the envs the last ``recv`` returned (every ready env before any ``recv``).
        Sending to an env in flight, or to one whose worker steps envs in flight, raises.
        """
        async_api.send(self, actions, env_ids)

    def recv(self, batch_size: int | None = None, timeout: float | None = None) -> BatchTimestep:
        """Results of the first envs in flight to finish, at least ``batch_size`` (config ``batch_size``; None: all).

        A worker holding several envs delivers them together, so a batch may hold more. With ``timeout``
        it returns what has arrived by then (raising :class:`~ding.errors.WorkerTimeoutError` if nothing).
        ``env_ids`` names each row's env; episodes end and envs reset as in ``step``.

        Example:
            >>> from functools import partial
            >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
            >>> with BaseEnvManager([partial(CartPoleEnv, cfg={}) for _ in range(4)], {'batch_size': 2}) as manager:
            ...     manager.async_reset()
            ...     for _ in range(5):
            ...         batch = manager.recv()
            ...         manager.send(np.zeros(len(batch.env_ids), dtype=np.int64), batch.env_ids)
            ...     batch.obs.shape, batch.env_ids.tolist()
            ((2, 4), [0, 1])
        """
        return async_api.recv(self, batch_size, timeout)

    def step_async(self, actions: Any) -> None:
        """``send`` to every env waiting for an action (array rows in env id order, or a mapping)."""
        async_api.step_async(self, actions)

    def step_wait(self, timeout: float | None = None) -> BatchTimestep:
        """``recv`` of every env in flight."""
        return async_api.step_wait(self, timeout)

    def _worker_key(self, env_id: int) -> int:
        """What runs env ``env_id`` (envs sharing it step together): each env here."""
        return env_id

    def _async_dispatch(self, actions: Mapping[int, Any]) -> None:
        """Start stepping envs: nothing to do here, ``recv`` steps them."""

    def _async_receive(
        self, pending: Mapping[int, Any], wanted: int, timeout: float | None
    ) -> dict[int, BaseEnvTimestep]:
        """Step the first ``wanted`` envs sent (in send order)."""
        chosen = dict(list(pending.items())[:wanted])
        return self._step_envs(chosen)

    def _async_receive_batch(
        self, pending: Mapping[int, Any], wanted: int, timeout: float | None
    ) -> BatchTimestep | dict[int, BaseEnvTimestep]:
        """:meth:`_async_receive`, or the received envs' batch already accounted (managers that read it at once)."""
        return self._async_receive(pending, wanted, timeout)

    def _zero_reward(self) -> np.ndarray:
        """A reward of 0 in the reward space (first observations, abnormal steps)."""
        reward_space = self._spaces.reward if self._spaces is not None else DEFAULT_REWARD_SPACE
        return np.zeros(reward_space.shape or (1,), dtype=reward_space.dtype or np.float32)

    def seed(self, seed: int | Sequence[int] | Mapping[int, int], dynamic_seed: bool | None = None) -> None:
        """Seed envs: an int seeds env i with ``seed + i``; a list or dict gives seeds explicitly.

        Seeds take effect at each env's next reset (``launch`` included) and again whenever an env is
        rebuilt. ``dynamic_seed`` is passed to the envs' ``seed`` when given (None: the env's default).
        """
        self._seeds.update(expand_seeds(seed, self._env_num))
        self._dynamic_seed = None if dynamic_seed is None else bool(dynamic_seed)
        if not self._closed:
            self._apply_seeds()

    def enable_save_replay(self, replay_path: str | Sequence[str]) -> None:
        """Record episodes of every env as videos (one directory per env)."""
        self._replay_dirs = replay_dirs(replay_path, self._env_num)
        if not self._closed:
            self._apply_replay()

    def describe_envs(self, name: str) -> dict[int, tuple[Any, ...]]:
        """What ``name`` is on each env, wherever it runs: missing, a method, or a value (see ``fanout``).

        Example:
            >>> from functools import partial
            >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
            >>> with BaseEnvManager([partial(CartPoleEnv, cfg={})]) as manager:
            ...     manager.launch()
            ...     manager.describe_envs('seed')[0][0], manager.describe_envs('no_such')[0][0]
            ('method', 'missing')
        """
        self._check_launched()
        return self._describe_all(name)

    def call_envs(
        self,
        name: str,
        args: Sequence[Any] = (),
        kwargs: Mapping[str, Any] | None = None,
        env_ids: Sequence[int] | None = None,
    ) -> dict[int, Any]:
        """Call method ``name`` of the envs ``env_ids`` (None: every env), wherever they run; results by env id."""
        self._check_launched()
        return self._call_envs(name, tuple(args), dict(kwargs or {}), env_ids)

    def reward_shaping(self, env_id: int, transitions: list[dict[str, Any]]) -> Any:
        """The env's ``reward_shaping(transitions)`` (DI-engine's per-env call)."""
        self._check_launched()
        return self._call_envs("reward_shaping", (transitions,), {}, [env_id])[env_id]

    def enable_save_figure(self, env_id: int, figure_path: str) -> None:
        """The env's ``enable_save_figure(figure_path)`` (DI-engine's per-env call)."""
        self._check_launched()
        self._call_envs("enable_save_figure", (figure_path,), {}, [env_id])

    def close(self) -> None:
        """Close every env (and ``env_ref``); every env is ``VOID`` again. Calling it twice does nothing."""
        reference, self._reference = self._reference, None
        if reference is not None:
            with contextlib.suppress(Exception):  # a reference env that cannot close holds nothing of the batch
                reference.close()
        if self._closed:
            return
        self._closed = True
        self._ready_obs.clear()
        self._send_recv.clear()
        try:
            self._close_envs()
        finally:
            self._env_states = dict.fromkeys(range(self._env_num), EnvState.VOID)

    def __enter__(self) -> BaseEnvManager:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at interpreter shutdown there is nobody to report to
            self.close()

    def __getattr__(self, name: str) -> Any:
        """DI-engine's fan-out: an env attribute over every env, or a listed env method called on every env."""
        if name.startswith("__") or "_closed" not in self.__dict__:
            raise AttributeError(name)
        owner = type(self).__name__
        if hasattr(type(self), name):  # a property of the manager raised AttributeError
            raise AttributeError(f"{owner}.{name} is not available")
        if self.__dict__["_closed"]:
            raise AttributeError(f"{owner} is not launched: env attributes such as {name!r} are read after launch()")
        values = fan_out_values(owner, name, self._describe_all(name), self.method_name_list)
        if values is None:
            return functools.partial(self._fan_out_call, name)
        return values

    def _fan_out_call(self, name: str, *args: Any, **kwargs: Any) -> list[Any]:
        self._check_launched()
        results = self._call_envs(name, args, kwargs, None)
        return [results[env_id] for env_id in range(self._env_num)]

    # ----- checks --------------------------------------------------------------------------------
    def _check_launched(self) -> None:
        if self._closed:
            if self._launches:
                raise ManagerStateError(f"{type(self).__name__} is closed; launch() starts it again")
            raise ManagerStateError(f"{type(self).__name__} is not launched; call launch() first")

    def _state_summary(self) -> str:
        return ", ".join(f"{i}:{state.value}" for i, state in sorted(self._env_states.items()))

    def _raise_fatal(self) -> None:
        """Raise the first failure past ``max_retry`` of the call that just ended (its envs are in ``ERROR``)."""
        if self._fatal:
            error, self._fatal = self._fatal[0], []
            raise error

    def _check_reset_param(
        self, reset_param: Mapping[int, Mapping[str, Any] | None] | None
    ) -> dict[int, dict[str, Any]]:
        return check_reset_param(reset_param, self._env_num)

    def _check_actions(self, actions: Mapping[int, Any]) -> dict[int, Any]:
        return check_actions(actions, self._ready_obs, self.ready_obs_id, self._env_states, self._action_check)

    def _check_action_rows(self, env_ids: list[int], rows: Any) -> dict[int, Any]:
        """Actions given as rows (one per env id), checked as :meth:`_check_actions` checks them.

        An array of valid actions passes with one vectorized check; the errors stay per action.
        """
        if self._action_check is None:  # the envs check their own actions
            return self._check_actions({env_id: rows[j] for j, env_id in enumerate(env_ids)})
        return check_action_rows(
            rows, env_ids, self.action_space, self._ready_obs, self.ready_obs_id, self._env_states, self._action_check
        )

    # ----- in-process implementation (subprocess managers override these) --------------------------
    def _create_envs(self) -> None:
        self._envs = [fn() for fn in self._env_fns]
        if not self._spaces_declared:  # factories of classes that declare their spaces count as declared
            found = [class_declared_spaces(env) for env in self._envs]
            same = found[0] is not None and all(spaces == found[0] for spaces in found)
            if same and self._spaces in (None, found[0]):
                self._spaces_declared, self._spaces = True, found[0]
        if self._spaces_declared:
            for env_id, env in enumerate(self._envs):
                built = EnvSpaces(env.observation_space, env.action_space, env.reward_space)
                if built != self._spaces:
                    raise EnvSpecError(f"env {env_id} has spaces {built}, but the batch declares {self._spaces}")
        self._apply_seeds()
        if self._replay_dirs is not None:
            self._apply_replay()

    def _apply_seeds(self, env_ids: Sequence[int] | None = None) -> None:
        for env_id in env_ids if env_ids is not None else range(self._env_num):
            if env_id in self._seeds:
                seed_env(self._envs[env_id], self._seeds[env_id], self._dynamic_seed)

    def _apply_replay(self, env_ids: Sequence[int] | None = None) -> None:
        assert self._replay_dirs is not None
        for env_id in env_ids if env_ids is not None else range(self._env_num):
            self._envs[env_id].enable_save_replay(self._replay_dirs[env_id])

    def _env_call(self, env_id: int, fn: Callable[[], R], timeout: float | None, operation: str) -> R:
        """Call ``fn`` (an env's reset or step): directly, or on the env's thread when a timeout applies."""
        thread = self._threads.get(env_id)
        if thread is None:
            if timeout is None:
                return fn()
            thread = self._threads[env_id] = EnvThread(f"ding-env-{env_id}")
        try:
            return thread.call(fn, timeout)
        except CallTimeout:
            del self._threads[env_id]
            self._stuck.add(env_id)
            raise WorkerTimeoutError(f"env {env_id} did not finish {operation} within {timeout} s") from None

    def _reset_envs(self, params: Mapping[int, dict[str, Any]]) -> None:
        for env_id, kwargs in params.items():
            self._reset_one(env_id, kwargs)
            if self._launching and self._fatal:
                return  # the launch fails: the other envs need no reset

    def _reset_one(self, env_id: int, kwargs: Mapping[str, Any]) -> None:
        timeout = reset_wait(self._reset_timeout, self._connect_timeout)
        while True:
            if env_id in self._stuck:
                self._renew_env(env_id)
            self._env_states[env_id] = EnvState.RESET
            env = self._envs[env_id]
            error: EnvManagerError
            try:
                obs = self._env_call(env_id, functools.partial(env.reset, **kwargs), timeout, "reset")
            except WorkerTimeoutError as err:
                error = err
            except Exception as exc:  # env code may raise anything; it is reported with its traceback
                error = self._error_from(env_id, "reset", exc)
            else:
                self._ready_obs[env_id] = obs
                self._env_states[env_id] = EnvState.RUN
                return
            if not self._recover(env_id, error):
                return
            self._wait_before_retry()

    def _wait_before_retry(self) -> None:
        if self._retry_waiting_time > 0:
            time.sleep(self._retry_waiting_time)

    def _step_envs(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        timesteps = {}
        timeout = self._step_timeout
        timed = timeout is not None or bool(self._threads)
        for env_id, action in actions.items():
            env = self._envs[env_id]
            try:
                if timed:
                    timesteps[env_id] = self._env_call(env_id, functools.partial(env.step, action), timeout, "step")
                else:
                    timesteps[env_id] = env.step(action)
            except WorkerTimeoutError as err:
                timesteps[env_id] = self._abnormal(env_id, err)
            except Exception as exc:  # see _reset_one
                timesteps[env_id] = self._abnormal(env_id, self._error_from(env_id, "step", exc))
        return timesteps

    def _renew_env(self, env_id: int) -> None:
        """Build env ``env_id`` anew; an env stuck in an overrun call is abandoned with its thread, not closed."""
        thread = self._threads.pop(env_id, None)
        if thread is not None:
            thread.stop()
        if env_id in self._stuck:
            self._stuck.discard(env_id)
        else:
            with contextlib.suppress(Exception):  # a broken env may fail to close; it is replaced either way
                self._envs[env_id].close()
        self._envs[env_id] = self._env_fns[env_id]()
        self._apply_seeds([env_id])
        if self._replay_dirs is not None:
            self._apply_replay([env_id])

    def _close_envs(self) -> None:
        """Close every env; the closed envs stay in ``_envs`` (DI-engine's tests inspect them)."""
        for thread in self._threads.values():
            thread.stop()
        self._threads = {}
        errors = []
        for env_id, env in enumerate(self._envs):
            if env_id in self._stuck:
                continue  # its thread may still be inside it
            try:
                env.close()
            except Exception as exc:  # close every env before reporting
                errors.append(exc)
        if errors:
            raise EnvManagerError(f"{len(errors)} env(s) failed to close; first: {errors[0]!r}") from errors[0]

    def _describe_all(self, name: str) -> dict[int, tuple[Any, ...]]:
        """What ``name`` is on each env (see :func:`~ding.envs.env_manager.fanout.describe_attribute`)."""
        return {env_id: describe_attribute(env, name) for env_id, env in enumerate(self._envs)}

    def _call_envs(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], env_ids: Sequence[int] | None
    ) -> dict[int, Any]:
        """Call method ``name`` of the envs ``env_ids`` (None: every env); results by env id."""
        ids = range(self._env_num) if env_ids is None else env_ids
        return {env_id: getattr(self._envs[env_id], name)(*args, **kwargs) for env_id in ids}

    # ----- shared fault and episode logic ---------------------------------------------------------
    @staticmethod
    def _error_from(env_id: int, operation: str, exc: BaseException) -> EnvManagerError:
        return Failure.capture(env_id, operation, exc).error()

    def _spend_retry(self, env_id: int, error: EnvManagerError) -> bool:
        """Count a failed attempt of ``env_id``; at ``max_retry`` the env is ``ERROR`` and ``error`` is kept to raise.

        Returns whether the env may be tried again.
        """
        failures = self._failures.get(env_id, 0) + 1
        self._failures[env_id] = failures
        if failures < self._max_retry:
            return True
        self._env_states[env_id] = EnvState.ERROR
        self._ready_obs.pop(env_id, None)
        self._fatal.append(error)
        return False

    def _recover(self, env_id: int, error: EnvManagerError) -> bool:
        """Spend a retry on ``env_id`` and renew it if so configured (a ``reset`` follows); False when past budget."""
        if not self._spend_retry(env_id, error):
            return False
        if self._retry_type == "renew" or env_id in self._stuck:
            self._renew_env(env_id)
        return True

    def _abnormal(self, env_id: int, error: EnvManagerError, *, renew: bool = True) -> BaseEnvTimestep:
        """Account a failed step: spend a retry and return the abnormal end of the env's episode."""
        obs = self._ready_obs.get(env_id)
        if renew:
            self._recover(env_id, error)
        else:
            self._spend_retry(env_id, error)
        reward = self._zero_reward()
        info = {"abnormal": True, "error": error.summary, "traceback": error.traceback_text}
        return BaseEnvTimestep(obs, reward, True, info, terminated=False, truncated=True)

    def _after_step(self, env_id: int, timestep: BaseEnvTimestep) -> None:
        if not timestep.done:
            self._ready_obs[env_id] = timestep.obs
            return
        self._ready_obs.pop(env_id, None)
        if self._env_states[env_id] is EnvState.ERROR:
            return  # failed past max_retry: waits for reset()
        abnormal = timestep.info.get("abnormal", False)
        if not abnormal:
            self._env_episode_count[env_id] += 1
        if self._env_episode_count[env_id] >= self._episode_num:
            self._env_states[env_id] = EnvState.DONE
        elif self._auto_reset or abnormal:
            self._reset_envs({env_id: {}})
        else:
            self._env_states[env_id] = EnvState.NEED_RESET
