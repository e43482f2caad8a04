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
``ready_obs`` when it arrives (``recv`` returns the ended episode's last step once that reset is
back, so every env ``recv`` returns takes an action at once, as in envpool's own asynchronous loop).
Enough envs must be in the pool for a batch (else an error says so), so give an asynchronous pool to
collectors, not to evaluators that stop envs after ``episode_num`` episodes. Not offered, and refused
with the reason: reset keyword arguments, videos (``enable_save_replay``), env method calls and
``env_ref`` (the envs are C++ objects).

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

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ding.envs.env_manager.base_manager import BaseEnvManager
from ding.envs.env_manager.engine import EngineFactory
from ding.envs.env_manager.envpool.engine import PoolEngine, PoolSlot, PoolTask
from ding.envs.env_manager.envpool.spec import pool_options, pool_spaces
from ding.errors import ConfigError
from ding.utils.accepts import count

__all__ = ["EnvPoolEnvManager", "PoolEnvManager"]

UNUSED_KEYS = ("step_timeout", "reset_timeout", "connect_timeout", "shared_memory", "context", "envs_per_worker")
"""Base settings about worker processes and Python env calls, which a pool has neither of: defaults only."""


class EnvPoolEnvManager(BaseEnvManager):
    """envpool's pool of ``env_num`` envs of task ``env_id`` behind the manager API (see the module docstring).

    Built either DI-engine's way, ``EnvPoolEnvManager(cfg)`` with ``cfg.env_num``, or as every manager
    is, ``EnvPoolEnvManager(env_fn, cfg)`` (then ``env_num`` is ``len(env_fn)`` and the constructors are
    not called). ``cfg.options`` holds the task's envpool options (``episodic_life``, ``reward_clip``,
    ``stack_num``, ``frame_skip``, ``max_episode_steps``, ...), checked against the task; DI-engine's way
    also takes them as keys of ``cfg`` itself. The engine is :class:`~ding.envs.env_manager.envpool.engine.PoolEngine`.
    """

    manager_type = "envpool"
    type_aliases: ClassVar[tuple[str, ...]] = ("env_pool",)
    config: ClassVar[dict[str, Any]] = {
        **BaseEnvManager.config,
        "env_id": None,  # the envpool task ('CartPole-v1', 'Pong-v5', ...; envpool.list_all_envs())
        "env_num": None,  # envs in the pool when built from a config alone (DI-engine's way)
        "options": {},  # the task's envpool options (max_episode_steps, episodic_life, stack_num, ...)
        "num_threads": count(0, low=0, note="envpool's worker threads (0: one per env, up to the cores)"),
        "thread_affinity_offset": count(-1, low=-1, note="first core to pin threads to (-1: no pinning)"),
    }
    make_engine: ClassVar[EngineFactory] = PoolEngine

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
        batch = _pool_batch(options.pop("batch_size", None), env_num)
        self.partial_batches = batch < env_num
        options = pool_options(task_id, options)
        _refuse_unused(user)
        task = PoolTask(task_id, options, batch, pool_spaces(task_id, options))
        super().__init__([PoolSlot(task)] * env_num, {**user, "env_id": task_id})
        if di_engine_seed is not None:
            self.seed(di_engine_seed)

    @property
    def pool(self) -> Any:
        """The envpool pool (None before ``launch`` and after ``close``)."""
        engine = self._engine
        assert isinstance(engine, PoolEngine)
        return engine.pool


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
