"""``PoolEngine``: an envpool pool as the engine of a manager (manager type ``envpool``).

envpool steps its envs in C++ threads; this engine gives them ding's semantics: ``auto_reset`` within the step (an
env whose episode ended is reset at once, so its ready observation is the new episode's first and the timestep the
last one), ``episode_num``, ``eval_episode_return`` in the last step's info, and the asynchronous API (``send``
hands actions to the pool and returns; ``recv`` collects them).

Seeds: envpool seeds each env when the pool is built, so seeds given before ``launch`` seed the first episodes;
seeds given later take effect at the next reset of every env (the pool is rebuilt then). Each env's later episodes
continue its random stream (``dynamic_seed=True``); with ``dynamic_seed=False`` every reset of all envs rebuilds the
pool, so each evaluation replays the same starts (an env reset alone continues its stream). Seeds are taken modulo
``2**31 - 1`` (envpool's seeds are signed 32-bit).

By default the pool returns every env it is sent (envpool's synchronous mode). With a pool batch below the env count
the pool is asynchronous: each ``step`` sends the given envs and returns the first ``batch`` results to come back
(others stay in the pool, out of the ready envs, and return in a later step; ``step({})`` when none is ready takes
the next batch), and an ended episode's reset is sent at once, its first observation joining the ready envs when it
arrives; ``recv`` returns an ended episode's last step once that reset is back, so every env ``recv`` returns takes
an action at once, as in envpool's own asynchronous loop. Enough envs must be in the pool for a batch (else an error
says so).

The pool's results are read as arrays (:mod:`~ding.envs.env_manager.envpool.results`): ``step_batch`` does per
batch a fixed amount of Python work whatever the env count (the actions checked as one array, returns and ends
summed as arrays, the info dicts made only when read), and per env only where an episode ended; so does ``recv`` on
an asynchronous pool for a pool batch in which no episode ended (its rows in the pool's order, its observations
the pool's own array). envpool itself resets an ended env on the step after its end; ding resets it within the
step, so a step in which episodes end makes one more pool call, for all of them together.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.env_manager.batch import BatchTimestep, stack_obs
from ding.envs.env_manager.engine import EngineParts
from ding.envs.env_manager.envpool.infos import PoolInfos, info_rows
from ding.envs.env_manager.envpool.results import (
    RAW_ACTION_KEYS,
    PoolBatch,
    PoolLayout,
    action_dtype,
    action_rows,
    copy_obs,
    set_obs_rows,
    valid_action_rows,
)
from ding.envs.env_manager.envpool.spec import envpool_seed, import_envpool, quiet_box_casts, task_options
from ding.envs.env_manager.no_workers import NoWorkers
from ding.envs.values.spaces import EnvSpaces
from ding.envs.values.timestep import BaseEnvTimestep
from ding.errors import EnvManagerError

__all__ = ["PoolEngine", "PoolSlot", "PoolTask"]


@dataclasses.dataclass(frozen=True)
class PoolTask:
    """The pool a manager runs: envpool task ``task_id`` with its checked ``options``, returning ``batch`` envs per
    step (the env count: synchronous)."""

    task_id: str
    options: dict[str, Any]
    batch: int
    env_spaces: EnvSpaces


class PoolSlot:
    """The constructor of one env of a pool: it states the spaces; the env itself exists only inside the pool."""

    def __init__(self, task: PoolTask) -> None:
        self.task = task
        self.env_spaces = task.env_spaces

    def __call__(self) -> Any:
        raise EnvManagerError(
            f"the envpool manager has no env object (task {self.task.task_id!r} runs in C++): its spaces are "
            "observation_space / action_space, read from envpool.make_spec"
        )


class PoolEngine(NoWorkers):
    """The envs of a manager as one envpool pool (see the module docstring); its env constructors are
    :class:`PoolSlot` of one :class:`PoolTask`."""

    def __init__(self, parts: EngineParts) -> None:
        slot = parts.env_fns[0]
        if not isinstance(slot, PoolSlot):
            raise TypeError(f"an envpool engine runs the slots of a pool task, got {slot!r}")
        self.task = slot.task
        self._env_num = len(parts.env_fns)
        self._settings, self._ledger, self._setup = parts.settings, parts.ledger, parts.setup
        self.pool: Any = None
        """The envpool pool (None before launch and after close)."""
        self._layout: PoolLayout | None = None  # where the pool's raw results put each field
        self._action_at: int | None = None  # the action's place among the raw send arrays (None: envpool's send)
        self._action_dtype = action_dtype(self.task.env_spaces.action)
        self._dict_obs = isinstance(self.task.env_spaces.observation, spaces.Dict)
        self._discrete = isinstance(self.task.env_spaces.action, spaces.Discrete)
        self._partial = self.task.batch < self._env_num
        self._seeded_pool = False  # the pool was built with the current seeds
        self._returns = np.zeros(self._env_num, dtype=np.float64)  # each env's episode return so far
        self._stepping: set[int] = set()  # envs with a step in the pool
        self._resetting: set[int] = set()  # envs with a reset in the pool
        self._received: dict[int, BaseEnvTimestep] = {}  # step results received, not yet returned
        self._held: dict[int, BaseEnvTimestep] = {}  # recv's ended steps whose env's reset is still in the pool
        self._all_env_ids = np.arange(self._env_num, dtype=np.int32)
        self._batch_env_ids = np.arange(self._env_num, dtype=np.int64)  # every step_batch's env ids (read-only)
        self._batch_env_ids.flags.writeable = False

    # ----- lifecycle -----------------------------------------------------------------------------
    def probe_spaces(self) -> EnvSpaces | None:
        return self.task.env_spaces

    def launch(
        self, spaces: EnvSpaces | None, declared: bool, params: Mapping[int, dict[str, Any]]
    ) -> tuple[EnvSpaces | None, bool]:
        self._build_pool()
        self.reset(params)
        return spaces, declared

    def _build_pool(self) -> None:
        if self.pool is not None:
            self.pool.close()
        rest, seeds = self._settings.rest, self._setup.seeds
        kwargs: dict[str, Any] = {
            "env_type": "gymnasium",
            "num_envs": self._env_num,
            "batch_size": self.task.batch,
            "num_threads": rest.num_threads,
            "thread_affinity_offset": rest.thread_affinity_offset,
            **self.task.options,
        }
        if seeds:
            base = envpool_seed(min(seeds.values()))
            kwargs["env_seed"] = [envpool_seed(seeds.get(i, base + i)) for i in range(self._env_num)]
        with quiet_box_casts():
            pool = self.pool = import_envpool().make(self.task.task_id, **kwargs)
        self._layout = PoolLayout.read(pool._state_keys)
        action_keys = list(pool._action_keys)
        one_player = pool.config.get("max_num_players", 1) == 1
        self._action_at = action_keys.index("action") if set(action_keys) == RAW_ACTION_KEYS and one_player else None
        dtypes = dict(zip(action_keys, (spec[0] for spec in pool._spec._action_spec), strict=True))
        self._action_dtype = action_dtype(self.task.env_spaces.action, dtypes.get("action"))
        self._seeded_pool = True
        self._stepping, self._resetting, self._received, self._held = set(), set(), {}, {}

    def close(self) -> None:
        pool, self.pool = self.pool, None
        self._stepping, self._resetting, self._received, self._held = set(), set(), {}, {}
        if pool is not None:
            pool.close()

    # ----- envs ----------------------------------------------------------------------------------
    def reset(self, params: Mapping[int, dict[str, Any]]) -> None:
        given = {env_id: kwargs for env_id, kwargs in params.items() if kwargs}
        if given:
            raise EnvManagerError(f"envpool envs take no reset arguments; got {given}")
        if params:
            self._reset_envs(sorted(params))

    def _reset_envs(self, env_ids: list[int]) -> None:
        """Reset ``env_ids`` in one pool call; a synchronous pool (or a reset of every env) has their first
        observations ready when this returns, an asynchronous one when they come back.

        A reset of every env rebuilds the pool when seeds wait to be applied, or with ``dynamic_seed=False``.
        """
        every = len(env_ids) == self._env_num
        if every and self._rebuild_due() and self.pool is not None:
            self._settle()
            self._build_pool()
        if not self._partial:
            self._settle()  # a synchronous pool holds one batch at a time
        ledger = self._ledger
        ledger.resetting(env_ids)
        for env_id in env_ids:
            ledger.drop_obs(env_id)
            self._held.pop(env_id, None)  # a reset from outside recv: its ended step is not returned
        self._resetting.update(env_ids)
        self.pool._reset(np.asarray(env_ids, dtype=np.int32))  # envpool's non-blocking reset of these envs
        if not self._partial or every:
            while self._resetting:
                self._receive_batch()

    def _rebuild_due(self) -> bool:
        """Whether a reset of every env rebuilds the pool (seeds wait to be applied, or ``dynamic_seed=False``)."""
        return not self._seeded_pool or self._setup.dynamic_seed is False

    def step(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        self._send_to_pool(actions)
        self._receive_batch()
        if self._partial:
            timesteps, self._received = self._received, {}
        else:
            timesteps = {env_id: self._received.pop(env_id) for env_id in actions}
        self._account(timesteps)
        return timesteps

    def _account(self, timesteps: Mapping[int, BaseEnvTimestep]) -> None:
        """Account the timesteps in the ledger and reset, in one pool call, the envs it says to."""
        resets = self._ledger.account(timesteps)
        if resets:
            self._reset_envs(resets)

    def step_batch(self, actions: Any) -> BatchTimestep:
        """Every env in one pool step, read as arrays (only ended episodes get per-env handling)."""
        final_obs: dict[int, Any]
        if self._partial:
            raise EnvManagerError(
                f"step_batch needs every env back at once; this pool returns {self.task.batch} of "
                f"{self._env_num} envs per step (options.batch_size): use step() or send() / recv()"
            )
        ledger = self._ledger
        ledger.require_all_ready(actions)
        rows = valid_action_rows(actions, self.task.env_spaces.action, self._env_num, self._action_dtype)
        if rows is None:  # names the env and value of a bad action, or clips (a Box space)
            checked = ledger.accept_action_rows(list(range(self._env_num)), actions)
            rows = action_rows(list(checked.values()), self.task.env_spaces.action, self._action_dtype)
        self._settle()
        self._send(rows, self._all_env_ids)
        batch = self._recv()  # a synchronous pool returns the envs in the order they were sent: by env id
        ends = np.count_nonzero(batch.done)
        restarts = self._restart_ended(batch.done) if ends else []
        self._returns += batch.reward
        obs_rows, terminated = batch.obs_rows(), batch.terminated
        ledger.stepped(dict(enumerate(obs_rows)))
        infos = PoolInfos(batch.info, self._env_num)
        obs, final_obs = batch.obs, {}
        if ends:
            obs, final_obs = self._end_episodes(batch, obs_rows, terminated, infos, restarts)
        return BatchTimestep(
            obs=obs,
            reward=batch.reward[:, None],
            done=batch.done,
            terminated=terminated,
            truncated=batch.truncated,
            info=infos,
            final_obs=final_obs,
            env_ids=self._batch_env_ids,
        )

    def _restart_ended(self, done: np.ndarray) -> list[int]:
        """Send the pool the resets of the envs whose episode ended (``done``: some did) and starts again within the
        step (as the ledger's rules say), before the step is accounted: the pool resets them while ding accounts.
        Returns those envs.

        A reset of every env that rebuilds the pool is left to the accounting (:meth:`_reset_envs`).
        """
        ended = done.nonzero()[0]
        restarts = ended[self._ledger.resets_within_step()[ended] > 0].tolist()
        if not restarts or (len(restarts) == self._env_num and self._rebuild_due()):
            return []
        self._resetting.update(restarts)
        self.pool._reset(np.asarray(restarts, dtype=np.int32))
        return restarts

    def _end_episodes(
        self, batch: PoolBatch, last_obs: list[Any], terminated: np.ndarray, infos: PoolInfos, restarts: list[int]
    ) -> tuple[Any, dict[int, Any]]:
        """Account the episodes that ended in a whole-batch step (rows are env ids), the ``restarts`` sent to the pool
        with their first observations; returns the batch's observations (the new episodes' first ones where an env
        was reset) and the ended episodes' last ones."""
        ledger, returns = self._ledger, self._returns
        final_obs: dict[int, Any] = {}
        ends = []
        for env_id in batch.done.nonzero()[0].tolist():
            info = infos[env_id]
            info["eval_episode_return"] = float(returns[env_id])
            returns[env_id] = 0.0
            final_obs[env_id] = last_obs[env_id]
            flags = {"terminated": bool(terminated[env_id]), "truncated": bool(batch.truncated[env_id])}
            ends.append(BaseEnvTimestep(last_obs[env_id], batch.reward[env_id : env_id + 1], True, info, **flags))
        first = {}
        if restarts:
            first = dict(zip(restarts, self._recv().obs_rows(), strict=True))  # in the order sent
            self._resetting.difference_update(restarts)
        resets = []
        for env_id, ended in zip(final_obs, ends, strict=True):
            if env_id in first:
                ledger.end_episode(env_id, ended, first[env_id])
            elif ledger.end_episode(env_id, ended):
                resets.append(env_id)
        if resets:
            self._reset_envs(resets)
        started = [*first, *resets]
        if not started:
            return batch.obs, final_obs
        obs = copy_obs(batch.obs)
        set_obs_rows(obs, started, [ledger.obs(env_id) for env_id in started])
        return obs, final_obs

    def apply_seeds(self, env_ids: Sequence[int] | None = None) -> None:
        self._seeded_pool = False  # applied when every env is next reset

    def apply_replay(self, env_ids: Sequence[int] | None = None) -> None:
        self.check_replay()

    def check_replay(self) -> None:
        raise EnvManagerError(
            "the envpool manager cannot record videos (envpool writes no episode files); record with a "
            "process manager ('subprocess') and env.replay_path"
        )

    def describe(self, name: str) -> dict[int, tuple[Any, ...]]:
        """Each env's spaces and render mode (None) are known; nothing else of a C++ env is."""
        env_spaces = self.task.env_spaces
        known = {
            "observation_space": env_spaces.observation,
            "action_space": env_spaces.action,
            "reward_space": env_spaces.reward,
            "render_mode": None,
        }
        found = ("value", known[name]) if name in known else ("missing",)
        return dict.fromkeys(range(self._env_num), found)

    def call(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], env_ids: Sequence[int] | None
    ) -> dict[int, Any]:
        raise EnvManagerError(
            f"envpool envs have no Python methods to call ({name!r} asked); the pool's options are set in the "
            f"config: {', '.join(task_options(self.task.task_id))}"
        )

    # ----- the asynchronous API: send hands actions to the pool, recv collects them ------------------------------
    def worker_key(self, env_id: int) -> int:
        return env_id

    def dispatch(self, actions: Mapping[int, Any]) -> None:
        self._send_to_pool(actions)

    def receive(
        self, pending: Mapping[int, Any], wanted: int, timeout: float | None, *, as_batch: bool = False
    ) -> BatchTimestep | dict[int, BaseEnvTimestep]:
        """``recv``'s results: in an asynchronous pool, an env whose episode ended is returned once its reset is
        back, so every env ``recv`` returns takes an action at once (its ready observation is the new episode's
        first, as with every manager), as in envpool's own asynchronous loop."""
        if as_batch and self._partial and not (self._received or self._held):
            batch = self._whole_pool_batch(pending, wanted)
            if batch is not None:
                return batch
        out: dict[int, BaseEnvTimestep] = {}
        while True:
            while (arrived := self._arrived(pending)) < wanted - len(out) and (self._stepping or self._resetting):
                if (out or arrived) and not self._pool_can_return():
                    break  # fewer envs in the pool than its batch: return what is here (else the error says why)
                self._receive_batch()
            timesteps = {env_id: self._received.pop(env_id) for env_id in list(pending) if env_id in self._received}
            self._account(timesteps)
            if not self._partial:
                return timesteps
            resetting, held = self._resetting, self._held
            for env_id in [env_id for env_id in timesteps if env_id in resetting]:
                held[env_id] = timesteps.pop(env_id)  # accounted now; returned when its first observation is back
            out.update((env_id, held.pop(env_id)) for env_id in list(held) if self._back(env_id, pending))
            out.update(timesteps)
            if len(out) >= wanted or not (self._stepping or self._resetting) or (out and not self._pool_can_return()):
                return out

    def _pool_can_return(self) -> bool:
        """Whether the pool can return a batch: a synchronous one returns what it was sent, an asynchronous one
        ``batch`` envs at a time, so it must hold that many."""
        return not self._partial or len(self._stepping) + len(self._resetting) >= self.task.batch

    def _whole_pool_batch(self, pending: Mapping[int, Any], wanted: int) -> BatchTimestep | None:
        """``recv``'s common case in an asynchronous pool, read as arrays: one pool batch of steps in which no episode
        ended gives the batch (rows in the pool's order, named by ``env_ids``) with nothing built or copied per env.
        Else (an episode ended or a reset came back in it, more envs wanted than a pool batch holds) the pool batch
        is kept as timesteps for the general path, and None returned."""
        if wanted > self.task.batch or len(self._stepping) < self.task.batch:
            return None  # the general path waits for more, or says why the pool cannot give a batch
        batch = self._recv()
        env_ids = batch.env_ids
        id_list = env_ids.tolist()
        if (
            np.count_nonzero(batch.done)
            or not self._resetting.isdisjoint(id_list)
            or not pending.keys() >= set(id_list)
        ):
            self._take(batch)
            return None
        self._returns[env_ids] += batch.reward  # env ids are unique within a batch
        self._stepping.difference_update(id_list)
        self._ledger.stepped(dict(zip(id_list, batch.obs_rows(), strict=True)))
        return BatchTimestep(
            obs=batch.obs,
            reward=batch.reward[:, None],
            done=batch.done,
            terminated=batch.terminated,
            truncated=batch.truncated,
            info=PoolInfos(batch.info, len(id_list)),
            final_obs={},
            env_ids=env_ids.astype(np.int64),
        )

    def _back(self, env_id: int, pending: Mapping[int, Any]) -> bool:
        """Whether a held ended step of ``pending`` can be returned: its env's reset is back."""
        return env_id in pending and env_id not in self._resetting

    def _arrived(self, pending: Mapping[int, Any]) -> int:
        """How many of ``pending`` ``receive`` can return now."""
        received, held = self._received, self._held
        return sum(env_id in received or (env_id in held and self._back(env_id, pending)) for env_id in pending)

    # ----- the pool's traffic ---------------------------------------------------------------------------------
    def _send(self, rows: np.ndarray, env_ids: np.ndarray) -> None:
        """Hand the pool actions (in its dtype) for ``env_ids`` (int32): as its raw arrays where the task takes one
        action array from one player, else through envpool's ``send``."""
        at = self._action_at
        if at is None:
            self.pool.send(rows, env_ids)
            return
        arrays = [env_ids, env_ids, env_ids]  # env_id, players.env_id (one player per env) and the action
        arrays[at] = rows
        self.pool._send(arrays)

    def _recv(self) -> PoolBatch:
        """The next batch of the pool, as arrays."""
        assert self._layout is not None
        return PoolBatch.read(self._layout, self.pool._recv(), self._dict_obs)

    def _send_to_pool(self, actions: Mapping[int, Any]) -> None:
        if not self._partial:
            self._settle()  # a synchronous pool holds one batch at a time
        if not actions:
            return
        env_ids = np.fromiter(actions, dtype=np.int32, count=len(actions))
        rows = self._discrete_rows(actions) if self._discrete else None
        if rows is None:
            rows = action_rows(list(actions.values()), self.task.env_spaces.action, self._action_dtype)
        self._send(rows, env_ids)
        self._stepping.update(actions)
        self._ledger.drop_obs_of(actions)  # in the pool until their results come back

    def _discrete_rows(self, actions: Mapping[int, Any]) -> np.ndarray | None:
        """Checked Discrete actions (ints) as the pool's array in one conversion; None for anything else."""
        try:
            return np.fromiter(actions.values(), dtype=self._action_dtype, count=len(actions))
        except (TypeError, ValueError):
            return None

    def _settle(self) -> None:
        """Receive everything in the pool (results wait in ``_received``)."""
        while self._stepping or self._resetting:
            self._receive_batch()

    def _receive_batch(self) -> None:
        """One ``recv`` of the pool: step results go to ``_received``, reset results make their envs ready."""
        if not self._pool_can_return():
            in_pool = len(self._stepping) + len(self._resetting)
            raise EnvManagerError(
                f"the pool returns {self.task.batch} envs at a time, but only {in_pool} are in it "
                f"(stepping {sorted(self._stepping)}, resetting {sorted(self._resetting)}): send more envs"
            )
        self._take(self._recv())

    def _take(self, batch: PoolBatch) -> None:
        """A pool batch's results: step results go to ``_received``, reset results make their envs ready."""
        env_ids, obs_rows = batch.env_ids.tolist(), batch.obs_rows()
        resetting, stepped = self._resetting, []
        for row, env_id in enumerate(env_ids):
            if env_id in resetting:
                resetting.discard(env_id)
                self._ledger.started(env_id, obs_rows[row])
                self._returns[env_id] = 0.0
            else:
                stepped.append(row)
        if stepped:
            self._keep_steps(batch, stepped, env_ids, obs_rows)

    def _keep_steps(self, batch: PoolBatch, rows: list[int], env_ids: list[int], obs_rows: list[Any]) -> None:
        """The step results in ``rows`` of ``batch`` as timesteps in ``_received`` (their returns summed)."""
        returns = self._returns
        if len(rows) == len(env_ids):
            returns[batch.env_ids] += batch.reward  # env ids are unique within a batch
        else:
            returns[batch.env_ids[rows]] += batch.reward[rows]
        done, truncated = batch.done.tolist(), batch.truncated.tolist()
        rewards = list(batch.reward[:, None])
        infos = info_rows(batch.info, len(env_ids))
        stepping, received = self._stepping, self._received
        for row in rows:
            env_id, ended, cut = env_ids[row], done[row], truncated[row]
            stepping.discard(env_id)
            info = infos[row]
            if ended:
                info["eval_episode_return"] = float(returns[env_id])
            # positional: keywords cost a measurable part of the call, once per env step
            received[env_id] = BaseEnvTimestep(obs_rows[row], rewards[row], ended, info, ended and not cut, cut)

    # ----- observations and monitoring ------------------------------------------------------------
    def ready_obs_batch(self, env_ids: list[int]) -> Any:
        return stack_obs([self._ledger.obs(i) for i in env_ids])

    def adopt_obs(self, env_id: int, obs: Any) -> Any:
        return obs

    @property
    def in_flight_env_ids(self) -> Sequence[int]:
        if not (self._stepping or self._resetting):
            return ()
        return sorted(self._stepping | self._resetting)
