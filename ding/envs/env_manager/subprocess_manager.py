"""Subprocess env managers: envs run in worker processes and exchange data through shared memory.

A worker owns ``envs_per_worker`` envs and is woken once per batch step with a one-byte message;
actions, observations, rewards and end flags cross in shared memory laid out from the envs'
declared spaces before any worker starts. Only info dicts and failures are pickled, and only
when there are any.

The parent detects every fault itself: a dead worker through its process sentinel (at once), a
hung one through ``step_timeout`` / ``reset_timeout``. A dead or hung worker is killed and
started afresh; the episodes it was running end with abnormal timesteps and its envs restart,
while every other env keeps its steps.

Envs whose spaces are not declared by their constructors are probed in a child process before
launch (the parent never builds one); their actions travel pickled, and without shared memory so
do their observations and rewards, as the envs return them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import pickle
import time
import weakref
from collections.abc import Mapping, Sequence
from multiprocessing import connection
from multiprocessing.connection import Connection
from typing import Any, ClassVar, Protocol

import cloudpickle
import numpy as np
from gymnasium import spaces

from ding.envs.env_manager import async_api
from ding.envs.env_manager.base_manager import BaseEnvManager
from ding.envs.env_manager.batch import BatchTimestep, ObsBatch
from ding.envs.env_manager.batch_read import read_rows
from ding.envs.env_manager.commands import Command, CommandKind
from ding.envs.env_manager.inputs import check_action_rows
from ding.envs.env_manager.rows import RAW_REPLY, pack_request, unpack_reply
from ding.envs.env_manager.settings import reset_wait
from ding.envs.env_manager.shm import (
    CONTROL_RESET_ON_DONE,
    CONTROL_STEP,
    FLAG_DONE,
    FLAG_RESET,
    FLAG_TERMINATED,
    FLAG_TRUNCATED,
    BufferLayout,
    SharedBuffers,
    build_tree,
)
from ding.envs.env_manager.spin import SPIN_LIMIT, SpinBudget, spin_until
from ding.envs.env_manager.state import EnvState
from ding.envs.env_manager.worker import OK, STEP, EnvFailure, StepReply, worker_main
from ding.envs.probe import probe_spaces
from ding.envs.spaces import EnvSpaces
from ding.envs.timestep import BaseEnvTimestep
from ding.errors import EnvManagerError, EnvSpecError, EnvStepError, WorkerDiedError, WorkerTimeoutError

CLOSE_GRACE = 2.0
"""Seconds a worker gets to close its envs before it is killed."""


class WorkerProcess(Protocol):
    """What the manager uses of a worker's process (a ``multiprocessing`` process, or a Ray actor's)."""

    @property
    def pid(self) -> int | None: ...

    @property
    def sentinel(self) -> int: ...

    @property
    def exitcode(self) -> int | None: ...

    def is_alive(self) -> bool: ...

    def kill(self) -> None: ...

    def join(self, timeout: float | None = None) -> None: ...


@dataclasses.dataclass
class WorkerHandle:
    """The parent's side of one worker process."""

    index: int
    env_ids: list[int]
    process: WorkerProcess
    conn: Connection
    busy_since: float | None = None

    def describe(self) -> str:
        return f"worker {self.index} (pid {self.process.pid}, envs {self.env_ids})"


@dataclasses.dataclass(frozen=True)
class WorkerFault:
    """A worker that died or did not answer in time."""

    worker: int
    error: EnvManagerError


def _release(workers: list[WorkerHandle | None], buffers: list[SharedBuffers]) -> None:
    """Last-resort cleanup of a manager that was never closed: kill its workers, free its shared memory."""
    for handle in workers:
        if handle is not None and handle.process.is_alive():
            handle.process.kill()
            handle.process.join(1.0)
    for shared in buffers:
        shared.close()


def _death(handle: WorkerHandle) -> str:
    """A dead worker, with its exit code when known (a Ray actor's process is not the manager's child)."""
    code = handle.process.exitcode
    return f"{handle.describe()} died" + (f" (exit code {code})" if code is not None else "")


def _failure_error(failure: EnvFailure) -> EnvStepError:
    return EnvStepError(failure.env_id, failure.operation, failure.exc_type, failure.message, failure.traceback_text)


