"""The public verbs of every env manager: launch, reset, step, the asynchronous API, seeding, env calls, close.

:class:`ManagerAPI` checks the caller's input, runs each verb through the hooks of
:class:`~ding.envs.env_manager.bookkeeping.ManagerBookkeeping` and accounts the results once (episode
ends, automatic resets, failures past ``max_retry`` raised when the call ends). DI-engine's fan-out
(``manager.<env attribute>``) is here too.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ding.envs.env_manager import async_api
from ding.envs.env_manager.batch import BatchTimestep, stack_obs
from ding.envs.env_manager.bookkeeping import ManagerBookkeeping
from ding.envs.env_manager.fanout import fan_out_values
from ding.envs.env_manager.settings import expand_seeds, replay_dirs
from ding.envs.env_manager.state import EnvState
from ding.envs.env_state import restore_envs, snapshot_envs
from ding.envs.values.conversion import action_converter
from ding.envs.values.timestep import BaseEnvTimestep
from ding.errors import EnvManagerError, ManagerStateError

if TYPE_CHECKING:
    from typing import Self

__all__ = ["ManagerAPI"]


class ManagerAPI(ManagerBookkeeping):
    """The manager API over the hooks of :class:`ManagerBookkeeping` (see :class:`BaseEnvManager` for an example)."""

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
        self._stuck = set()
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
            >>> from ding.envs.env_manager import BaseEnvManager
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
            >>> from ding.envs.env_manager import BaseEnvManager
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

    def get_state(self, env_ids: Sequence[int] | None = None) -> dict[int, Any]:
        """Each env's state (a token ``set_state`` restores), by env id; see :mod:`ding.envs.env_state`.

        Envs whose simulator gives no access to its state raise
        :class:`~ding.errors.StateNotSupportedError`, naming the env.
        """
        self._check_launched()
        async_api.check_idle(self, "get_state")
        return snapshot_envs(self, env_ids)

    def set_state(self, states: Mapping[int, Any]) -> None:
        """Restore envs to states :meth:`get_state` took (by env id); each one's ready observation is its restored one.

        An env restored to the end of an episode is reset (``auto_reset``) or waits in ``NEED_RESET``.

        Example:
            >>> from functools import partial
            >>> from ding.envs.env_manager import BaseEnvManager
            >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
            >>> with BaseEnvManager([partial(CartPoleEnv, cfg={}) for _ in range(2)]) as manager:
            ...     manager.launch()
            ...     saved = manager.get_state()
            ...     first = manager.step({0: 1, 1: 0})
            ...     manager.set_state(saved)
            ...     again = manager.step({0: 1, 1: 0})
            ...     bool((first[0].obs == again[0].obs).all())
            True
        """
        self._check_launched()
        async_api.check_idle(self, "set_state")
        ended = []
        for env_id, timestep in restore_envs(self, states).items():
            self._failures.pop(env_id, None)
            if timestep is None or timestep.done:
                self._ready_obs.pop(env_id, None)
                self._env_states[env_id] = EnvState.NEED_RESET
                ended.append(env_id)
            else:
                self._set_ready_obs(env_id, timestep.obs)
                self._env_states[env_id] = EnvState.RUN
        if self._auto_reset and ended:
            self._reset_envs({env_id: {} for env_id in ended})
            self._raise_fatal()

    def _set_ready_obs(self, env_id: int, obs: Any) -> None:
        """Make ``obs`` the observation env ``env_id`` waits with (managers with shared memory write it there)."""
        self._ready_obs[env_id] = obs

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

    def __enter__(self) -> Self:
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
