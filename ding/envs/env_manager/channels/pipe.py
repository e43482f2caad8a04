"""The pipe channel: one duplex ``multiprocessing`` connection per worker, with the worker's process beside it.

A step needs only its number each way (the data is in shared memory), on the worker's doorbell while both ends are
awake (:mod:`..core.doorbell`), else on the pipe; control commands are pickled. Where the worker runs
is the placement's business: :class:`LocalProcesses` starts ``multiprocessing`` children of this process; the Ray
transport ``shm`` places Ray actors on this node that connect back over a Unix socket
(:mod:`ding.envs.env_manager.channels.ray.actor_pipe`). Either gives a :class:`WorkerHandle`: the connection and
a process-like object whose ``sentinel`` becomes readable when the process ends, so a dead worker is noticed at
once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import pickle
import time
from collections.abc import Callable, Iterable, Sequence
from multiprocessing import connection
from multiprocessing.connection import Connection
from typing import Any, Protocol

from ding.envs.env_manager.channels.affinity import pin, worker_core
from ding.envs.env_manager.core.channel import Reply, WorkerSetup
from ding.envs.env_manager.core.codec import TRUSTED, Codec
from ding.envs.env_manager.core.commands import Command, CommandKind
from ding.envs.env_manager.core.doorbell import DRAIN_AT, Doorbells, supported
from ding.envs.env_manager.core.failure import Failure
from ding.envs.env_manager.core.frames import recv_frame, send_frame
from ding.envs.env_manager.core.spin import CoreYield, SpinBudget, readable
from ding.envs.env_manager.core.worker import worker_main

CLOSE_GRACE = 2.0
"""Seconds a worker gets to close its envs before it is killed."""


class WorkerProcess(Protocol):
    """What the channel uses of a worker's process (a ``multiprocessing`` process, or a Ray actor's)."""

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
    """The parent's side of one worker: its connection and its process."""

    index: int
    env_ids: list[int]
    process: WorkerProcess
    conn: Connection
    kind: str = "worker"

    def describe(self) -> str:
        return f"{self.kind} {self.index} (pid {self.process.pid}, envs {self.env_ids})"

    def death(self) -> Failure:
        """This worker died, with its exit code when known (a Ray actor's process is not the manager's child)."""
        code = self.process.exitcode
        return Failure.died(f"{self.describe()} died" + (f" (exit code {code})" if code is not None else ""))


class PipePlacement(Protocol):
    """Where pipe workers run: starts one and gives its handle; stops one; waits out a closing batch."""

    def open(self, group_count: int) -> None: ...

    def start(self, setup: WorkerSetup) -> WorkerHandle: ...

    def stop(self, handle: WorkerHandle) -> None: ...

    def finish(self, handles: Sequence[WorkerHandle], deadline: float) -> None: ...

    def close(self) -> None: ...


class LocalProcesses:
    """Workers as child processes of this one (``fork``, ``spawn`` or ``forkserver``).

    >>> LocalProcesses("spawn").context.get_start_method()
    'spawn'
    """

    def __init__(self, start_method: str | None, cores: Sequence[int] | None = None) -> None:
        """``cores``: worker ``w`` runs on ``cores[w % len(cores)]`` only (:mod:`.affinity`); None: anywhere."""
        self.context: Any = multiprocessing.get_context(start_method or "fork")
        self.cores = cores

    def open(self, group_count: int) -> None:
        pass

    def start(self, setup: WorkerSetup) -> WorkerHandle:
        parent_conn, child_conn = self.context.Pipe(duplex=True)
        process = self.context.Process(
            target=worker_main,
            args=(
                setup.env_ids,
                setup.env_fns_blob,
                child_conn,
                setup.layout,
                os.getpid(),
                setup.spin_limit,
                setup.doorbell,
            ),
            name=f"ding-env-worker-{setup.index}",
            daemon=True,
        )
        process.start()
        child_conn.close()
        if self.cores is not None:
            pin(process.pid, worker_core(self.cores, setup.index))
        return WorkerHandle(setup.index, setup.env_ids, process, parent_conn)

    def stop(self, handle: WorkerHandle) -> None:
        if handle.process.is_alive():
            handle.process.kill()
        handle.process.join()
        handle.conn.close()

    def finish(self, handles: Sequence[WorkerHandle], deadline: float) -> None:
        for handle in handles:
            handle.process.join(max(0.0, deadline - time.monotonic()))
            self.stop(handle)

    def close(self) -> None:
        pass


