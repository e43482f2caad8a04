"""``EnvPoolEnvManager``: an envpool pool behind ding's manager API (manager type ``envpool``).

envpool steps its envs in C++ threads; this manager gives them ding's semantics: spaces known from
the config alone (``envpool.make_spec``), actions checked, ``auto_reset`` within the step (an env
whose episode ended is reset at once, so ``ready_obs`` holds the new episode's first observation and
the timestep the last one), ``episode_num``, ``eval_episode_return`` in the last step's info, and the
asynchronous API (``send`` hands actions to the pool and returns; ``recv`` collects them).

Seeds: envpool seeds each env when the pool is built, so ``seed()`` before ``launch`` seeds the
first episodes; seeds given later take effect at the next reset of every env (the pool is rebuilt
then). Each env's later episodes continue its random stream (``dynamic_seed=True``); with
``dynamic_seed=False`` every reset of all envs rebuilds the pool, so each evaluation replays the
same starts (an env reset alone continues its stream). Seeds are taken modulo ``2**31 - 1``
(envpool's seeds are signed 32-bit).

By default the pool returns every env it is sent (envpool's synchronous mode). With
``options.batch_size`` below the env count (DI-engine's ``batch_size``) the pool is asynchronous:
each ``step`` sends the given envs and returns the first ``batch_size`` results to come back (others
stay in the pool, out of ``ready_obs``, and return in a later step; ``step({})`` when none is ready
takes the next batch), and an ended episode's reset is sent at once, its first observation joining
``ready_obs`` when it arrives. Enough envs must be in the pool for a batch (else an error says so),
so give an asynchronous pool to collectors, not to evaluators that stop envs after ``episode_num``
episodes. Not offered, and refused with the reason: reset keyword arguments, videos
(``enable_save_replay``), env method calls and ``env_ref`` (the envs are C++ objects).

Example:
    >>> manager = EnvPoolEnvManager({'env_id': 'CartPole-v1', 'env_num': 2, 'episode_num': 1})
    >>> manager.observation_space.shape, manager.action_space      # from make_spec, before launch
    ((4,), Discrete(2))
    >>> manager.seed(0)
    >>> manager.launch()
    >>> while not manager.done:
    ...     timesteps = manager.step({i: 1 for i in manager.ready_obs_id})
    >>> manager.close()
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from ding.envs.env_manager import async_api
from ding.envs.env_manager.base_manager import BaseEnvManager
from ding.envs.env_manager.batch import BatchTimestep
from ding.envs.env_manager.envpool.results import PoolBatch, action_rows
from ding.envs.env_manager.envpool.spec import (
    envpool_seed,
    import_envpool,
    pool_options,
    pool_spaces,
    quiet_box_casts,
    task_options,
)
from ding.envs.env_manager.state import EnvState
from ding.envs.values.conversion import within_bounds
from ding.envs.values.spaces import EnvSpaces
from ding.envs.values.timestep import BaseEnvTimestep
from ding.errors import ConfigError, EnvManagerError

__all__ = ["EnvPoolEnvManager", "PoolEnvManager"]

UNUSED_KEYS = ("step_timeout", "reset_timeout", "connect_timeout", "shared_memory", "context", "envs_per_worker")
"""Base settings about worker processes and Python env calls, which a pool has neither of: defaults only."""


class _PoolSlot:
    """The constructor of one env of a pool: it states the spaces; the env itself exists only inside the pool."""

    def __init__(self, task_id: str, env_spaces: EnvSpaces) -> None:
        self.task_id = task_id
        self.env_spaces = env_spaces

    def __call__(self) -> Any:
        raise EnvManagerError(f"the envs of envpool task {self.task_id!r} live inside the pool: none is built alone")


class EnvPoolEnvManager(BaseEnvManager):
    """envpool's pool of ``env_num`` envs of task ``env_id`` behind the manager API (see the module docstring).

    Built either DI-engine's way, ``EnvPoolEnvManager(cfg)`` with ``cfg.env_num``, or as every manager
    is, ``EnvPoolEnvManager(env_fn, cfg)`` (then ``env_num`` is ``len(env_fn)`` and the constructors are
    not called). ``cfg.options`` holds the task's envpool options (``episodic_life``, ``reward_clip``,
    ``stack_num``, ``frame_skip``, ``max_episode_steps``, ...), checked against the task; DI-engine's way
    also takes them as keys of ``cfg`` itself.
    """

    manager_type = "envpool"
    type_aliases: ClassVar[tuple[str, ...]] = ("env_pool",)
    config: ClassVar[dict[str, Any]] = {
        **BaseEnvManager.config,
        "env_id": None,  # the envpool task ('CartPole-v1', 'Pong-v5', ...; envpool.list_all_envs())
        "env_num": None,  # envs in the pool when built from a config alone (DI-engine's way)
        "options": {},  # the task's envpool options (max_episode_steps, episodic_life, stack_num, ...)
        "num_threads": 0,  # envpool's worker threads (0: one per env, up to the cores)
        "thread_affinity_offset": -1,  # first core to pin threads to (-1: no pinning)
    }

    def __init__(self, env_fn: Sequence[Any] | Mapping[str, Any], cfg: Mapping[str, Any] | None = None) -> None:
        di_engine_seed = None
        if isinstance(env_fn, Mapping):  # DI-engine's PoolEnvManager(cfg)
            if cfg is not None:
                raise TypeError("EnvPoolEnvManager takes (cfg) or (env_fn, cfg), not a config twice")
            env_fn, cfg = (), dict(env_fn)
            manager_keys = set(type(self).config) | {"type", "import_names", "cfg_type"}
            di_engine_seed = cfg.pop("seed", None)
            flat = {key: cfg.pop(key) for key in list(cfg) if key not in manager_keys}  # DI-engine's flat options
            if "batch_size" in cfg:  # DI-engine's batch_size is the pool's (below env_num: asynchronous)
                flat["batch_size"] = cfg.pop("batch_size")
            cfg["options"] = {**flat, **dict(cfg.get("options") or {})}
        user = dict(cfg or {})
        task_id = user.get("env_id") or _task_of(env_fn)
        options = dict(user.pop("options", None) or {})
        env_num = _env_num(user.pop("env_num", None), env_fn)
        self._pool_batch = _pool_batch(options.pop("batch_size", None), env_num)
        self.partial_batches = self._pool_batch < env_num
        self._options = pool_options(task_id, options)
        _refuse_unused(user)
        self._env_spaces = pool_spaces(task_id, self._options)
        super().__init__([_PoolSlot(task_id, self._env_spaces)] * env_num, {**user, "env_id": task_id})
        self._task_id: str = self._cfg.env_id
        self._pool: Any = None
        self._seeded_pool = False  # the pool was built with the current seeds
        self._returns = np.zeros(env_num, dtype=np.float64)
        self._stepping: set[int] = set()  # envs with a step in the pool
        self._resetting: set[int] = set()  # envs with a reset in the pool
        self._received: dict[int, BaseEnvTimestep] = {}  # step results received, not yet returned
        self._deferred_resets: list[int] | None = None  # see _resets_together
        self._all_env_ids = np.arange(env_num, dtype=np.int32)
        if di_engine_seed is not None:
            self.seed(di_engine_seed)

    # ----- what the base manager builds in this process, done by the pool --------------------------------------
    @property
    def env_ref(self) -> Any:
        raise EnvManagerError(
            f"the envpool manager has no env object (task {self._task_id!r} runs in C++): its spaces are "
            "observation_space / action_space, read from envpool.make_spec"
        )

    def _probe_spaces(self) -> EnvSpaces:
        return self._env_spaces

    def _create_envs(self) -> None:
        self._build_pool()

    def _build_pool(self) -> None:
        if self._pool is not None:
            self._pool.close()
        kwargs: dict[str, Any] = {
            "env_type": "gymnasium",
            "num_envs": self._env_num,
            "batch_size": self._pool_batch,
            "num_threads": self._cfg.num_threads,
            "thread_affinity_offset": self._cfg.thread_affinity_offset,
            **self._options,
        }
        if self._seeds:
            base = envpool_seed(min(self._seeds.values()))
            kwargs["env_seed"] = [envpool_seed(self._seeds.get(i, base + i)) for i in range(self._env_num)]
        with quiet_box_casts():
            self._pool = import_envpool().make(self._task_id, **kwargs)
        self._seeded_pool = True
        self._stepping, self._resetting, self._received = set(), set(), {}

    def _apply_seeds(self, env_ids: Sequence[int] | None = None) -> None:
        self._seeded_pool = False  # applied when every env is next reset

    def enable_save_replay(self, replay_path: str | Sequence[str]) -> None:
        self._apply_replay()

    def _apply_replay(self, env_ids: Sequence[int] | None = None) -> None:
        raise EnvManagerError(
            "the envpool manager cannot record videos (envpool writes no episode files); record with a "
            "process manager ('subprocess') and env.replay_path"
        )

    @contextlib.contextmanager
    def _resets_together(self) -> Iterator[None]:
        """Envs reset while this is open (ended episodes of one step) are reset in one pool call when it closes."""
        self._deferred_resets = []
        try:
            yield
        finally:
            deferred, self._deferred_resets = self._deferred_resets, None
            if deferred:
                self._reset_envs({env_id: {} for env_id in deferred})

    def _step_checked(self, checked: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        with self._resets_together():
            return super()._step_checked(checked)

    def _reset_envs(self, params: Mapping[int, dict[str, Any]]) -> None:
        if self._deferred_resets is not None and not any(params.values()):
            self._deferred_resets.extend(params)
            return
        given = {env_id: kwargs for env_id, kwargs in params.items() if kwargs}
        if given:
            raise EnvManagerError(f"envpool envs take no reset arguments; got {given}")
        env_ids = sorted(params)
        if not env_ids:
            return
        every = len(env_ids) == self._env_num
        if every and (not self._seeded_pool or self._dynamic_seed is False) and self._pool is not None:
            self._settle()
            self._build_pool()
        if self._pool_batch == self._env_num:
            self._settle()  # a synchronous pool holds one batch at a time
        for env_id in env_ids:
            self._env_states[env_id] = EnvState.RESET
            self._ready_obs.pop(env_id, None)
        self._resetting.update(env_ids)
        self._pool._reset(np.asarray(env_ids, dtype=np.int32))  # envpool's non-blocking reset of these envs
        if self._pool_batch == self._env_num or every:
            while self._resetting:  # a synchronous pool, or a launch: the first observations now
                self._receive_batch()

    def _step_envs(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        self._send_to_pool(actions)
        self._receive_batch()
        if not self.partial_batches:
            return {env_id: self._received.pop(env_id) for env_id in actions}
        received, self._received = self._received, {}
        return received

    def step(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        """As every manager's; an asynchronous pool with no env ready also takes ``{}``: the next batch back."""
        if self.partial_batches and not actions and (self._stepping or self._resetting) and not self._closed:
            async_api.check_idle(self, "step")
            return self._step_checked({})
        return super().step(actions)

    def step_batch(self, actions: Any) -> BatchTimestep:
        """Every env in one pool step, read as arrays (only ended episodes get per-env handling)."""
        if self.partial_batches:
            raise EnvManagerError(
                f"step_batch needs every env back at once; this pool returns {self._pool_batch} of "
                f"{self._env_num} envs per step (options.batch_size): use step() or send() / recv()"
            )
        self._check_launched()
        async_api.check_idle(self, "step_batch")
        self._require_all_ready()
        if len(actions) != self._env_num:
            raise ValueError(f"step_batch() got {len(actions)} actions for {self._env_num} envs")
        env_ids = list(range(self._env_num))
        rows = self._batch_actions(env_ids, actions)
        self._settle()
        self._pool.send(rows, self._all_env_ids)
        batch = PoolBatch.read(self._pool.recv()).in_env_order()
        self._returns += batch.reward
        self._failures.clear()
        done = batch.terminated | batch.truncated
        ended = np.flatnonzero(done).tolist()
        final_obs = {}
        for env_id in env_ids:
            self._ready_obs[env_id] = batch.obs[env_id]
        with self._resets_together():
            for env_id in ended:
                final_obs[env_id] = batch.obs[env_id]
                self._after_step(env_id, self._ended(batch, env_id))
        self._raise_fatal()
        obs = batch.obs
        if ended:
            obs = obs.copy()
            for env_id in ended:
                if env_id in self._ready_obs:
                    obs[env_id] = self._ready_obs[env_id]
        return BatchTimestep(
            obs=obs,
            reward=batch.reward[:, None],
            done=done,
            terminated=batch.terminated,
            truncated=batch.truncated & ~batch.terminated,
            info=batch.infos,
            final_obs=final_obs,
            env_ids=np.asarray(env_ids, dtype=np.int64),
        )

    def _batch_actions(self, env_ids: list[int], actions: Any) -> np.ndarray:
        """One action per env as the pool takes them: as given when they fit the space, else checked one by one."""
        space = self.action_space
        rows = np.asarray(actions)
        expected = (self._env_num, *(space.shape or ()))
        integers = not isinstance(space, spaces.Discrete) or rows.dtype.kind in "iu"
        if rows.shape == expected and integers and within_bounds(space, rows):
            return action_rows(rows, space)
        checked = self._check_action_rows(env_ids, actions)  # names the env and value, or clips
        return action_rows(list(checked.values()), space)

    def _ended(self, batch: PoolBatch, row: int) -> BaseEnvTimestep:
        """The last timestep of env ``row``'s episode (its return is already counted)."""
        self._returns[row] -= batch.reward[row]
        return self._timestep(batch, row)

    def _renew_env(self, env_id: int) -> None:
        """A pool's env cannot be rebuilt alone: the reset that follows starts it afresh."""

    def _close_envs(self) -> None:
        pool, self._pool = self._pool, None
        self._stepping, self._resetting, self._received = set(), set(), {}
        if pool is not None:
            pool.close()

    def _describe_all(self, name: str) -> dict[int, tuple[Any, ...]]:
        """Each env's spaces and render mode (None) are known; nothing else of a C++ env is."""
        known = {
            "observation_space": self._env_spaces.observation,
            "action_space": self._env_spaces.action,
            "reward_space": self._env_spaces.reward,
            "render_mode": None,
        }
        found = ("value", known[name]) if name in known else ("missing",)
        return dict.fromkeys(range(self._env_num), found)

    def _call_envs(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], env_ids: Sequence[int] | None
    ) -> dict[int, Any]:
        raise EnvManagerError(
            f"envpool envs have no Python methods to call ({name!r} asked); the pool's options are set in the "
            f"config: {', '.join(task_options(self._task_id))}"
        )

    # ----- the asynchronous API: send hands actions to the pool, recv collects them ------------------------------
    def _async_dispatch(self, actions: Mapping[int, Any]) -> None:
        self._send_to_pool(actions)

    def _async_receive(
        self, pending: Mapping[int, Any], wanted: int, timeout: float | None
    ) -> dict[int, BaseEnvTimestep]:
        while sum(env_id in self._received for env_id in pending) < wanted and (self._stepping or self._resetting):
            self._receive_batch()
        return {env_id: self._received.pop(env_id) for env_id in list(pending) if env_id in self._received}

    # ----- the pool's traffic ---------------------------------------------------------------------------------
    def _send_to_pool(self, actions: Mapping[int, Any]) -> None:
        if self._pool_batch == self._env_num:
            self._settle()  # a synchronous pool holds one batch at a time
        if not actions:
            return
        env_ids = np.fromiter(actions, dtype=np.int32, count=len(actions))
        self._pool.send(action_rows(list(actions.values()), self.action_space), env_ids)
        self._stepping.update(actions)
        for env_id in actions:
            self._ready_obs.pop(env_id, None)  # in the pool until its result comes back

    def _settle(self) -> None:
        """Receive everything in the pool (results wait in ``_received``)."""
        while self._stepping or self._resetting:
            self._receive_batch()

    def _receive_batch(self) -> None:
        """One ``recv`` of the pool: step results go to ``_received``, reset results make their envs ready."""
        in_pool = len(self._stepping) + len(self._resetting)
        if in_pool < min(self._pool_batch, self._env_num) and self._pool_batch < self._env_num:
            raise EnvManagerError(
                f"the pool returns {self._pool_batch} envs at a time, but only {in_pool} are in it "
                f"(stepping {sorted(self._stepping)}, resetting {sorted(self._resetting)}): send more envs"
            )
        batch = PoolBatch.read(self._pool.recv())
        for row, env_id in enumerate(batch.env_ids):
            if env_id in self._resetting:
                self._resetting.discard(env_id)
                self._ready_obs[env_id] = batch.obs[row]
                self._env_states[env_id] = EnvState.RUN
                self._returns[env_id] = 0.0
            else:
                self._stepping.discard(env_id)
                self._received[env_id] = self._timestep(batch, row)

    def _timestep(self, batch: PoolBatch, row: int) -> BaseEnvTimestep:
        env_id = batch.env_ids[row]
        self._returns[env_id] += batch.reward[row]
        terminated, truncated = bool(batch.terminated[row]), bool(batch.truncated[row])
        info = batch.infos[row]
        done = terminated or truncated
        if done:
            info["eval_episode_return"] = float(self._returns[env_id])
        reward = batch.reward[row : row + 1]
        return BaseEnvTimestep(
            batch.obs[row], reward, done, info, terminated=terminated, truncated=truncated and not terminated
        )


