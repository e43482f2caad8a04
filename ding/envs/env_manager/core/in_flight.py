"""Envs stepped but not received yet: partial batches (``wait_num``) and the send / recv API, over any channel.

Two ways to leave steps in flight share one receive loop here:

- **partial batches** (managers with ``partial_batches``, e.g. ``async_subprocess``; zmq and Ray with a finite
  ``wait_num``): ``step`` returns once ``wait_num`` envs have results, or ``step_wait_timeout`` after the first;
  the others stay in flight and a later ``step`` delivers them, exactly once. While in flight an env (and every
  env sharing its worker) is not in ``ready_obs``; ``step({})`` only collects. A step that would leave nothing
  to act on while envs are in flight waits for one more result (as DI-engine's does).
- **send / recv** (:mod:`ding.envs.env_manager.async_api`): ``send`` wakes the workers and returns; ``recv``
  gathers the first ``batch_size`` envs to finish.

Either way a worker past ``step_timeout`` becomes a :class:`Failure`, as in ``step``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ding.envs.env_manager import async_api
from ding.envs.env_manager.batch import BatchTimestep, ObsBatch
from ding.envs.env_manager.core.channel import Reply
from ding.envs.env_manager.core.failure import Failure
from ding.envs.env_manager.core.step_path import StepPath
from ding.envs.env_manager.state import EnvState
from ding.envs.timestep import BaseEnvTimestep
from ding.errors import EnvManagerError, ManagerStateError, WorkerTimeoutError


class InFlight(StepPath):
    """In-flight steps of :class:`~ding.envs.env_manager.core.batch_core.BatchCore` (see the module docstring)."""

    def _init_in_flight(self) -> None:
        self._partial = self.partial_batches and self._wait_num not in (None, math.inf)
        """Whether ``step`` returns partial batches (a finite ``wait_num`` on a manager that offers them)."""
        self._stepping: dict[int, tuple[float, dict[int, Any]]] = {}  # partial: worker -> (sent at, its actions)
        self._sent_at: dict[int, float] = {}  # send / recv: worker -> when send() woke it
        self._send_faults: dict[int, Failure] = {}  # send / recv: worker -> the failure send() met waking it

    def _clear_in_flight(self) -> None:
        for pending in (
            getattr(self, "_stepping", {}),
            getattr(self, "_sent_at", {}),
            getattr(self, "_send_faults", {}),
        ):
            pending.clear()

    def _check_no_step_in_flight(self, w: int, operation: str) -> None:
        """Control commands wait for no step: refuse one while worker ``w`` steps envs."""
        if w in self._sent_at:
            raise EnvManagerError(
                f"envs {self._groups[w]} have a step in flight from send(); recv() it before {operation!r}"
            )
        if w in getattr(self, "_stepping", {}):
            raise EnvManagerError(
                f"envs {self._groups[w]} have a step in flight; collect its results with step({{}}) before "
                f"{operation!r}"
            )

    # ----- partial batches -----------------------------------------------------------------------
    @property
    def ready_obs_id(self) -> list[int]:
        ids = super().ready_obs_id
        if self._stepping:
            return [i for i in ids if self._worker_of[i] not in self._stepping]
        return ids

    @property
    def in_flight_env_ids(self) -> list[int]:
        """Envs stepped by an earlier ``step`` whose results have not been delivered yet."""
        return sorted(i for _, actions in self._stepping.values() for i in actions)

    @property
    def done(self) -> bool:
        return not self._stepping and super().done

    def ready_obs_batch(self) -> ObsBatch:
        if self._stepping:
            raise EnvManagerError("ready_obs_batch is only available when no env is in flight")
        return super().ready_obs_batch()

    def step(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        """Step the envs named in ``actions``; with partial batches return what is in after ``step_wait_timeout``.

        With partial batches an empty ``actions`` only collects results of envs already in flight.
        """
        if not self._partial:
            return super().step(actions)
        self._check_launched()
        async_api.check_idle(self, "step")
        early: dict[int, Reply] = {}
        if actions:
            busy = [i for i in actions if isinstance(i, int) and self._worker_of.get(i) in self._stepping]
            if busy:
                raise ValueError(
                    f"envs {busy} are still in flight (their worker has not answered); ready: {self.ready_obs_id}"
                )
            checked = self._check_actions(actions)
            sent, faults = self._dispatch_step(checked)
            now = time.monotonic()
            for w in [*sent, *faults]:
                self._stepping[w] = (now, {i: a for i, a in checked.items() if self._worker_of[i] == w})
            for env_id in checked:
                self._ready_obs.pop(env_id, None)
            early = dict(faults)
        elif not self._stepping:
            raise ValueError(f"step() got no actions and no env is in flight; ready env ids: {self.ready_obs_id}")
        in_flight = len(self.in_flight_env_ids)
        wanted = in_flight if self._wait_num in (None, math.inf) else int(self._wait_num)
        timesteps = self._receive_partial(early, min(wanted, in_flight), self._step_wait_timeout)
        while self._stepping and not self.ready_obs_id:  # nothing to act on: wait for one more result
            timesteps.update(self._receive_partial({}, 1, None))
        self._raise_fatal()
        return timesteps

    def _receive_partial(
        self, early: dict[int, Reply], wait_num: int, wait_timeout: float | None
    ) -> dict[int, BaseEnvTimestep]:
        """Collect results until ``wait_num`` envs have them (``wait_timeout`` caps the wait once one has)."""
        start = time.monotonic()
        replies: dict[int, Reply] = dict(early)
        while True:
            got = sum(len(self._stepping[w][1]) for w in replies)
            pending = [w for w in self._stepping if w not in replies]
            if not pending or got >= wait_num:
                break
            now = time.monotonic()
            budget = None if wait_timeout is None else wait_timeout - (now - start)
            if budget is not None and budget <= 0 and got > 0:
                break
            step_deadline = min(self._stepping[w][0] for w in pending) + (self._step_timeout or 1e9) - now
            timeout = max(0.0, step_deadline if budget is None or got == 0 else min(budget, step_deadline))
            sent_at = {w: self._stepping[w][0] for w in pending}
            replies.update(self._receive_any(pending, timeout, sent_at))
        timesteps: dict[int, BaseEnvTimestep] = {}
        for w, reply in replies.items():
            _, actions = self._stepping.pop(w)
            timesteps.update(self._gather(actions, {w: reply}))
        for env_id, timestep in timesteps.items():
            if env_id in self._failures and not timestep.info.get("abnormal", False):
                del self._failures[env_id]
            self._after_step(env_id, timestep)
        return timesteps

    def _receive_any(
        self, workers: Sequence[int], timeout: float | None, sent_at: Mapping[int, float]
    ) -> dict[int, Reply]:
        """Replies of whichever workers answer within ``timeout``; workers past ``step_timeout`` become failures."""
        answered = self.channel.poll(workers, timeout)
        if answered:
            return self._collect(answered, self._step_timeout)
        if self._step_timeout is None:
            return {}
        now = time.monotonic()
        return self._collect([w for w in workers if now - sent_at[w] >= self._step_timeout], 0.0)

    def _drain_partial(self, env_ids: Sequence[int]) -> None:
        """Wait for in-flight steps of the workers holding ``env_ids``; their results are discarded as lost."""
        for w in sorted({self._worker_of[i] for i in env_ids}):
            if w in self._stepping:
                _, actions = self._stepping.pop(w)
                reply = self._collect([w], self._step_timeout)[w]
                for env_id, timestep in self._gather(actions, {w: reply}).items():
                    if timestep.done:
                        self._env_states[env_id] = EnvState.RESET

    # ----- send / recv (hooks of ding.envs.env_manager.async_api) -------------------------------------
    def _worker_key(self, env_id: int) -> int:
        return self._worker_of[env_id]

    def _async_dispatch(self, actions: Mapping[int, Any]) -> None:
        """Write the actions and wake their workers; replies are gathered by ``_async_receive``."""
        if self._stepping:
            raise ManagerStateError(
                f"send() cannot run while envs {self.in_flight_env_ids} are in flight from step(); collect them "
                "with step({}) first"
            )
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
        """Gather replies until ``wanted`` envs have theirs; a worker past ``step_timeout`` becomes a failure."""
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
    ) -> tuple[dict[int, dict[int, Any]], dict[int, Reply]]:
        """The envs in flight by worker, and the replies of the workers that answered (or failed) in time."""
        by_worker: dict[int, dict[int, Any]] = {}
        for env_id, action in pending.items():
            by_worker.setdefault(self._worker_of[env_id], {})[env_id] = action
        replies: dict[int, Reply] = {w: self._send_faults.pop(w) for w in by_worker if w in self._send_faults}
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
            replies.update(self._receive_any(waiting, max(0.0, min(limits)) if limits else None, self._sent_at))
        for w in replies:
            self._sent_at.pop(w, None)
        return by_worker, replies
