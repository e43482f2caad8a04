"""Stepping one env group in the calling process while workers step the others (``step_in_caller=True``).

On 2 cores with 2 env groups, a batch otherwise costs a wake-up of each worker and the caller idles meanwhile;
with this option the caller wakes the workers of the other groups, steps its own group itself (on the same
shared-memory rows, through the same :class:`~ding.envs.env_manager.core.worker.Worker`), then gathers the others'
answers. Nothing changes for the batch's results. What the caller's group gives up: ``step_timeout`` (its envs run
in the caller's thread, so a hang hangs the caller) and isolation (a crash in its env code is a crash of the
caller; an exception is still caught per env, as in a worker).
"""

from __future__ import annotations

from collections.abc import Sequence

import cloudpickle

from ding.envs.env_manager.core.channel import Channel, Reply, WorkerSetup
from ding.envs.env_manager.core.failure import Failure
from ding.envs.env_manager.core.shm import BufferLayout
from ding.envs.env_manager.core.spin import SpinBudget
from ding.envs.env_manager.core.worker import Worker


class InCallerChannel:
    """Group ``0`` runs here; every other group goes through ``workers`` (another channel).

    A message to group 0 is answered when it is received, so the other groups' workers, woken first, step
    while the caller steps group 0.
    """

    def __init__(self, workers: Channel) -> None:
        self.workers = workers
        self.codec = workers.codec  # group 0 answers as the other groups' workers do
        self.worker: Worker | None = None
        self.pending: list[bytes] = []  # group 0's messages not answered yet, in order
        self.layout: BufferLayout | None = None

    @property
    def late_replies(self) -> int:
        return self.workers.late_replies  # group 0 answers in the caller's thread: never late

    def open(self, group_count: int) -> None:
        self.workers.open(group_count)

    def start(self, setup: WorkerSetup) -> None:
        if setup.index != 0:
            self.workers.start(setup)
            return
        self.worker = Worker(setup.env_ids, cloudpickle.loads(setup.env_fns_blob), self.codec)
        self.layout = setup.layout
        self.pending = [b""]  # the startup, answered at the first receive

    def send(self, w: int, message: bytes) -> Failure | None:
        if w != 0:
            return self.workers.send(w, message)
        if self.worker is None:
            return Failure.died("env group 0 (stepped in the calling process) is closed")
        self.pending.append(message)
        return None

    def handed_over(self, quick: bool) -> None:
        """As the workers' channel does (the caller's own group is stepped when it is received)."""
        self.workers.handed_over(quick)

    def poll(self, workers: Sequence[int], timeout: float | None) -> list[int]:
        others = [w for w in workers if w != 0]
        if 0 in workers and self.pending:  # answered as soon as it is received; with it, whoever is in already
            return [0, *(self.workers.poll(others, 0.0) if others else [])]
        return self.workers.poll(others, timeout)

    def receive(
        self, workers: Sequence[int], timeout: float | None, spin: SpinBudget | None = None
    ) -> dict[int, Reply]:
        replies: dict[int, Reply] = {}
        if 0 in workers:
            replies[0] = self._answer()
        others = [w for w in workers if w != 0]
        if others:
            replies.update(self.workers.receive(others, timeout, spin))
        return replies

    def _answer(self) -> Reply:
        worker = self.worker
        if worker is None or not self.pending:
            return Failure.broken("env group 0 (stepped in the calling process) has no message to answer")
        message = self.pending.pop(0)
        if not message:
            return worker.start(self.layout)
        reply = worker.respond(message)
        return reply if reply is not None else Failure.died("env group 0 was closed")

    def stop(self, w: int) -> None:
        if w != 0:
            self.workers.stop(w)
            return
        worker, self.worker, self.pending = self.worker, None, []
        if worker is not None:
            worker.close()

    def close(self) -> None:
        try:
            self.stop(0)
        finally:
            self.workers.close()

    def pids(self) -> list[int | None]:
        pids = self.workers.pids()
        return [None, *pids[1:]]  # group 0 has no worker process: the caller steps it