PoolEnvManager = EnvPoolEnvManager
"""DI-engine's name."""


def _task_of(env_fn: Any) -> Any:
    """The task named by the constructors' config (``cfg.env_id``), when no ``env_id`` is given to the manager."""
    fns = list(env_fn) if not isinstance(env_fn, Mapping) else []
    keywords = getattr(fns[0], "keywords", None) if fns else None
    env_cfg = (keywords or {}).get("cfg") or {}
    task = env_cfg.get("env_id") if isinstance(env_cfg, Mapping) else None
    if task is None:
        raise ConfigError("the envpool manager needs env.manager.env_id, the envpool task ('CartPole-v1', 'Pong-v5')")
    return task


def _env_num(env_num: Any, env_fn: Any) -> int:
    count = len(env_fn) if env_fn else env_num
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ConfigError(f"the envpool manager needs env_num, an int >= 1 (or env constructors); got {count!r}")
    if env_fn and env_num is not None and env_num != count:
        raise ConfigError(f"env.manager.env_num is {env_num}, but {count} env constructors were given")
    return count


def _pool_batch(batch: Any, env_num: int) -> int:
    """The pool's batch size: every env (synchronous), or a divisor of the env count (asynchronous)."""
    if batch is None:
        return env_num
    if isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= env_num or env_num % batch:
        raise ConfigError(
            f"env.manager.options.batch_size (the envs each pool step returns) must divide the env count "
            f"{env_num}, got {batch!r}"
        )
    return batch


def _refuse_unused(user: Mapping[str, Any]) -> None:
    defaults = BaseEnvManager.default_config()
    for key in UNUSED_KEYS:
        if key in user and user[key] != defaults[key]:
            raise ConfigError(
                f"env.manager.{key} is {user[key]!r}, but the envpool manager has no worker processes or Python env "
                f"calls for it to apply to; leave it at {defaults[key]!r}"
            )
