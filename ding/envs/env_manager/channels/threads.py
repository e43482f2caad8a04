"""Env groups stepped in threads of the calling process (manager type ``thread``).

For simulators that release the GIL while they step (MuJoCo, many C++ or GPU simulators) threads step groups in
parallel without a process per group: no pickling of constructors, no process start, and the envs' memory is
shared with the caller. Each group's thread runs the same :class:`~ding.envs.env_manager.core.worker.Worker` as a
worker process (on the same shared-memory rows), answering the core's messages through queues. What threads give
up: a crash in env code is a crash of the caller (an exception is still caught per env), and a thread stuck in a
step cannot be killed: past ``step_timeout`` its group is abandoned (the thread keeps running as a daemon until the
call returns) and a new thread with new envs takes the group.

An abandoned thread must not touch the group's rows again, which the new thread's envs now use: its attachment to
the step buffers is revoked (:meth:`~ding.envs.env_manager.core.shm.SharedBuffers.revoke`), so when its env call
returns at last it writes into private memory nobody reads, and its reply, tagged with an old generation, is
dropped and counted (:attr:`ThreadChannel.late_replies`).
"""

from __future__ import annotations

import contextlib
import pickle
import queue
import threading
import time
from collections.abc import Callable, Sequence

import cloudpickle

from ding.envs.env_manager.core.channel import Reply, WorkerSetup
from ding.envs.env_manager.core.codec import TRUSTED, Codec
from ding.envs.env_manager.core.commands import Command, CommandKind
from ding.envs.env_manager.core.failure import Failure
from ding.envs.env_manager.core.spin import SpinBudget
from ding.envs.env_manager.core.worker import Worker

CLOSE_GRACE = 5.0
"""Seconds ``close`` waits for each thread to close its envs."""


class _GroupThread:
    """One group's thread, its inbox, the generation its replies are tagged with, and its worker once built."""

    def __init__(self, setup: WorkerSetup, generation: int, serve: Callable[[WorkerSetup, _GroupThread], None]):
        self.inbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.generation = generation
        self.worker: Worker | None = None
        self.abandoned = False
        name = f"ding-env-thread-{setup.index}"
        self.thread = threading.Thread(target=serve, args=(setup, self), name=name, daemon=True)

    def abandon(self) -> None:
        """Give the thread up: it may go on running env code, but no longer reaches the step buffers."""
        self.abandoned = True
        self.cut_off()

    def cut_off(self) -> None:
        worker = self.worker
        if worker is not None and worker.buffers is not None:
            worker.buffers.revoke()


