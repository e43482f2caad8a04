"""``BaseEnvManager``: the one env manager class, its API over an engine that runs the envs.

The manager checks what its caller passes, keeps its settings, the envs' spaces, seeds and replay directories,
and answers for the envs' states through its :class:`~ding.envs.env_manager.ledger.EnvLedger`; its engine
(:mod:`~ding.envs.env_manager.engine`) builds, resets, steps and closes the envs and reports every result to that
ledger. A manager type is this class with a declared config and an engine (``make_engine``): ``base`` runs its envs
in the calling process; ``thread``, ``subprocess``, ``zmq``, ``ray`` and ``envpool`` are configurations of it that
run them elsewhere. Every manager is a ``BaseEnvManager``, as in DI-engine.

The semantics every manager shares (the conformance suite checks them):

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
import functools
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from easydict import EasyDict
from gymnasium import spaces

from ding.envs.env_manager.batch import BatchTimestep, ObsBatch
from ding.envs.env_manager.core.channel import Channel
from ding.envs.env_manager.engine import Engine, EngineFactory, EngineParts
from ding.envs.env_manager.env_fn import EnvFn, build_env, common_spaces
from ding.envs.env_manager.fanout import METHOD_NAME_LIST, fan_out_values
from ding.envs.env_manager.in_process import InProcessEngine
from ding.envs.env_manager.inputs import check_reset_param
from ding.envs.env_manager.ledger import EnvLedger
from ding.envs.env_manager.send_recv import SendRecv
from ding.envs.env_manager.settings import (
    IDENTITY_KEYS,
    MANAGER_CONFIG,
    EnvSetup,
    ManagerSettings,
    check_identity_keys,
    check_manager_config,
    expand_seeds,
    replay_dirs,
)
from ding.envs.env_manager.state import EnvState
from ding.envs.env_state import restore_envs, snapshot_envs
from ding.envs.probe import read_spaces
from ding.envs.values.conversion import action_converter
from ding.envs.values.spaces import EnvSpaces
from ding.envs.values.timestep import BaseEnvTimestep
from ding.errors import EnvManagerError, ManagerStateError
from ding.utils.accepts import check_values, plain_defaults
from ding.utils.merge import deep_merge_dicts

if TYPE_CHECKING:
    from typing import Self

__all__ = ["BaseEnvManager"]


def _setting(name: str) -> Any:
    """DI-engine's attribute ``manager._<name>``: the setting, read and assigned (it takes effect at its next use)."""
    return property(
        lambda self: getattr(self._settings, name),
        lambda self, value: setattr(self._settings, name, value),
        doc=f"The ``{name}`` setting (DI-engine's attribute name).",
    )


