"""Steps in flight on the batch core's workers: partial batches (``wait_num``) and the send / recv API.

Two ways to leave steps in flight share the waiting here:

- **partial batches** (managers with ``partial_batches``, e.g. ``async_subprocess``; zmq and Ray with a finite
  ``wait_num``): ``step`` returns once ``wait_num`` envs have results, or ``step_wait_timeout`` after the first;
  the others stay in flight and a later ``step`` delivers them, exactly once. While in flight an env (and every
  env sharing its worker) takes no action; ``step({})`` only collects. A step that would leave nothing to act on
  while envs are in flight waits for one more result (as DI-engine's does).
- **send / recv** (:mod:`ding.envs.env_manager.send_recv`): ``send`` wakes the workers and returns; ``recv``
  gathers the first ``batch_size`` envs to finish.

Either way a worker past ``step_timeout`` becomes a :class:`Failure`, as in ``step``. :class:`InFlight` keeps what
is in flight and waits for replies; the core (:mod:`.batch_core`) reads them into timesteps.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ding.envs.env_manager.core.channel import Reply
from ding.envs.env_manager.core.failure import Failure
from ding.envs.env_manager.core.groups import EnvGroups
from ding.envs.env_manager.core.link import WorkerLink
from ding.envs.env_manager.settings import ManagerSettings
from ding.errors import EnvManagerError, ManagerStateError, WorkerTimeoutError


class InFlight:
    """What the workers are stepping, by worker, and the waits for their replies (see the module docstring)."""

    def __init__(self, link: WorkerLink, groups: EnvGroups, settings: ManagerSettings, partial: bool) -> None:
        self._link, self._groups, self._settings = link, groups, settings
        self.partial = partial
        """Whether ``step`` returns partial batches (a finite ``wait_num`` on a manager that offers them)."""
        self._stepping: dict[int, tuple[float, dict[int, Any]]] = {}  # partial: worker -> (sent at, its actions)
        self._sent_at: dict[int, float] = {}  # send / recv: worker -> when send() woke it
        self._send_faults: dict[int, Failure] = {}  # send / recv: worker -> the failure send() met waking it
        self.quickest_reply = math.inf
        """send / recv: how soon after its ``send`` the newest-sent reply of a ``recv`` typically came (seconds;
        infinite until a ``recv`` has said)."""

    def clear(self) -> None:
        """The workers stop with the manager: no step is in flight any more."""
        self._stepping.clear()
        self._sent_at.clear()
        self._send_faults.clear()

    def check_idle(self, w: int, operation: str) -> None:
        """Control commands wait for no step: refuse one while worker ``w`` steps envs."""
        if w in self._sent_at:
            raise EnvManagerError(
                f"envs {self._groups.groups[w]} have a step in flight from send(); recv() it before {operation!r}"
            )
        if w in self._stepping:
            raise EnvManagerError(
                f"envs {self._groups.groups[w]} have a step in flight; collect its results with step({{}}) before "
                f"{operation!r}"
            )

    # ----- partial batches -----------------------------------------------------------------------
    @property
    def env_ids(self) -> Sequence[int]:
        """Envs stepped by an earlier ``step`` whose results have not been delivered yet."""
        if not self._stepping:
            return ()
        return sorted(i for _, actions in self._stepping.values() for i in actions)

    @property
    def stepping(self) -> bool:
        return bool(self._stepping)

    def started(self, workers: Sequence[int], actions: Mapping[int, Any]) -> None:
        """``workers`` were sent the step of ``actions`` (checked, by env id) just now."""
        now = time.monotonic()
        worker_of = self._groups.worker_of
        for w in workers:
            self._stepping[w] = (now, {i: a for i, a in actions.items() if worker_of[i] == w})

    def wait_partial(
        self, early: Mapping[int, Reply], wait_num: int, wait_timeout: float | None
    ) -> dict[int, tuple[dict[int, Any], Reply]]:
        """Wait until workers holding ``wait_num`` envs in flight answered (``wait_timeout`` caps the wait once one
        has); returns each answered worker's actions and reply (``early``: replies already in), out of flight."""
        start = time.monotonic()
        step_timeout = self._settings.step_timeout
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
            step_deadline = min(self._stepping[w][0] for w in pending) + (step_timeout or 1e9) - now
            timeout = max(0.0, step_deadline if budget is None or got == 0 else min(budget, step_deadline))
            sent_at = {w: self._stepping[w][0] for w in pending}
            replies.update(self._receive_any(pending, timeout, sent_at))
        return {w: (self._stepping.pop(w)[1], reply) for w, reply in replies.items()}

    def take(self, workers: Sequence[int]) -> dict[int, dict[int, Any]]:
        """Take the steps of ``workers`` out of flight (their replies are awaited elsewhere): actions by worker."""
        return {w: self._stepping.pop(w)[1] for w in workers if w in self._stepping}

    # ----- send / recv ---------------------------------------------------------------------------
    def sent(self, workers: Sequence[int], faults: Mapping[int, Failure]) -> None:
        """``send`` woke ``workers``; ``faults``: the workers it could not wake, with why."""
        now = time.monotonic()
        for w in workers:
            self._sent_at[w] = now
        for w, fault in faults.items():
            self._sent_at[w] = now
            self._send_faults[w] = fault

    def refuse_send(self) -> None:
        """``send`` waits for no partial step: refuse one while envs are in flight from ``step``."""
        if self._stepping:
            raise ManagerStateError(
                f"send() cannot run while envs {list(self.env_ids)} are in flight from step(); collect them "
                "with step({}) first"
            )

    def await_replies(
        self, pending: Mapping[int, Any], wanted: int, timeout: float | None
    ) -> tuple[dict[int, dict[int, Any]], dict[int, Reply]]:
        """The envs sent by worker, and the replies of the workers that answered (or failed) in time."""
        by_worker = self._groups.by_worker(pending)
        replies: dict[int, Reply] = {w: self._send_faults.pop(w) for w in by_worker if w in self._send_faults}
        step_timeout = self._settings.step_timeout
        start = time.monotonic()
        while True:
            got = sum(len(by_worker[w]) for w in replies)
            waiting = [w for w in by_worker if w not in replies]
            if not waiting or got >= wanted:
                break
            if timeout is None and got + sum(len(by_worker[w]) for w in waiting) <= wanted:
                replies.update(self._link.collect(waiting, step_timeout, spin=True))  # every one: the step's path
                break
            now = time.monotonic()
            budget = None if timeout is None else timeout - (now - start)
            if budget is not None and budget <= 0:
                if got:
                    break
                raise WorkerTimeoutError(f"recv() got no result within {timeout} s; envs in flight: {sorted(pending)}")
            limits = [] if budget is None else [budget]
            if step_timeout is not None:
                limits.append(min(self._sent_at[w] for w in waiting) + step_timeout - now)
            replies.update(self._receive_any(waiting, max(0.0, min(limits)) if limits else None, self._sent_at))
        sent = [self._sent_at.pop(w) for w in replies if w in self._sent_at]
        if sent:
            latest = time.monotonic() - max(sent)
            known = self.quickest_reply != math.inf
            self.quickest_reply = 0.8 * self.quickest_reply + 0.2 * latest if known else latest
        return by_worker, replies

    def _receive_any(
        self, workers: Sequence[int], timeout: float | None, sent_at: Mapping[int, float]
    ) -> dict[int, Reply]:
        """Replies of whichever workers answer within ``timeout``; workers past ``step_timeout`` become failures."""
        link, step_timeout = self._link, self._settings.step_timeout
        answered = link.poll(workers, timeout)
        if answered:
            return link.collect(answered, step_timeout)
        if step_timeout is None:
            return {}
        now = time.monotonic()
        return link.collect([w for w in workers if now - sent_at[w] >= step_timeout], 0.0)
