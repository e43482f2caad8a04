"""What every env manager keeps: its settings, env states, episode counts and failure budget.

:class:`ManagerBookkeeping` holds the declared config (merged once, strictly), the spaces, the ready
observations and the rules that turn a failure into a retry, a renewal or an ``ERROR`` (the semantics
are described in :mod:`~ding.envs.env_manager.base_manager`). It declares the hooks an implementation
supplies (building, resetting, stepping, renewing and closing envs, calling env methods):
:class:`~ding.envs.env_manager.base_manager.BaseEnvManager` runs envs in the calling process and the
core (:mod:`~ding.envs.env_manager.core`) runs them through channels. The public verbs are in
:class:`~ding.envs.env_manager.manager_api.ManagerAPI`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from easydict import EasyDict
from gymnasium import spaces

from ding.envs.env_manager.async_api import SendRecvState
from ding.envs.env_manager.batch import ObsBatch, stack_obs
from ding.envs.env_manager.core.failure import Failure
from ding.envs.env_manager.env_fn import EnvFn, build_env, common_spaces
from ding.envs.env_manager.fanout import METHOD_NAME_LIST
from ding.envs.env_manager.inputs import check_action_rows, check_actions, check_reset_param
from ding.envs.env_manager.settings import IDENTITY_KEYS, MANAGER_CONFIG, check_identity_keys, check_manager_config
from ding.envs.env_manager.state import EnvState
from ding.envs.probe import read_spaces
from ding.envs.values.conversion import Converter
from ding.envs.values.spaces import DEFAULT_REWARD_SPACE, EnvSpaces
from ding.envs.values.timestep import BaseEnvTimestep
from ding.errors import EnvManagerError, ManagerStateError
from ding.utils.accepts import check_values, plain_defaults
from ding.utils.merge import deep_merge_dicts

__all__ = ["ManagerBookkeeping"]


class ManagerBookkeeping:
    """Settings, states and failure accounting of a manager; the hooks below are what an implementation supplies."""

    manager_type: ClassVar[str] = "base"
    """The name ``env.manager.type`` gives this manager in configs."""
    type_aliases: ClassVar[tuple[str, ...]] = ()
    """Other names configs may give this manager type (DI-engine's)."""
    partial_batches = False
    """Whether ``step`` may return before every stepped env has its result (async managers)."""
    config: ClassVar[dict[str, Any]] = MANAGER_CONFIG
    """Declared defaults: the keys this manager accepts, with what each accepts (``default_config`` gives plain
    values)."""

    @classmethod
    def default_config(cls) -> EasyDict:
        """A copy of the declared defaults, with DI-engine's ``cfg_type`` tag.

        >>> from ding.envs.env_manager import BaseEnvManager
        >>> BaseEnvManager.default_config().cfg_type
        'BaseEnvManagerDict'
        """
        cfg = EasyDict(plain_defaults(cls.config))
        cfg.cfg_type = f"{cls.__name__}Dict"
        return cfg

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any], *, partial_batches: bool | None = None) -> None:
        """Refuse ``settings`` (merged into :meth:`default_config`) holding a value its key does not accept, or values
        that disagree; ``compile_config`` calls it for ``env.manager`` before anything is built.

        ``partial_batches``: whether the manager returns partial batches (default: the class's
        :attr:`partial_batches`; an instance may decide otherwise).
        """
        check_values(cls.config, settings, "env.manager")
        partial = cls.partial_batches if partial_batches is None else partial_batches
        check_manager_config(settings, partial_batches=partial)

    def __init__(self, env_fn: Sequence[EnvFn], cfg: Mapping[str, Any] | None = None) -> None:
        user = dict(cfg or {})
        check_identity_keys(user, [self.manager_type, *self.type_aliases])
        merged = deep_merge_dicts(
            plain_defaults(type(self).config),
            {k: v for k, v in user.items() if k not in IDENTITY_KEYS},
            strict=True,
            path="env.manager",
        )
        type(self).check_settings(merged, partial_batches=self.partial_batches)
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
        self._reference: Any = None  # env_ref, built on first use
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
            self._reference = build_env(self._env_fns[0], 0)
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

    def _zero_reward(self) -> np.ndarray:
        """A reward of 0 in the reward space (first observations, abnormal steps)."""
        reward_space = self._spaces.reward if self._spaces is not None else DEFAULT_REWARD_SPACE
        return np.zeros(reward_space.shape or (1,), dtype=reward_space.dtype or np.float32)

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

    def _wait_before_retry(self) -> None:
        if self._retry_waiting_time > 0:
            time.sleep(self._retry_waiting_time)

    # ----- what an implementation supplies (BaseEnvManager: in this process; the core: through channels) ----------
    def _create_envs(self) -> None:
        """Build every env (and what runs it), check the built spaces, and apply seeds and replay settings."""
        raise NotImplementedError

    def _reset_envs(self, params: Mapping[int, dict[str, Any]]) -> None:
        """Reset the envs of ``params`` (kwargs by env id), spending retries on failures (see :meth:`_recover`)."""
        raise NotImplementedError

    def _step_envs(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        """Step envs with checked actions; a failed env's entry is its abnormal timestep (see :meth:`_abnormal`)."""
        raise NotImplementedError

    def _renew_env(self, env_id: int) -> None:
        """Build env ``env_id`` anew, with its seed and replay settings."""
        raise NotImplementedError

    def _close_envs(self) -> None:
        """Close every env and release what runs them."""
        raise NotImplementedError

    def _apply_seeds(self, env_ids: Sequence[int] | None = None) -> None:
        """Seed the envs ``env_ids`` (None: every env) that have a seed."""
        raise NotImplementedError

    def _apply_replay(self, env_ids: Sequence[int] | None = None) -> None:
        """Turn on video recording of the envs ``env_ids`` (None: every env)."""
        raise NotImplementedError

    def _describe_all(self, name: str) -> dict[int, tuple[Any, ...]]:
        """What ``name`` is on each env (see :func:`~ding.envs.env_manager.fanout.describe_attribute`)."""
        raise NotImplementedError

    def _call_envs(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], env_ids: Sequence[int] | None
    ) -> dict[int, Any]:
        """Call method ``name`` of the envs ``env_ids`` (None: every env); results by env id."""
        raise NotImplementedError