class ThreadChannel:
    """One thread per env group; replies come back on one queue, tagged with the group and its generation."""

    codec: Codec = TRUSTED  # threads of the trainer itself

    def __init__(self) -> None:
        self.groups: list[_GroupThread | None] = []
        self.replies: queue.SimpleQueue[tuple[int, int, Reply]] = queue.SimpleQueue()
        self.arrived: dict[int, list[Reply]] = {}  # replies taken off the queue, not yet received, by group
        self.generations = 0
        self.late_replies = 0
        """Replies of abandoned threads (an old generation), dropped."""

    def open(self, group_count: int) -> None:
        if len(self.groups) != group_count:
            self.groups = [None] * group_count

    def start(self, setup: WorkerSetup) -> None:
        self.generations += 1
        group = _GroupThread(setup, self.generations, self._serve)
        self.groups[setup.index] = group
        self.arrived.pop(setup.index, None)
        group.thread.start()

    def _serve(self, setup: WorkerSetup, group: _GroupThread) -> None:
        w, inbox, generation = setup.index, group.inbox, group.generation
        try:
            worker = group.worker = Worker(setup.env_ids, cloudpickle.loads(setup.env_fns_blob))
            self.replies.put((w, generation, worker.start(setup.layout)))
        except BaseException as exc:  # the core sees a broken group rather than a silent one
            self.replies.put((w, generation, Failure.broken(f"env thread {w} could not start: {exc!r}")))
            return
        while True:
            message = inbox.get()
            if message is None:
                worker.close()
                return
            try:
                reply = worker.respond(message)
            except BaseException as exc:  # Worker catches env errors; this is a fault of the thread itself
                self.replies.put((w, generation, Failure.died(f"env thread {w} failed: {exc!r}")))
                return
            if group.abandoned:  # given up on while it ran (it may have attached since): cut off again, and stop
                group.cut_off()
                if reply is not None:
                    self.replies.put((w, generation, reply))  # counted and dropped as late
                worker.close()
                return
            if reply is None:  # the worker closed its envs
                return
            self.replies.put((w, generation, reply))

    def send(self, w: int, message: bytes) -> Failure | None:
        group = self.groups[w]
        if group is None or not group.thread.is_alive():
            return Failure.died(f"env thread {w} is not running")
        group.inbox.put(message)
        return None

    def _drain(self, timeout: float | None) -> bool:
        """Move replies from the queue to ``arrived`` (dropping stale generations); wait up to ``timeout`` for one."""
        try:
            item = self.replies.get(timeout=timeout) if timeout != 0 else self.replies.get_nowait()
        except queue.Empty:
            return False
        while True:
            w, generation, reply = item
            group = self.groups[w] if w < len(self.groups) else None
            if group is not None and group.generation == generation:
                self.arrived.setdefault(w, []).append(reply)
            else:
                self.late_replies += 1
            try:
                item = self.replies.get_nowait()
            except queue.Empty:
                return True

    def _ready(self, workers: Sequence[int]) -> list[int]:
        ready = []
        for w in workers:
            group = self.groups[w]
            if self.arrived.get(w) or group is None or not group.thread.is_alive():
                ready.append(w)
        return ready

    def handed_over(self, quick: bool) -> None:
        """Nothing to do: the worker threads get the GIL when the caller waits, or at the interpreter's switch
        interval."""

    def poll(self, workers: Sequence[int], timeout: float | None) -> list[int]:
        deadline = None if timeout is None else time.monotonic() + timeout
        self._drain(0)
        while not (ready := self._ready(workers)):
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return []
            self._drain(remaining)
        return sorted(ready)

    def receive(
        self, workers: Sequence[int], timeout: float | None, spin: SpinBudget | None = None
    ) -> dict[int, Reply]:
        results: dict[int, Reply] = {}
        deadline = None if timeout is None else time.monotonic() + timeout
        waiting = list(workers)
        self._drain(0)
        while waiting:
            for w in list(waiting):
                if self.arrived.get(w):
                    results[w] = self.arrived[w].pop(0)
                    waiting.remove(w)
                elif (group := self.groups[w]) is None or not group.thread.is_alive():
                    results[w] = Failure.died(f"env thread {w} has ended")
                    waiting.remove(w)
            if not waiting:
                break
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                for w in waiting:
                    results[w] = Failure.timeout(f"env thread {w} did not answer within {timeout} s")
                break
            self._drain(remaining)
        return results

    def stop(self, w: int) -> None:
        """Drop group ``w``'s thread: asked to close its envs if it is idle; a stuck one is abandoned (a daemon)."""
        group = self.groups[w] if w < len(self.groups) else None
        if group is None:
            return
        self.groups[w] = None
        self.arrived.pop(w, None)
        group.abandon()
        group.inbox.put(None)

    def close(self) -> None:
        groups = [g for g in self.groups if g is not None]
        message = pickle.dumps(Command(CommandKind.CLOSE))
        for group in groups:
            group.inbox.put(message)
            group.inbox.put(None)
        deadline = time.monotonic() + CLOSE_GRACE
        for group in groups:
            with contextlib.suppress(RuntimeError):
                group.thread.join(max(0.0, deadline - time.monotonic()))
        self.groups = [None] * len(self.groups)
        self.arrived = {}

    def pids(self) -> list[int | None]:
        """None for every group: the envs live in the calling process, in no worker process of their own."""
        return [None] * len(self.groups)
