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
arrives. Enough envs must be in the pool for a batch (else an error says so).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.env_manager.batch import BatchTimestep, stack_obs
from ding.envs.env_manager.core.channel import Channel
from ding.envs.env_manager.engine import EngineParts
from ding.envs.env_manager.envpool.results import PoolBatch, action_rows
from ding.envs.env_manager.envpool.spec import envpool_seed, import_envpool, quiet_box_casts, task_options
from ding.envs.values.conversion import within_bounds
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


class PoolEngine:
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
        self._partial = self.task.batch < self._env_num
        self._seeded_pool = False  # the pool was built with the current seeds
        self._returns = np.zeros(self._env_num, dtype=np.float64)
        self._stepping: set[int] = set()  # envs with a step in the pool
        self._resetting: set[int] = set()  # envs with a reset in the pool
        self._received: dict[int, BaseEnvTimestep] = {}  # step results received, not yet returned
        self._deferred_resets: list[int] | None = None  # see _resets_together
        self._all_env_ids = np.arange(self._env_num, dtype=np.int32)

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
            self.pool = import_envpool().make(self.task.task_id, **kwargs)
        self._seeded_pool = True
        self._stepping, self._resetting, self._received = set(), set(), {}

    def close(self) -> None:
        pool, self.pool = self.pool, None
        self._stepping, self._resetting, self._received = set(), set(), {}
        if pool is not None:
            pool.close()

    # ----- envs ----------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _resets_together(self) -> Iterator[None]:
        """Envs reset while this is open (ended episodes of one step) are reset in one pool call when it closes."""
        self._deferred_resets = []
        try:
            yield
        finally:
            deferred, self._deferred_resets = self._deferred_resets, None
            if deferred:
                self.reset({env_id: {} for env_id in deferred})

    def reset(self, params: Mapping[int, dict[str, Any]]) -> None:
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
        if every and (not self._seeded_pool or self._setup.dynamic_seed is False) and self.pool is not None:
            self._settle()
            self._build_pool()
        if not self._partial:
            self._settle()  # a synchronous pool holds one batch at a time
        ledger = self._ledger
        ledger.resetting(env_ids)
        for env_id in env_ids:
            ledger.drop_obs(env_id)
        self._resetting.update(env_ids)
        self.pool._reset(np.asarray(env_ids, dtype=np.int32))  # envpool's non-blocking reset of these envs
        if not self._partial or every:
            while self._resetting:  # a synchronous pool, or a launch: the first observations now
                self._receive_batch()

    def step(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        with self._resets_together():
            self._send_to_pool(actions)
            self._receive_batch()
            if self._partial:
                timesteps, self._received = self._received, {}
            else:
                timesteps = {env_id: self._received.pop(env_id) for env_id in actions}
            self._account(timesteps)
        return timesteps

    def _account(self, timesteps: Mapping[int, BaseEnvTimestep]) -> None:
        for env_id in self._ledger.account(timesteps):
            self.reset({env_id: {}})

    def step_batch(self, actions: Any) -> BatchTimestep:
        """Every env in one pool step, read as arrays (only ended episodes get per-env handling)."""
        if self._partial:
            raise EnvManagerError(
                f"step_batch needs every env back at once; this pool returns {self.task.batch} of "
                f"{self._env_num} envs per step (options.batch_size): use step() or send() / recv()"
            )
        ledger = self._ledger
        ledger.require_all_ready(actions)
        env_ids = list(range(self._env_num))
        rows = self._batch_actions(env_ids, actions)
        self._settle()
        self.pool.send(rows, self._all_env_ids)
        batch = PoolBatch.read(self.pool.recv()).in_env_order()
        self._returns += batch.reward
        done = batch.terminated | batch.truncated
        ended = np.flatnonzero(done).tolist()
        ledger.stepped({env_id: batch.obs[env_id] for env_id in env_ids})
        final_obs = {}
        with self._resets_together():
            for env_id in ended:
                final_obs[env_id] = batch.obs[env_id]
                self._account({env_id: self._ended(batch, env_id)})
        obs = batch.obs
        if ended:
            obs = obs.copy()
            ready = ledger.ready_view
            for env_id in ended:
                if env_id in ready:
                    obs[env_id] = ready[env_id]
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
        space = self.task.env_spaces.action
        rows = np.asarray(actions)
        expected = (self._env_num, *(space.shape or ()))
        integers = not isinstance(space, spaces.Discrete) or rows.dtype.kind in "iu"
        if rows.shape == expected and integers and within_bounds(space, rows):
            return action_rows(rows, space)
        checked = self._ledger.accept_action_rows(env_ids, actions)  # names the env and value, or clips
        return action_rows(list(checked.values()), space)

    def _ended(self, batch: PoolBatch, row: int) -> BaseEnvTimestep:
        """The last timestep of env ``row``'s episode (its return is already counted)."""
        self._returns[row] -= batch.reward[row]
        return self._timestep(batch, row)

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
    ) -> dict[int, BaseEnvTimestep]:
        while sum(env_id in self._received for env_id in pending) < wanted and (self._stepping or self._resetting):
            self._receive_batch()
        timesteps = {env_id: self._received.pop(env_id) for env_id in list(pending) if env_id in self._received}
        self._account(timesteps)
        return timesteps

    # ----- the pool's traffic ---------------------------------------------------------------------------------
    def _send_to_pool(self, actions: Mapping[int, Any]) -> None:
        if not self._partial:
            self._settle()  # a synchronous pool holds one batch at a time
        if not actions:
            return
        env_ids = np.fromiter(actions, dtype=np.int32, count=len(actions))
        self.pool.send(action_rows(list(actions.values()), self.task.env_spaces.action), env_ids)
        self._stepping.update(actions)
        for env_id in actions:
            self._ledger.drop_obs(env_id)  # in the pool until its result comes back

    def _settle(self) -> None:
        """Receive everything in the pool (results wait in ``_received``)."""
        while self._stepping or self._resetting:
            self._receive_batch()

    def _receive_batch(self) -> None:
        """One ``recv`` of the pool: step results go to ``_received``, reset results make their envs ready."""
        in_pool = len(self._stepping) + len(self._resetting)
        if in_pool < min(self.task.batch, self._env_num) and self._partial:
            raise EnvManagerError(
                f"the pool returns {self.task.batch} envs at a time, but only {in_pool} are in it "
                f"(stepping {sorted(self._stepping)}, resetting {sorted(self._resetting)}): send more envs"
            )
        batch = PoolBatch.read(self.pool.recv())
        for row, env_id in enumerate(batch.env_ids):
            if env_id in self._resetting:
                self._resetting.discard(env_id)
                self._ledger.started(env_id, batch.obs[row])
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

    @property
    def channel(self) -> Channel | None:
        return None

    @property
    def worker_pids(self) -> list[int | None]:
        return []

    @property
    def shared_memory_names(self) -> list[str]:
        return []

    @property
    def late_results(self) -> int:
        return 0

    @property
    def refused_replies(self) -> int:
        return 0