class PipeChannel:
    """A pipe per worker; the placement decides where workers run (see the module docstring).

    Steps and their ``OK`` replies are rung on shared-memory doorbells where the machine allows
    (:mod:`..core.doorbell`): a spinning worker or caller takes them without a system call; they go on the pipe
    too only to wake a process that sleeps (a copy that came both ways is dropped when read).
    """

    codec: Codec = TRUSTED  # the trainer's own processes, or Ray actors of its cluster: the same user and code
    late_replies = 0  # a worker given up on is killed (and waited for) with its pipe: nothing of it comes late

    def __init__(self, placement: PipePlacement, doorbells: bool | None = None) -> None:
        """``doorbells``: ring steps in shared memory too (None: where :func:`~..core.doorbell.supported`)."""
        self.placement = placement
        self.handles: list[WorkerHandle | None] = []
        self._checks: dict[int, tuple[Connection, Callable[[], bool]]] = {}  # each worker's answer check
        self._ring = supported() if doorbells is None else doorbells
        self.bells: Doorbells | None = None
        self._held: dict[int, bytes] = {}  # replies read by poll(), delivered by the next receive
        self.core = CoreYield()
        """Whether the caller, finding its replies in, should give its core up after a batch (see ``handed_over``)."""

    def open(self, group_count: int) -> None:
        if len(self.handles) != group_count:
            self.handles = [None] * group_count
        if self._ring and (self.bells is None or self.bells.count != group_count):
            if self.bells is not None:
                self.bells.close()
            self.bells = Doorbells(group_count)
        self.placement.open(group_count)

    def start(self, setup: WorkerSetup) -> None:
        self._held.pop(setup.index, None)
        if self.bells is not None:
            self.bells.clear(setup.index)
            setup = dataclasses.replace(setup, doorbell=self.bells.ref(setup.index))
        self.handles[setup.index] = self.placement.start(setup)

    def handle(self, w: int) -> WorkerHandle:
        handle = self.handles[w]
        assert handle is not None, f"worker {w} is not running"
        return handle

    def send(self, w: int, message: bytes) -> Failure | None:
        handle = self.handle(w)
        bells = self.bells
        try:
            if bells is not None and bells.undrained[w] >= DRAIN_AT:
                self._drain(w)
            if bells is None or bells.ring(w, message):
                send_frame(handle.conn, message)
        except (EOFError, OSError):
            handle.process.join(0.5)
            return handle.death()
        return None

    def _drain(self, w: int) -> None:
        """Read off worker ``w``'s pipe the copies of replies taken from its doorbell (anything else is held)."""
        conn = self.handle(w).conn
        check = self._readable(w, conn)
        while w not in self._held and check():
            reply = self._take(w, conn, check)
            if reply is not None:
                self._held[w] = reply
        if self.bells is not None:
            self.bells.undrained[w] = 0  # a copy still on its way is dropped whenever the pipe is read

    def _take(self, w: int, conn: Connection, check: Callable[[], bool]) -> bytes | None:
        """The next reply on worker ``w``'s readable pipe, past copies of replies taken from its doorbell; None when
        only such copies were there. Raises ``EOFError`` / ``OSError`` for a closed pipe."""
        bells = self.bells
        while True:
            reply = recv_frame(conn)
            if bells is None:
                return reply
            if not bells.stale(w, reply):
                bells.delivered(w)
                return reply
            if not check():
                return None

    def _rung(self, w: int) -> bytes | None:
        """A reply of worker ``w`` already in: held from a poll, or rung on its doorbell."""
        held = self._held.pop(w, None)
        if held is not None or self.bells is None:
            return held
        return self.bells.answer(w)

    def poll(self, workers: Sequence[int], timeout: float | None) -> list[int]:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            found = {w for w in workers if w in self._held or (self.bells is not None and self.bells.ready(w))}
            waitables: dict[Any, int] = {}
            for w in workers:
                if w not in found:
                    handle = self.handle(w)
                    waitables[handle.conn] = w
                    waitables[handle.process.sentinel] = w
            remaining = 0.0 if found else None if deadline is None else max(0.0, deadline - time.monotonic())
            for obj in self._wait(waitables, remaining, found):
                w = waitables[obj]
                if w in found:
                    continue
                handle = self.handle(w)
                if obj is not handle.conn:  # its process ended: receive() reports it
                    found.add(w)
                    continue
                try:
                    reply = self._take(w, handle.conn, self._readable(w, handle.conn))
                except (EOFError, OSError):
                    found.add(w)
                    continue
                if reply is not None:
                    self._held[w] = reply
                    found.add(w)
            if found or remaining == 0.0:
                return sorted(found)

    def _wait(self, waitables: dict[Any, int], timeout: float | None, found: set[int]) -> list[Any]:
        """``connection.wait`` on the workers' pipes and sentinels, the caller asleep on their doorbells meanwhile
        (their ``OK`` replies then come on the pipes too); a worker that rang as the caller fell asleep is added to
        ``found`` and nothing is waited for."""
        if not waitables:
            return []
        bells = self.bells
        if bells is None or timeout == 0.0:
            return self._block(list(waitables), timeout)
        workers = set(waitables.values())
        bells.sleep(workers)
        try:
            rang = {w for w in workers if bells.ready(w)}
            if rang:
                found.update(rang)
                return []
            return self._block(list(waitables), timeout)
        finally:
            bells.wake(workers)

    def _block(self, waitables: list[Any], timeout: float | None) -> list[Any]:
        """``connection.wait``, telling :attr:`core` how long the caller waited."""
        if timeout == 0.0:
            return connection.wait(waitables, 0.0)
        since = self.core.clock()
        ready = connection.wait(waitables, timeout)
        self.core.waited(since)
        return ready

    def handed_over(self, quick: bool) -> None:
        """``send`` rang its workers: a caller that keeps finding its quick replies in yields its core
        (``CoreYield``)."""
        self.core.handed_over(quick)

    def receive(
        self, workers: Sequence[int], timeout: float | None, spin: SpinBudget | None = None
    ) -> dict[int, Reply]:
        results: dict[int, Reply] = {}
        started = time.perf_counter()
        for w in workers:
            reply = self._rung(w)
            if reply is not None:
                results[w] = reply
        workers = [w for w in workers if w not in results]
        if spin is not None and workers:
            self._spin_receive(workers, results, spin)
            workers = [w for w in workers if w not in results]
        waiting: dict[Any, int] = {}
        for w in workers:
            handle = self.handle(w)
            waiting[handle.conn] = w
            waiting[handle.process.sentinel] = w
        deadline = None if timeout is None else time.monotonic() + timeout
        while waiting:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            rang: set[int] = set()
            ready = self._wait(waiting, remaining, rang)
            for w in rang:  # answered on its doorbell as the caller fell asleep
                reply = self._rung(w)
                if reply is not None:
                    results[w] = reply
                    waiting = {k: v for k, v in waiting.items() if v != w}
            if rang:
                continue
            if not ready:
                for w in set(waiting.values()):
                    results[w] = Failure.timeout(f"{self.handle(w).describe()} did not answer within {timeout} s")
                break
            for obj in ready:
                w = waiting.get(obj, -1)
                if w < 0 or w in results:
                    continue
                handle = self.handle(w)
                try:
                    if obj is handle.conn or handle.conn.poll():
                        reply = self._take(w, handle.conn, self._readable(w, handle.conn))
                        if reply is None:  # only copies of replies taken from the doorbell: still waiting
                            continue
                        results[w] = reply
                    else:
                        raise EOFError
                except (EOFError, OSError):
                    handle.process.join(0.5)
                    results[w] = handle.death()
                waiting = {k: v for k, v in waiting.items() if v != w}
        if spin is not None:
            spin.observe(time.perf_counter() - started)
        return results

    def _spin_receive(self, workers: Sequence[int], results: dict[int, Reply], spin: SpinBudget) -> None:
        """Look at the doorbells and the pipes for a short adaptive window before blocking (step replies only)."""
        pending = {w: self.handle(w).conn for w in workers}
        pre_block = spin.pre_block()
        if pre_block > 0.0:  # a long wait: sleep through most of it, then spin for the answer
            self._drain_copies(pending)  # copies on a pipe would end the sleep at once
            self._wait({conn: w for w, conn in pending.items()}, pre_block, set())
        checks = {w: self._readable(w, conn) for w, conn in pending.items()}

        def poll() -> bool:
            for w, conn in list(pending.items()):
                reply = self._rung(w)
                if reply is None and checks[w]():
                    try:
                        reply = self._take(w, conn, checks[w])
                    except (EOFError, OSError):
                        return True  # a dead worker: the blocking path reports it
                if reply is not None:
                    results[w] = reply
                    del pending[w]
            return not pending

        spin.spin(poll)

    def _drain_copies(self, workers: Iterable[int]) -> None:
        """Read off the pipes of ``workers`` the copies of replies taken from their doorbells (a dead worker's
        pipe is left for the blocking wait to report)."""
        if self.bells is None:
            return
        for w in workers:
            if self.bells.undrained[w]:
                with contextlib.suppress(EOFError, OSError):
                    self._drain(w)

    def _readable(self, w: int, conn: Connection) -> Callable[[], bool]:
        """Worker ``w``'s check for an answer on ``conn``, made once per connection."""
        found = self._checks.get(w)
        if found is None or found[0] is not conn:
            found = self._checks[w] = (conn, readable(conn))
        return found[1]

    def stop(self, w: int) -> None:
        self._checks.pop(w, None)
        self._held.pop(w, None)
        handle = self.handles[w] if w < len(self.handles) else None
        if handle is None:
            return
        self.handles[w] = None
        self.placement.stop(handle)

    def close(self) -> None:
        handles = [h for h in self.handles if h is not None]
        message = pickle.dumps(Command(CommandKind.CLOSE))
        for handle in handles:
            with contextlib.suppress(OSError):
                handle.conn.send_bytes(message)
        try:
            self.placement.finish(handles, time.monotonic() + CLOSE_GRACE)
        finally:
            self.handles = [None] * len(self.handles)
            self._checks.clear()
            self._held.clear()
            if self.bells is not None:
                self.bells.close()
                self.bells = None
            self.placement.close()

    def pids(self) -> list[int | None]:
        return [h.process.pid if h is not None else None for h in self.handles]