class SyncSubprocessEnvManager(BaseEnvManager):
    """Run envs in worker processes; ``step`` returns once every stepped env has its result.

    Example:
        >>> from functools import partial
        >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
        >>> fns = [partial(CartPoleEnv, cfg={}) for _ in range(4)]
        >>> with SyncSubprocessEnvManager(fns, {'envs_per_worker': 2, 'episode_num': 1}) as manager:
        ...     manager.seed(0)
        ...     manager.launch()
        ...     while not manager.done:
        ...         _ = manager.step({i: 1 for i in manager.ready_obs_id})
    """

    manager_type = "subprocess"
    config: ClassVar[dict[str, Any]] = {
        **BaseEnvManager.config,
        "shared_memory": True,
        "context": "fork",
        "step_timeout": 60.0,
        "reset_timeout": 60.0,
        "connect_timeout": 60.0,
    }

    def __init__(self, env_fn: Sequence[Any], cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(env_fn, cfg)
        per_worker = int(self._cfg.envs_per_worker)
        self._groups = [list(range(s, min(s + per_worker, self._env_num))) for s in range(0, self._env_num, per_worker)]
        self._worker_of = {env_id: w for w, group in enumerate(self._groups) for env_id in group}
        self._group_rows = [slice(group[0], group[-1] + 1) for group in self._groups]
        """Each env group's rows in the step buffers."""
        self._context = multiprocessing.get_context(self._cfg.context or "fork")
        self._workers: list[WorkerHandle | None] = [None] * len(self._groups)
        self._layout: BufferLayout | None = None
        self._buffers: SharedBuffers | None = None
        self._blobs = [cloudpickle.dumps([self._env_fns[i] for i in group]) for group in self._groups]
        self._spin = SpinBudget(SPIN_LIMIT)
        self._owned_buffers: list[SharedBuffers] = []
        self._pickled_ready: dict[int, Any] = {}  # pickled layouts: each env's ready obs, last step's obs and reward
        self._pickled_final: dict[int, Any] = {}
        self._pickled_reward: dict[int, Any] = {}
        self._sent_at: dict[int, float] = {}  # worker -> when send() woke it (asynchronous API)
        self._send_faults: dict[int, WorkerFault] = {}  # worker -> the fault send() met waking it
        # If the manager is dropped or the interpreter exits without close(), still stop workers and free memory.
        weakref.finalize(self, _release, self._workers, self._owned_buffers)

    @property
    def worker_pids(self) -> list[int | None]:
        """Process ids of the workers (for monitoring and fault-injection tests)."""
        return [w.process.pid if w is not None else None for w in self._workers]

    @property
    def shared_memory_names(self) -> list[str]:
        return [spec.name for spec in self._buffers.all_specs()] if self._buffers is not None else []

    def _probe_spaces(self) -> EnvSpaces:
        """Build env 0 in a child process (started as the workers are) to read its spaces."""
        return probe_spaces(self._env_fns[0], context=self._cfg.context or "fork")

    def _launch_timeout(self) -> float | None:
        """Seconds a worker may take to start and build its envs: ``connect_timeout``, else ``reset_timeout``."""
        return self._connect_timeout if self._connect_timeout is not None else self._reset_timeout

    # ----- worker lifecycle ----------------------------------------------------------------------
    def _create_envs(self) -> None:
        if self._spaces is not None:
            self._allocate(self._spaces)
        try:
            for w in range(len(self._groups)):
                self._start_worker(w)
            startups = [self._await_startup(w) for w in range(len(self._groups))]
            for startup in startups:
                if isinstance(startup, EnvFailure):
                    raise _failure_error(startup)
            if not self._spaces_declared and self._classes_declare(startups):
                self._spaces_declared = True  # built by factories, but of classes that declare these spaces
                self._spaces = startups[0][self._groups[0][0]]
                self._free_buffers()
            if self._buffers is None:  # adopt what the first env was built with
                self._spaces = self._spaces or startups[0][self._groups[0][0]]
                self._allocate(self._spaces)
                for w in range(len(self._groups)):
                    self._request(w, Command(CommandKind.ATTACH, self._layout))
            for startup in startups:
                self._check_startup(startup)
        except BaseException:
            self.close()
            raise
        if self._seeds:
            self._apply_seeds()
        if self._replay_dirs is not None:
            self._apply_replay()

    def _classes_declare(self, startups: Sequence[dict[int, EnvSpaces]]) -> bool:
        """Whether every probed env's class declares its spaces, equal to the built ones and to each other's.

        Such envs (built by a factory function rather than a class) are then treated as declared.
        """
        built = [spaces for startup in startups for spaces in startup.values()]
        if any(spaces != built[0] for spaces in built) or (self._spaces is not None and self._spaces != built[0]):
            return False
        return all(all(self._request(w, Command(CommandKind.DECLARED)).values()) for w in range(len(self._groups)))

    def _allocate(self, env_spaces: EnvSpaces) -> None:
        shared = bool(self._cfg.shared_memory)
        self._layout = BufferLayout.plan(env_spaces, self._env_num, shared=shared, declared=self._spaces_declared)
        self._buffers = SharedBuffers(self._layout, create=True)
        self._owned_buffers.append(self._buffers)

    def _start_worker(self, w: int) -> None:
        parent_conn, child_conn = self._context.Pipe(duplex=True)
        process = self._context.Process(
            target=worker_main,
            args=(self._groups[w], self._blobs[w], child_conn, self._layout, os.getpid(), self._spin.limit),
            name=f"ding-env-worker-{w}",
            daemon=True,
        )
        process.start()
        child_conn.close()
        self._workers[w] = WorkerHandle(w, self._groups[w], process, parent_conn)

    def _await_startup(self, w: int) -> Any:
        result = self._collect([w], self._launch_timeout())[w]
        if isinstance(result, WorkerFault):
            raise result.error
        return pickle.loads(result)

    def _check_startup(self, startup: Any) -> None:
        if isinstance(startup, EnvFailure):
            raise _failure_error(startup)
        assert self._spaces is not None and self._layout is not None
        for env_id, built in sorted(startup.items()):
            if self._spaces_declared:
                if built != self._spaces:
                    raise EnvSpecError(
                        f"env {env_id} was built with spaces {built}, but the batch declares {self._spaces}"
                    )
            elif not self._layout.pickled:  # probed spaces: only what shared memory holds must agree
                for name in ("observation", "reward"):
                    mine, first = getattr(built, name), getattr(self._spaces, name)
                    if mine != first:
                        raise EnvSpecError(
                            f"env {env_id} was built with {name} space {mine}, but env 0 has {first}; one "
                            "shared-memory layout needs them equal (shared_memory=False lets each env differ)"
                        )

    def close(self) -> None:
        for pending in (getattr(self, "_sent_at", {}), getattr(self, "_send_faults", {})):
            pending.clear()  # the workers stop with the manager: no step is in flight any more
        super().close()

    def _kill_worker(self, w: int) -> None:
        handle = self._workers[w]
        if handle is None:
            return
        self._workers[w] = None
        if handle.process.is_alive():
            handle.process.kill()
        handle.process.join()
        handle.conn.close()

    def _restart_worker(self, w: int) -> None:
        """Kill worker ``w`` and start a fresh one with the same envs, seeds and replay settings."""
        self._kill_worker(w)
        self._start_worker(w)
        self._check_startup(self._await_startup(w))
        ids = self._groups[w]
        if any(i in self._seeds for i in ids):
            self._apply_seeds(ids)
        if self._replay_dirs is not None:
            self._apply_replay(ids)

    def _close_envs(self) -> None:
        for handle in self._workers:
            if handle is not None:
                with contextlib.suppress(OSError):
                    handle.conn.send_bytes(pickle.dumps(Command(CommandKind.CLOSE)))
        deadline = time.monotonic() + CLOSE_GRACE
        for w, handle in enumerate(self._workers):
            if handle is not None:
                handle.process.join(max(0.0, deadline - time.monotonic()))
                self._kill_worker(w)
        self._free_buffers()

    def _free_buffers(self) -> None:
        """Unmap this batch's shared memory and remove its segments (views callers kept stay readable)."""
        if self._buffers is not None:
            self._buffers.close()
            self._buffers = None
            self._owned_buffers.clear()

    # ----- messaging -----------------------------------------------------------------------------
    def _spin_collect(self, workers: Sequence[int], results: dict[int, bytes | WorkerFault]) -> None:
        """Poll the workers' pipes for a short adaptive window before blocking (step replies only)."""
        pending = {w: self._workers[w].conn for w in workers}  # type: ignore[union-attr]
        pre_block = self._spin.pre_block()
        if pre_block > 0.0:  # a long wait: sleep through most of it, then spin for the answer
            connection.wait(list(pending.values()), pre_block)

        def poll() -> bool:
            for w, conn in list(pending.items()):
                if conn.poll():
                    try:
                        results[w] = conn.recv_bytes()
                    except (EOFError, OSError):
                        return True  # a dead worker: the blocking path reports it
                    del pending[w]
            return not pending

        spin_until(poll, self._spin.window())

    def _collect(
        self, workers: Sequence[int], timeout: float | None, spin: bool = False
    ) -> dict[int, bytes | WorkerFault]:
        """Wait for one reply from each worker; a dead or silent worker yields a :class:`WorkerFault`."""
        results: dict[int, bytes | WorkerFault] = {}
        started = time.perf_counter()
        if spin:
            self._spin_collect(workers, results)
            workers = [w for w in workers if w not in results]
        waiting: dict[Any, int] = {}
        for w in workers:
            handle = self._workers[w]
            assert handle is not None
            waiting[handle.conn] = w
            waiting[handle.process.sentinel] = w
        deadline = None if timeout is None else time.monotonic() + timeout
        while waiting:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready = connection.wait(list(waiting), remaining)
            if not ready:
                for w in set(waiting.values()):
                    handle = self._workers[w]
                    assert handle is not None
                    results[w] = WorkerFault(
                        w, WorkerTimeoutError(f"{handle.describe()} did not answer within {timeout} s")
                    )
                break
            for obj in ready:
                w = waiting.get(obj, -1)
                if w < 0 or w in results:
                    continue
                handle = self._workers[w]
                assert handle is not None
                try:
                    if obj is handle.conn or handle.conn.poll():
                        results[w] = handle.conn.recv_bytes()
                    else:
                        raise EOFError
                except (EOFError, OSError):
                    handle.process.join(0.5)
                    results[w] = WorkerFault(w, WorkerDiedError(_death(handle)))
                waiting = {k: v for k, v in waiting.items() if v != w}
        if spin:
            self._spin.observe(time.perf_counter() - started)
        return results

    def _send(self, w: int, message: bytes) -> WorkerFault | None:
        handle = self._workers[w]
        assert handle is not None
        try:
            handle.conn.send_bytes(message)
        except OSError:
            handle.process.join(0.5)
            return WorkerFault(w, WorkerDiedError(_death(handle)))
        return None

    def _request(self, w: int, command: Command, timeout: float | None = None) -> Any:
        """Send a control command and return the worker's answer; faults raise (control paths are not retried)."""
        if w in self._sent_at:
            raise EnvManagerError(
                f"envs {self._groups[w]} have a step in flight from send(); recv() it before {command.name!r}"
            )
        fault = self._send(w, pickle.dumps(command, protocol=pickle.HIGHEST_PROTOCOL))
        reply = fault or self._collect([w], timeout or reset_wait(self._reset_timeout, self._connect_timeout))[w]
        if isinstance(reply, WorkerFault):
            self.close()
            raise reply.error
        result = pickle.loads(reply)
        if isinstance(result, EnvFailure):
            raise _failure_error(result)
        return result

    # ----- shared-memory views -------------------------------------------------------------------
    def _obs_of(self, env_id: int, final: bool = False) -> Any:
        """Env ``env_id``'s ready observation, or with ``final`` the last one of its ended episode."""
        buffers, layout = self._buffers, self._layout
        assert buffers is not None and layout is not None
        if layout.pickled:
            return (self._pickled_final if final else self._pickled_ready)[env_id]
        return self._read_obs(buffers.final if final else buffers.ready, env_id)

    def _read_obs(self, target: list[np.ndarray], env_id: int) -> Any:
        assert self._layout is not None
        copy = self._copy_on_get
        paths = self._layout.obs_paths
        if len(paths) == 1 and not paths[0]:
            row = target[0][env_id]
            return row.copy() if copy else row
        by_path = dict(zip(paths, target, strict=True))
        return build_tree(self.observation_space, lambda p: by_path[p][env_id].copy() if copy else by_path[p][env_id])

    def ready_obs_batch(self) -> ObsBatch:
        """Ready observations stacked by env id: a view of shared memory when every env is ready.

        The view stays valid until the next ``step`` or ``reset``; copy it to keep it longer.
        """
        ids = self.ready_obs_id
        if not ids:
            raise EnvManagerError(f"no env is ready; env states: {self._state_summary()}")
        assert self._buffers is not None and self._layout is not None
        if self._layout.pickled:
            return super().ready_obs_batch()
        index: Any = slice(None) if len(ids) == self._env_num else np.asarray(ids)
        by_path = dict(zip(self._layout.obs_paths, self._buffers.ready, strict=True))
        return ObsBatch(np.asarray(ids), build_tree(self.observation_space, lambda p: by_path[p][index]))

    # ----- stepping ------------------------------------------------------------------------------
    def step_batch(self, actions: Any) -> BatchTimestep:
        """Step every env at once: actions go to shared memory in one copy, one wake-up per worker."""
        self._check_launched()
        async_api.check_idle(self, "step_batch")
        buffers = self._buffers
        assert buffers is not None
        if buffers.action is None:
            return super().step_batch(actions)
        self._require_all_ready()
        checked = self._check_batch_actions(actions)
        buffers.action[...] = checked
        control = buffers.control
        control[:, CONTROL_STEP] = 1
        control[:, CONTROL_RESET_ON_DONE] = self._reset_on_done_mask()
        faults: dict[int, bytes | WorkerFault] = {}
        for w in range(len(self._groups)):
            fault = self._send(w, self._step_message(w))
            if fault is not None:
                faults[w] = fault
        sent = [w for w in range(len(self._groups)) if w not in faults]
        replies = {**faults, **self._collect(sent, self._step_timeout, spin=True)}
        infos = self._infos_without_failures(replies)
        if infos is None:  # rare: the per-env path handles faults
            timesteps = self._gather(dict(enumerate(checked)), replies)
            for env_id, timestep in timesteps.items():
                if env_id in self._failures and not timestep.info.get("abnormal", False):
                    del self._failures[env_id]
                self._after_step(env_id, timestep)
            self._raise_fatal()
            return self._batch_from(timesteps)
        return self._batch_of(list(range(self._env_num)), infos)

    def _infos_without_failures(self, replies: Mapping[int, bytes | WorkerFault]) -> dict[int, dict[str, Any]] | None:
        """The step infos of every env in ``replies`` (decoded), or None when a worker faulted or an env failed."""
        infos: dict[int, dict[str, Any]] = {}
        for w, reply in replies.items():
            if reply == OK:
                continue
            result = reply if isinstance(reply, WorkerFault) else self._decode(w, reply)
            if isinstance(result, WorkerFault) or result.failures:
                return None
            infos.update(result.infos)
        return infos

    def _batch_of(self, env_ids: list[int], infos: Mapping[int, dict[str, Any]]) -> BatchTimestep:
        """The batch of envs that all stepped without a failure, read from the buffers with one copy per array.

        Their episodes are accounted as ``step`` does; only envs whose episode ended get a timestep object.
        """
        layout = self._layout
        assert self._buffers is not None and layout is not None
        rows = read_rows(self._buffers, self.observation_space, env_ids, copy=self._copy_on_get)
        ready, failures = self._ready_obs, self._failures
        final_obs = {}
        for j in np.flatnonzero(rows.done).tolist():
            env_id = env_ids[j]
            timestep = self._timestep(env_id, infos.get(env_id, {}))
            final_obs[env_id] = timestep.obs
            failures.pop(env_id, None)
            self._after_step(env_id, timestep)
            if env_id not in ready:  # no new episode: the row shows the episode's last observation
                rows.set_row(j, timestep.obs, layout.obs_paths)
            elif not rows.reset[j]:  # reset here, after the step: the row shows the new first observation
                rows.set_row(j, ready[env_id], layout.obs_paths)
        for j in np.flatnonzero(~rows.done).tolist():
            env_id = env_ids[j]
            ready[env_id] = rows.row(j)
            if failures:
                failures.pop(env_id, None)
        return BatchTimestep(
            obs=rows.obs,
            reward=rows.reward,
            done=rows.done,
            terminated=rows.terminated,
            truncated=rows.truncated,
            info=[infos.get(i, {}) for i in env_ids],
            final_obs=final_obs,
            env_ids=np.asarray(env_ids, dtype=np.int64),
        )

    def _check_action_rows(self, env_ids: list[int], rows: Any) -> dict[int, Any]:
        """With an action buffer, an array of actions is checked as one array (the errors stay per action)."""
        if self._buffers is None or self._buffers.action is None:
            return super()._check_action_rows(env_ids, rows)
        return check_action_rows(
            rows, env_ids, self.action_space, self._ready_obs, self.ready_obs_id, self._env_states, self._action_check
        )

    def _check_batch_actions(self, actions: Any) -> np.ndarray:
        space = self.action_space
        arr = np.asarray(actions)
        assert self._buffers is not None and self._buffers.action is not None
        expected = self._buffers.action.shape
        if arr.shape != expected:
            if arr.size != int(np.prod(expected)):
                raise ValueError(f"step_batch() actions have shape {arr.shape}; expected {expected} for {space}")
            arr = arr.reshape(expected)
        if isinstance(space, spaces.Discrete):
            if arr.dtype.kind not in "iub":
                raise TypeError(f"step_batch() actions have dtype {arr.dtype}; {space} takes integers")
            bad = np.flatnonzero((arr < space.start) | (arr >= space.start + space.n))
            if bad.size:  # the per-action check names the env and the value
                self._check_actions({int(bad[0]): arr[int(bad[0])]})
        elif np.dtype(space.dtype).kind in "iu" and arr.dtype.kind == "f":
            raise TypeError(f"step_batch() actions have dtype {arr.dtype}; {space} takes integers")
        return arr

    def _reset_on_done_mask(self) -> np.ndarray:
        if not self._auto_reset:
            return np.zeros(self._env_num, dtype=np.int64)
        counts = np.fromiter(self._env_episode_count.values(), dtype=np.float64, count=self._env_num)
        return (counts + 1 < self._episode_num).astype(np.int64)

    def _dispatch_step(self, actions: Mapping[int, Any]) -> tuple[list[int], dict[int, WorkerFault]]:
        """Write actions and step flags to shared memory and wake the workers involved."""
        buffers = self._buffers
        assert buffers is not None
        control = buffers.control
        worker_of = self._worker_of
        workers = sorted({worker_of[env_id] for env_id in actions})
        for w in workers:
            control[self._group_rows[w], CONTROL_STEP] = 0
        ids = np.fromiter(actions, dtype=np.intp, count=len(actions))
        if buffers.action is not None:  # one write of every action
            buffers.action[ids] = np.asarray(list(actions.values()), dtype=buffers.action.dtype).reshape(
                (len(ids), *buffers.action.shape[1:])
            )
        control[ids, CONTROL_STEP] = 1
        control[ids, CONTROL_RESET_ON_DONE] = self._reset_on_done_mask()[ids]
        faults: dict[int, WorkerFault] = {}
        for w in workers:
            if buffers.action is None:
                mine = {i: a for i, a in actions.items() if self._worker_of[i] == w}
                fault = self._send(w, pickle.dumps(Command(CommandKind.ACTIONS, mine)))
                reply = fault or self._collect([w], self._step_timeout)[w]
                if isinstance(reply, WorkerFault):
                    faults[w] = reply
                    continue
            fault = self._send(w, self._step_message(w))
            if fault is not None:
                faults[w] = fault
        return [w for w in workers if w not in faults], faults

    def _step_message(self, w: int) -> bytes:
        """The wake-up byte, or with private buffers this worker's control and action rows as raw bytes."""
        buffers = self._buffers
        assert buffers is not None
        if buffers.layout.shared:
            return STEP
        return pack_request(buffers, self._group_rows[w])

    def _decode(self, w: int, reply: bytes) -> StepReply:
        """A worker's step or reset reply; with private buffers its result rows are copied in."""
        if reply == OK:
            return StepReply()
        if reply[:1] == RAW_REPLY:
            assert self._buffers is not None
            reply = unpack_reply(reply, self._buffers, self._group_rows[w])
            if reply == OK:
                return StepReply()
        result: StepReply = pickle.loads(reply)
        return self._adopt(result)

    def _adopt(self, result: StepReply) -> StepReply:
        """Keep the observations and rewards a reply carries (pickled layouts); call after its rows are in."""
        if result.steps:
            assert self._buffers is not None
            flags = self._buffers.flags
            for env_id, (obs, reward) in result.steps.items():
                self._pickled_reward[env_id] = reward
                (self._pickled_final if flags[env_id, FLAG_DONE] else self._pickled_ready)[env_id] = obs
        if result.ready:
            self._pickled_ready.update(result.ready)
        return result

    # ----- asynchronous API hooks (see ding.envs.env_manager.async_api) ----------------------------
    def _worker_key(self, env_id: int) -> int:
        return self._worker_of[env_id]

    def _async_dispatch(self, actions: Mapping[int, Any]) -> None:
        """Write the actions and wake their workers; replies are gathered by ``_async_receive``."""
        sent, faults = self._dispatch_step(actions)
        now = time.monotonic()
        for w in sent:
            self._sent_at[w] = now
        for w, fault in faults.items():
            self._sent_at[w] = now
            self._send_faults[w] = fault

    def _async_receive(
        self, pending: Mapping[int, Any], wanted: int, timeout: float | None
    ) -> dict[int, BaseEnvTimestep]:
        """Gather replies until ``wanted`` envs have theirs; a worker past ``step_timeout`` becomes a fault."""
        by_worker, replies = self._await_replies(pending, wanted, timeout)
        return self._gather({i: a for w in replies for i, a in by_worker[w].items()}, replies)

    def _async_receive_batch(
        self, pending: Mapping[int, Any], wanted: int, timeout: float | None
    ) -> BatchTimestep | dict[int, BaseEnvTimestep]:
        """:meth:`_async_receive`, as a batch read from the buffers at once when no env failed."""
        by_worker, replies = self._await_replies(pending, wanted, timeout)
        actions = {i: a for w in replies for i, a in by_worker[w].items()}
        assert self._layout is not None
        if self._layout.pickled:
            return self._gather(actions, replies)
        infos = self._infos_without_failures(replies)
        if infos is None:  # rare: the per-env path handles faults
            return self._gather(actions, replies)
        return self._batch_of(sorted(actions), infos)

    def _await_replies(
        self, pending: Mapping[int, Any], wanted: int, timeout: float | None
    ) -> tuple[dict[int, dict[int, Any]], dict[int, bytes | WorkerFault]]:
        """The envs in flight by worker, and the replies of the workers that answered (or faulted) in time."""
        by_worker: dict[int, dict[int, Any]] = {}
        for env_id, action in pending.items():
            by_worker.setdefault(self._worker_of[env_id], {})[env_id] = action
        replies: dict[int, bytes | WorkerFault] = {
            w: self._send_faults.pop(w) for w in by_worker if w in self._send_faults
        }
        start = time.monotonic()
        while True:
            got = sum(len(by_worker[w]) for w in replies)
            waiting = [w for w in by_worker if w not in replies]
            if not waiting or got >= wanted:
                break
            if timeout is None and got + sum(len(by_worker[w]) for w in waiting) <= wanted:
                replies.update(self._collect(waiting, self._step_timeout, spin=True))  # every one: the step's path
                break
            now = time.monotonic()
            budget = None if timeout is None else timeout - (now - start)
            if budget is not None and budget <= 0:
                if got:
                    break
                raise WorkerTimeoutError(f"recv() got no result within {timeout} s; envs in flight: {sorted(pending)}")
            limits = [] if budget is None else [budget]
            if self._step_timeout is not None:
                limits.append(min(self._sent_at[w] for w in waiting) + self._step_timeout - now)
            answered = self._answered(waiting, max(0.0, min(limits)) if limits else None)
            if answered:
                replies.update(self._collect(answered, self._step_timeout))
            elif self._step_timeout is not None:
                now = time.monotonic()
                overdue = [w for w in waiting if now - self._sent_at[w] >= self._step_timeout]
                replies.update(self._collect(overdue, 0.0))
        for w in replies:
            self._sent_at.pop(w, None)
        return by_worker, replies

    def _answered(self, workers: Sequence[int], timeout: float | None) -> list[int]:
        """The workers among ``workers`` whose reply (or death) is in, waiting up to ``timeout`` for one."""
        waitables: dict[Any, int] = {}
        for w in workers:
            handle = self._workers[w]
            assert handle is not None
            waitables[handle.conn] = w
            waitables[handle.process.sentinel] = w
        ready = connection.wait(list(waitables), timeout)
        return sorted({waitables[obj] for obj in ready})

    def _step_envs(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        sent, faults = self._dispatch_step(actions)
        replies: dict[int, bytes | WorkerFault] = {**faults, **self._collect(sent, self._step_timeout, spin=True)}
        return self._gather(actions, replies)

    def _gather(
        self, actions: Mapping[int, Any], replies: Mapping[int, bytes | WorkerFault]
    ) -> dict[int, BaseEnvTimestep]:
        timesteps: dict[int, BaseEnvTimestep] = {}
        for w, reply in sorted(replies.items()):
            stepped = [env_id for env_id in self._groups[w] if env_id in actions]
            if isinstance(reply, WorkerFault):
                timesteps.update(self._worker_fault(w, reply, stepped))
                continue
            result = self._decode(w, reply)
            if not result.failures and self._copy_on_get:
                timesteps.update(self._timesteps(stepped, result.infos))
                continue
            for env_id in stepped:
                failure = result.failures.get(env_id)
                if failure is not None and failure.operation == "step":
                    timesteps[env_id] = self._abnormal(env_id, _failure_error(failure))
                    continue
                timesteps[env_id] = self._timestep(env_id, result.infos.get(env_id, {}))
                if failure is not None:  # the step finished its episode but the automatic reset failed
                    self._recover(env_id, _failure_error(failure))
        return timesteps

    def _timesteps(self, env_ids: list[int], infos: Mapping[int, dict[str, Any]]) -> dict[int, BaseEnvTimestep]:
        """Timesteps of several envs read with one copy per buffer (the per-step hot path)."""
        buffers, layout = self._buffers, self._layout
        assert buffers is not None and layout is not None
        flags = buffers.flags[env_ids].tolist()
        rewards = buffers.reward[env_ids]
        if len(layout.obs_paths) != 1 or layout.obs_paths[0]:
            return {env_id: self._timestep(env_id, infos.get(env_id, {})) for env_id in env_ids}
        ready = buffers.ready[0][env_ids]
        final = buffers.final[0][env_ids] if any(row[FLAG_DONE] for row in flags) else ready
        out = {}
        for j, env_id in enumerate(env_ids):
            done, terminated, truncated, _ = flags[j]
            obs = final[j] if done else ready[j]
            out[env_id] = BaseEnvTimestep(
                obs, rewards[j], done, infos.get(env_id, {}), terminated=terminated, truncated=truncated
            )
        return out

    def _timestep(self, env_id: int, info: dict[str, Any]) -> BaseEnvTimestep:
        buffers = self._buffers
        assert buffers is not None
        flags = buffers.flags[env_id]
        done = bool(flags[FLAG_DONE])
        obs = self._obs_of(env_id, final=done)
        reward = self._pickled_reward[env_id] if buffers.layout.pickled else buffers.reward[env_id].copy()
        return BaseEnvTimestep(
            obs, reward, done, info, terminated=bool(flags[FLAG_TERMINATED]), truncated=bool(flags[FLAG_TRUNCATED])
        )

    def _worker_fault(self, w: int, fault: WorkerFault, stepped: list[int]) -> dict[int, BaseEnvTimestep]:
        """Restart a dead or hung worker; its stepped envs' episodes end abnormally."""
        timesteps = {env_id: self._abnormal(env_id, fault.error, renew=False) for env_id in stepped}
        self._restart_worker(w)
        for env_id in self._groups[w]:
            if env_id not in stepped and env_id in self._ready_obs:
                self._ready_obs.pop(env_id)
                self._reset_envs({env_id: {}})
        return timesteps

    def _after_step(self, env_id: int, timestep: BaseEnvTimestep) -> None:
        buffers = self._buffers
        assert buffers is not None
        if timestep.done and not timestep.info.get("abnormal", False) and buffers.flags[env_id, FLAG_RESET]:
            self._env_episode_count[env_id] += 1
            self._ready_obs[env_id] = self._obs_of(env_id)
            self._env_states[env_id] = EnvState.RUN
            return
        super()._after_step(env_id, timestep)

    # ----- control commands ----------------------------------------------------------------------
    def _reset_envs(self, params: Mapping[int, dict[str, Any]]) -> None:
        pending = dict(params)
        timeout = reset_wait(self._reset_timeout, self._connect_timeout)
        while pending:
            workers = sorted({self._worker_of[env_id] for env_id in pending})
            for env_id in pending:
                self._env_states[env_id] = EnvState.RESET
            faults: dict[int, bytes | WorkerFault] = {}
            sent = []
            for w in workers:
                mine = {i: kw for i, kw in pending.items() if self._worker_of[i] == w}
                fault = self._send(w, pickle.dumps(Command(CommandKind.RESET, mine), protocol=pickle.HIGHEST_PROTOCOL))
                if fault is not None:
                    faults[w] = fault
                else:
                    sent.append(w)
            replies = {**faults, **self._collect(sent, timeout)}
            retry: dict[int, dict[str, Any]] = {}
            for w, reply in sorted(replies.items()):
                mine = {i: kw for i, kw in pending.items() if self._worker_of[i] == w}
                if isinstance(reply, WorkerFault):
                    retry.update({i: kw for i, kw in mine.items() if self._spend_retry(i, reply.error)})
                    self._restart_worker(w)
                    for env_id in self._groups[w]:  # the restart rebuilt the group's other envs too
                        if env_id not in mine and self._ready_obs.pop(env_id, None) is not None:
                            retry[env_id] = {}
                    continue
                result = self._decode(w, reply)
                for env_id, kwargs in mine.items():
                    if env_id in result.failures:
                        if self._recover(env_id, _failure_error(result.failures[env_id])):
                            retry[env_id] = kwargs
                        continue
                    self._ready_obs[env_id] = self._obs_of(env_id)
                    self._env_states[env_id] = EnvState.RUN
            pending = retry
            if pending:
                self._wait_before_retry()

    def _apply_seeds(self, env_ids: Sequence[int] | None = None) -> None:
        ids = [i for i in (env_ids if env_ids is not None else range(self._env_num)) if i in self._seeds]
        for w in sorted({self._worker_of[i] for i in ids}):
            mine = {i: (self._seeds[i], self._dynamic_seed) for i in ids if self._worker_of[i] == w}
            self._request(w, Command(CommandKind.SEED, mine))

    def _apply_replay(self, env_ids: Sequence[int] | None = None) -> None:
        assert self._replay_dirs is not None
        ids = list(env_ids if env_ids is not None else range(self._env_num))
        for w in sorted({self._worker_of[i] for i in ids}):
            mine = {i: self._replay_dirs[i] for i in ids if self._worker_of[i] == w}
            self._request(w, Command(CommandKind.REPLAY, mine))

    def _renew_env(self, env_id: int) -> None:
        result: StepReply = self._request(self._worker_of[env_id], Command(CommandKind.RENEW, [env_id]))
        if result.failures:
            failure = next(iter(result.failures.values()))
            self.close()
            raise _failure_error(failure)

    def _describe_all(self, name: str) -> dict[int, tuple[Any, ...]]:
        described: dict[int, tuple[Any, ...]] = {}
        for w in range(len(self._groups)):
            described.update(self._request(w, Command(CommandKind.GETATTR, name)))
        return described

    def _call_envs(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], env_ids: Sequence[int] | None
    ) -> dict[int, Any]:
        ids = list(range(self._env_num) if env_ids is None else env_ids)
        results: dict[int, Any] = {}
        for w in sorted({self._worker_of[i] for i in ids}):
            mine = [i for i in ids if self._worker_of[i] == w]
            results.update(self._request(w, Command(CommandKind.CALL, (name, args, kwargs, mine))))
        return results