class BaseEnvManager:
    """An env manager; as configured here (type ``base``) it runs every env in the calling process.

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

    manager_type: ClassVar[str] = "base"
    """The name ``env.manager.type`` gives this manager in configs."""
    type_aliases: ClassVar[tuple[str, ...]] = ()
    """Other names configs may give this manager type (DI-engine's)."""
    partial_batches = False
    """Whether ``step`` may return before every stepped env has its result (async managers)."""
    config: ClassVar[dict[str, Any]] = MANAGER_CONFIG
    """Declared defaults: the keys this manager accepts, with what each accepts (``default_config`` gives plain
    values)."""
    settings_checks: ClassVar[tuple[Callable[[Mapping[str, Any]], None], ...]] = ()
    """Checks of this type's own keys, run on the merged settings after the common ones."""
    make_engine: ClassVar[EngineFactory] = InProcessEngine
    """How this manager type runs its envs (:mod:`~ding.envs.env_manager.engine`)."""

    @classmethod
    def default_config(cls) -> EasyDict:
        """A copy of the declared defaults, with DI-engine's ``cfg_type`` tag.

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
        for check in cls.settings_checks:
            check(settings)

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
        self._settings = ManagerSettings.take(merged)
        self._env_fns: list[EnvFn] = list(env_fn)
        if not self._env_fns:
            raise ValueError("an env manager needs at least one env constructor")
        if not all(callable(fn) for fn in self._env_fns):
            raise TypeError("env_fn must be a list of callables that build envs")
        self._env_num = len(self._env_fns)
        self._ledger = EnvLedger(self._env_num, self._settings)
        self._spaces: EnvSpaces | None = None
        self._spaces_declared = False
        """True when the constructors state the spaces: actions are checked and laid out in shared memory."""
        self._adopt_spaces(common_spaces(self._env_fns), declared=True)
        self._setup = EnvSetup()
        self._reference: Any = None  # env_ref, built on first use
        self._launches = 0
        close = weakref.WeakMethod(self.close)
        parts = EngineParts(
            self._env_fns,
            self._settings,
            self._ledger,
            self._setup,
            self.partial_batches,
            lambda: _call_if_alive(close),
        )
        self._engine: Engine = type(self).make_engine(parts)
        self._send_recv = SendRecv(self._ledger, self._engine, self._settings)
        self._closed = True

    def _adopt_spaces(self, env_spaces: EnvSpaces | None, declared: bool) -> None:
        self._spaces, self._spaces_declared = env_spaces, env_spaces is not None and declared
        if env_spaces is not None:
            self._ledger.reward_space = env_spaces.reward

    def in_process_envs(self) -> list[Any] | None:
        """The env objects, built in this process at launch; None for a manager whose envs run in workers (reached
        through :meth:`call_envs`)."""
        engine = self._engine
        return list(engine.envs) if isinstance(engine, InProcessEngine) else None

    # ----- DI-engine's attribute names of the settings (its tests read and assign them) ----------------
    _episode_num = _setting("episode_num")
    _max_retry = _setting("max_retry")
    _retry_type = _setting("retry_type")
    _auto_reset = _setting("auto_reset")
    _step_timeout = _setting("step_timeout")
    _reset_timeout = _setting("reset_timeout")
    _connect_timeout = _setting("connect_timeout")
    _retry_waiting_time = _setting("retry_waiting_time")
    _wait_num = _setting("wait_num")
    _step_wait_timeout = _setting("step_wait_timeout")

    @property
    def _env_states(self) -> dict[int, EnvState]:
        """DI-engine's attribute: every env's state (a copy; see :attr:`env_states`)."""
        return self._ledger.states()

    @property
    def _env_episode_count(self) -> dict[int, int]:
        """DI-engine's attribute: episodes each env has completed (a copy; see :attr:`episode_counts`)."""
        return self._ledger.episodes()

    @property
    def _ready_obs(self) -> Mapping[int, Any]:
        """DI-engine's attribute: the observation of every env that has one (read-only; see :attr:`ready_obs`)."""
        return self._ledger.ready_view

    # ----- what the manager knows ------------------------------------------------------------------
    @property
    def env_num(self) -> int:
        return self._env_num

    @property
    def env_states(self) -> dict[int, EnvState]:
        return self._ledger.states()

    @property
    def ready_obs(self) -> dict[int, Any]:
        """Observations of the envs waiting for an action, by env id (envs in flight are not)."""
        ledger = self._ledger
        return {env_id: ledger.obs(env_id) for env_id in ledger.ready_ids()}

    @property
    def ready_obs_id(self) -> list[int]:
        return self._ledger.ready_ids()

    def ready_obs_batch(self) -> ObsBatch:
        """The ready observations stacked on a leading axis, with their env ids.

        Managers with shared memory give a view of it when every env is ready: it stays valid until the next
        ``step`` or ``reset``; copy it to keep it longer.
        """
        ids = self._ledger.ready_ids()
        if not ids:
            raise EnvManagerError(f"no env is ready; env states: {self._ledger.summary()}")
        return ObsBatch(np.asarray(ids), self._engine.ready_obs_batch(ids))

    @property
    def done(self) -> bool:
        """True once every env has completed ``episode_num`` episodes."""
        return not self._engine.in_flight_env_ids and self._ledger.all_done()

    def env_state_done(self, env_id: int) -> bool:
        """Whether env ``env_id`` has played its ``episode_num`` episodes."""
        return self._ledger.state(env_id) is EnvState.DONE

    @property
    def engine(self) -> Engine:
        """What runs the envs (:mod:`~ding.envs.env_manager.engine`): this manager type's configuration of them."""
        return self._engine

    @property
    def episode_counts(self) -> dict[int, int]:
        """Episodes each env has completed since ``launch``, by env id (abnormal ends do not count)."""
        return self._ledger.episodes()

    @property
    def in_flight_env_ids(self) -> list[int]:
        """Envs stepped by an earlier ``step`` whose results have not been delivered yet (partial batches)."""
        return list(self._engine.in_flight_env_ids)

    @property
    def method_name_list(self) -> list[str]:
        """Env methods that ``manager.<name>(...)`` calls on every env; a subclass may extend the list."""
        return list(METHOD_NAME_LIST)

    @property
    def channel(self) -> Channel:
        """The channel to the workers (worker-based managers, after ``launch``)."""
        channel = self._engine.channel
        if channel is None:
            raise EnvManagerError(f"{type(self).__name__} has no channel (before launch(), or envs in this process)")
        return channel

    @property
    def worker_pids(self) -> list[int | None]:
        """Process ids of the workers, one per env group (for monitoring and fault-injection tests); none for
        managers that run envs in this process."""
        return self._engine.worker_pids

    @property
    def shared_memory_names(self) -> list[str]:
        """Names of the step buffers' shared-memory segments (none without shared memory)."""
        return self._engine.shared_memory_names

    @property
    def late_results(self) -> int:
        """Results that arrived after their step was given up on (dropped, never delivered): those the channel
        dropped (a hung thread or a replaced zmq worker answering at last) and those the manager did."""
        return self._engine.late_results

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
        """The envs' spaces: declared by their constructors, else read from one env (see ``probe_spaces``)."""
        if self._spaces is None:
            probed = self._engine.probe_spaces()
            self._adopt_spaces(probed if probed is not None else read_spaces(self.env_ref), declared=False)
        assert self._spaces is not None
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

    def random_action(self) -> dict[int, Any]:
        """A random action for every ready env, sampled from the action space."""
        return {env_id: self.action_space.sample() for env_id in self.ready_obs_id}

    def _check_launched(self) -> None:
        if self._closed:
            if self._launches:
                raise ManagerStateError(f"{type(self).__name__} is closed; launch() starts it again")
            raise ManagerStateError(f"{type(self).__name__} is not launched; call launch() first")

    # ----- lifecycle -------------------------------------------------------------------------------
    def launch(self, reset_param: Mapping[int, Mapping[str, Any] | None] | None = None) -> None:
        """Build every env, apply seeds and replay settings, and reset them all (``reset_param``: kwargs by env id).

        A closed manager starts afresh (new envs, workers and shared memory); a launch that fails
        leaves it closed.
        """
        if not self._closed:
            raise ManagerStateError(f"{type(self).__name__} is already launched; close() it to launch it again")
        params = check_reset_param(reset_param, self._env_num)
        self._ledger.begin()
        self._send_recv.clear()
        self._closed = False
        self._launches += 1
        try:
            built, declared = self._engine.launch(
                self._spaces, self._spaces_declared, {env_id: params.get(env_id, {}) for env_id in range(self._env_num)}
            )
            self._adopt_spaces(built, declared)
            check = action_converter(built.action, owner="") if built is not None and declared else None
            self._ledger.expect_actions(built.action if built is not None else None, check)
            self._ledger.raise_fatal()
        except BaseException:
            self.close()
            raise

    def reset(self, reset_param: Mapping[int, Mapping[str, Any] | None] | None = None) -> None:
        """Reset the envs named in ``reset_param`` (every env when None), reviving envs in ``ERROR``.

        Episode counts go on (they restart at ``launch``); each named env gets a fresh retry budget.
        """
        self._check_launched()
        self._send_recv.check_idle("reset")
        params = check_reset_param(reset_param, self._env_num)
        for env_id in params:
            self._ledger.drop_obs(env_id)
            self._ledger.forget_failures(env_id)
        self._engine.reset(params)
        self._ledger.raise_fatal()

    def close(self) -> None:
        """Close every env (and ``env_ref``); every env is ``VOID`` again. Calling it twice does nothing."""
        reference, self._reference = self._reference, None
        if reference is not None:
            with contextlib.suppress(Exception):  # a reference env that cannot close holds nothing of the batch
                reference.close()
        if self._closed:
            return
        self._closed = True
        self._send_recv.clear()
        self._ledger.void()
        try:
            self._engine.close()
        finally:
            self._ledger.void()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at interpreter shutdown there is nobody to report to
            self.close()

    # ----- steps -----------------------------------------------------------------------------------
    def step(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        """Step the envs named in ``actions``; every action is checked before any env moves.

        A manager that returns partial batches gives what is in after ``step_wait_timeout``; there ``step({})``
        only collects results of envs already in flight.
        """
        self._check_launched()
        self._send_recv.check_idle("step")
        engine = self._engine
        flying = engine.in_flight_env_ids
        if flying:
            if not actions:
                return self._deliver(engine.step({}))
            busy_keys = {engine.worker_key(i) for i in flying}
            busy = [i for i in actions if i in range(self._env_num) and engine.worker_key(i) in busy_keys]
            if busy:
                raise ValueError(
                    f"envs {busy} are still in flight (their worker has not answered); ready: {self.ready_obs_id}"
                )
        return self._deliver(engine.step(self._ledger.accept_actions(actions)))

    def _deliver(self, timesteps: dict[int, BaseEnvTimestep]) -> dict[int, BaseEnvTimestep]:
        self._ledger.raise_fatal()
        return timesteps

    def step_batch(self, actions: Any) -> BatchTimestep:
        """Step every env with ``actions[env_id]`` (an array or sequence with one row per env).

        Every env must be waiting for an action. Equivalent to ``step({i: actions[i] ...})`` with the
        results stacked; managers with shared memory do it without per-env messages.
        """
        self._check_launched()
        self._send_recv.check_idle("step_batch")
        batch = self._engine.step_batch(actions)
        self._ledger.raise_fatal()
        return batch

    # ----- asynchronous API (see ding.envs.env_manager.send_recv) -----------------------------------
    def async_reset(self, reset_param: Mapping[int, Mapping[str, Any] | None] | None = None) -> None:
        """Launch the manager if needed and reset every env; ``recv`` then returns their first observations.

        The first observations come with reward 0 and every flag False. Nothing is returned here.
        """
        if self._closed:
            self.launch(reset_param)
        else:
            self._send_recv.check_idle("async_reset")
            self.reset(reset_param)
        self._send_recv.expect_first()

    def send(self, actions: Any, env_ids: Any = None) -> None:
        """Start stepping envs and return at once: ``actions`` by env id, or an array with one row per ``env_ids``.

        ``env_ids`` None means the envs the last ``recv`` returned (every ready env before any ``recv``).
        Sending to an env in flight, or to one whose worker steps envs in flight, raises.
        """
        self._check_launched()
        self._send_recv.send(actions, env_ids)

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
        self._check_launched()
        return self._send_recv.recv(batch_size, timeout)

    def step_async(self, actions: Any) -> None:
        """``send`` to every env waiting for an action (array rows in env id order, or a mapping)."""
        self._check_launched()
        self._send_recv.step_async(actions)

    def step_wait(self, timeout: float | None = None) -> BatchTimestep:
        """``recv`` of every env in flight."""
        self._check_launched()
        return self._send_recv.step_wait(timeout)

    # ----- seeds, videos, env calls, states ------------------------------------------------------------
    def seed(self, seed: int | Sequence[int] | Mapping[int, int], dynamic_seed: bool | None = None) -> None:
        """Seed envs: an int seeds env i with ``seed + i``; a list or dict gives seeds explicitly.

        Seeds take effect at each env's next reset (``launch`` included) and again whenever an env is
        rebuilt. ``dynamic_seed`` is passed to the envs' ``seed`` when given (None: the env's default).
        """
        self._setup.seeds.update(expand_seeds(seed, self._env_num))
        self._setup.dynamic_seed = None if dynamic_seed is None else bool(dynamic_seed)
        if not self._closed:
            self._engine.apply_seeds()

    def enable_save_replay(self, replay_path: str | Sequence[str]) -> None:
        """Record episodes of every env as videos (one directory per env)."""
        self._engine.check_replay()
        self._setup.replay_dirs = replay_dirs(replay_path, self._env_num)
        if not self._closed:
            self._engine.apply_replay()

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
        return self._engine.describe(name)

    def call_envs(
        self,
        name: str,
        args: Sequence[Any] = (),
        kwargs: Mapping[str, Any] | None = None,
        env_ids: Sequence[int] | None = None,
    ) -> dict[int, Any]:
        """Call method ``name`` of the envs ``env_ids`` (None: every env), wherever they run; results by env id."""
        self._check_launched()
        return self._engine.call(name, tuple(args), dict(kwargs or {}), env_ids)

    def get_state(self, env_ids: Sequence[int] | None = None) -> dict[int, Any]:
        """Each env's state (a token ``set_state`` restores), by env id; see :mod:`ding.envs.env_state`.

        Envs whose simulator gives no access to its state raise
        :class:`~ding.errors.StateNotSupportedError`, naming the env.
        """
        self._check_launched()
        self._send_recv.check_idle("get_state")
        return snapshot_envs(self, env_ids)

    def set_state(self, states: Mapping[int, Any]) -> None:
        """Restore envs to states :meth:`get_state` took (by env id); each one's ready observation is its restored one.

        An env restored to the end of an episode is reset (``auto_reset``) or waits in ``NEED_RESET``.

        Example:
            >>> from functools import partial
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
        self._send_recv.check_idle("set_state")
        ledger = self._ledger
        ended = []
        for env_id, timestep in restore_envs(self, states).items():
            ledger.forget_failures(env_id)
            if timestep is None or timestep.done:
                ledger.waits_for_reset(env_id)
                ended.append(env_id)
            else:
                ledger.started(env_id, self._engine.adopt_obs(env_id, timestep.obs))
        if self._settings.auto_reset and ended:
            self._engine.reset({env_id: {} for env_id in ended})
            ledger.raise_fatal()

    def reward_shaping(self, env_id: int, transitions: list[dict[str, Any]]) -> Any:
        """The env's ``reward_shaping(transitions)`` (DI-engine's per-env call)."""
        return self.call_envs("reward_shaping", (transitions,), {}, [env_id])[env_id]

    def enable_save_figure(self, env_id: int, figure_path: str) -> None:
        """The env's ``enable_save_figure(figure_path)`` (DI-engine's per-env call)."""
        self.call_envs("enable_save_figure", (figure_path,), {}, [env_id])

    # ----- DI-engine's fan-out: manager.<env attribute> ------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        """An env attribute over every env, or a listed env method called on every env."""
        if name.startswith("__") or "_closed" not in self.__dict__:
            raise AttributeError(name)
        owner = type(self).__name__
        if hasattr(type(self), name):  # a property of the manager raised AttributeError
            raise AttributeError(f"{owner}.{name} is not available")
        if self.__dict__["_closed"]:
            raise AttributeError(f"{owner} is not launched: env attributes such as {name!r} are read after launch()")
        values = fan_out_values(owner, name, self._engine.describe(name), self.method_name_list)
        if values is None:
            return functools.partial(self._fan_out_call, name)
        return values

    def _fan_out_call(self, name: str, *args: Any, **kwargs: Any) -> list[Any]:
        results = self.call_envs(name, args, kwargs)
        return [results[env_id] for env_id in range(self._env_num)]


def _call_if_alive(method: weakref.WeakMethod[Callable[[], None]]) -> None:
    bound = method()
    if bound is not None:
        bound()
