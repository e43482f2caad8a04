"""Doorbells: a step and its reply handed over in shared memory while both ends are awake, the pipe when one sleeps.

Each worker of a pipe channel has a line of shared 64-bit words: ``posted``, where the caller writes the number
(:mod:`.sequence`) of the step it sends; ``answered``, where the worker writes the number of the step it answers
with nothing but rows to say (``OK``); and one "asleep" word for each end, set while that end is blocked on the pipe.
A process spinning for its next message sees a number change without a system call; the pipe costs a ``write`` to
send and a ``poll`` and two ``read`` calls to receive. A step or an ``OK`` goes on the pipe as well only when the
other end said it is asleep, which wakes it as before; every other message always goes on the pipe.

No wake-up is lost: an end that is about to block first says so, then looks at its doorbell once more; an end that
rings first writes the number, then looks whether the other is asleep. With a full memory fence between the write
and the look on both sides (:func:`fence`), at least one of them sees the other's write: the sleeper takes the
number, or the ringer sends the message on the pipe too (or both). A message that came both ways is taken once: each
end drops what it reads from the pipe that it already took from a doorbell (by the step's number: numbers only
grow), so every step runs once and every reply is delivered once, whichever way it came.

Order: the writer fills the step buffers (actions and control rows; results and flags), then rings; the reader sees
the ring, then reads the buffers. On x86-64 stores become visible to other cores in program order, loads are not
reordered with older loads, and a locked instruction (which every lock operation uses) is a full fence: all this
needs. Elsewhere doorbells are off (:func:`supported`) and every hand-over goes through the pipe.

>>> from ding.envs.env_manager.core.sequence import step_message
>>> bells = Doorbells(2)
>>> worker = WorkerBell(bells.ref(1))
>>> bells.ring(1, step_message(5)), worker.posted()  # the worker is awake: no message on the pipe
(False, 5)
>>> bells.answer(1) is None, worker.answer(5), bells.answer(1) == ok_reply(5)
(True, False, True)
>>> worker.sleep(); bells.ring(1, step_message(6))  # the worker sleeps: the step goes on the pipe too
True
>>> bells.stale(1, ok_reply(5)), bells.stale(1, ok_reply(6))
(True, False)
>>> worker.close(); bells.close()
"""

from __future__ import annotations

import dataclasses
import os
import platform
import secrets
import sys
import threading
from collections.abc import Iterable
from typing import Any

import numpy as np

from ding.envs.env_manager.core.sequence import HEADER, OK, STEP, message_seq, ok_reply
from ding.envs.env_manager.core.shm import ArraySpec, SharedArray

__all__ = ["DoorbellRef", "Doorbells", "WorkerBell", "fence", "supported"]

WORDS = 8
"""64-bit words per worker: one cache line each, so two workers' doorbells never share one."""
POSTED, ANSWERED, WORKER_ASLEEP, CALLER_ASLEEP = 0, 1, 2, 3
"""A worker's words: the step the caller sent it; the step it answered with ``OK``; whether the worker is blocked
on its pipe; whether the caller is blocked waiting for this worker."""
DRAIN_AT = 16
"""Replies taken from a doorbell that may have a copy on the pipe (the caller fell asleep as the worker answered)
after which the caller reads the copies off (before its next send)."""


_FENCE = threading.Lock()


def fence() -> None:
    """A full memory fence: this process's earlier stores are visible to every core before its later loads run.

    Taking and releasing a lock runs locked instructions, which x86-64 orders with every load and store (the only
    machines doorbells run on, :func:`supported`).
    """
    _FENCE.acquire()
    _FENCE.release()


def supported() -> bool:
    """Whether doorbells are safe here: Linux (shared memory mapped by name) on x86-64 (ordered stores and loads)."""
    return sys.platform.startswith("linux") and platform.machine().lower() in ("x86_64", "amd64")


@dataclasses.dataclass(frozen=True)
class DoorbellRef:
    """What a worker needs to attach to its doorbell: the segment and its index (picklable)."""

    spec: ArraySpec
    index: int


def _words(array: np.ndarray) -> memoryview:
    """The segment's words as a flat memoryview of 64-bit integers (faster to index than the array)."""
    flat: Any = array.reshape(-1)  # numpy exports the buffer protocol (typeshed does not say so)
    return memoryview(flat).cast("B").cast("q")


class Doorbells:
    """The caller's side: every worker's doorbell, and what it was last sent, took and left on the pipe."""

    def __init__(self, count: int) -> None:
        name = f"ding_{os.getpid()}_{secrets.token_hex(4)}_bells"
        self.count = count
        self._segment = SharedArray(ArraySpec(name, (count, WORDS), np.dtype(np.int64).str), create=True)
        self._words = _words(self._segment.array)
        self._expected = [0] * count  # per worker: the step it was last sent (0: its last message was no step)
        self._taken = [0] * count  # per worker: the last step whose reply came from the doorbell
        self.undrained = [0] * count
        """Per worker: replies taken from the doorbell whose copies may still be on the pipe."""
        self.taken_replies = 0
        """Replies taken from doorbells so far (the rest came through the pipes)."""
        self.piped_steps = 0
        """Steps also sent on the pipe so far, to wake a worker that was asleep."""

    def ref(self, w: int) -> DoorbellRef:
        return DoorbellRef(self._segment.spec, w)

    def ring(self, w: int, message: bytes) -> bool:
        """Note a message to worker ``w``; a step (``STEP`` and its number) rings its doorbell. True when the message
        must go on the pipe: it is no step, or the worker is (or is about to be) blocked on its pipe."""
        seq = self._expected[w] = step_of(message)
        if not seq:
            return True
        at = w * WORDS
        self._words[at + POSTED] = seq
        fence()
        if self._words[at + WORKER_ASLEEP] == 0:
            return False
        self.piped_steps += 1
        return True

    def sleep(self, workers: Iterable[int]) -> None:
        """The caller is about to block waiting for ``workers``: their ``OK`` replies come on the pipe too from now.

        Look at :meth:`answer` once more after this: a worker that answered just before saw no sleeper.
        """
        words = self._words
        for w in workers:
            words[w * WORDS + CALLER_ASLEEP] = 1
        fence()

    def wake(self, workers: Iterable[int]) -> None:
        """The caller is no longer blocked waiting for ``workers``."""
        words = self._words
        for w in workers:
            words[w * WORDS + CALLER_ASLEEP] = 0

    def ready(self, w: int) -> bool:
        """Whether worker ``w`` rang the answer to the step it was last sent (not taken yet)."""
        expected = self._expected[w]
        return expected != 0 and self._words[w * WORDS + ANSWERED] == expected

    def answer(self, w: int) -> bytes | None:
        """Worker ``w``'s ``OK`` reply to the step it was last sent, taken from its doorbell; None if not rung."""
        expected = self._expected[w]
        if expected == 0 or self._words[w * WORDS + ANSWERED] != expected:
            return None
        self._expected[w] = 0
        self._taken[w] = expected
        self.undrained[w] += 1
        self.taken_replies += 1
        return ok_reply(expected)

    def delivered(self, w: int) -> None:
        """Worker ``w``'s reply came through the pipe: its doorbell is not to be taken as well."""
        self._expected[w] = 0

    def stale(self, w: int, reply: bytes) -> bool:
        """Whether ``reply``, read from worker ``w``'s pipe, is the copy of a reply taken from its doorbell."""
        if len(reply) != HEADER or reply[:1] != OK or message_seq(reply) > self._taken[w]:
            return False
        self.undrained[w] = max(0, self.undrained[w] - 1)
        return True

    def clear(self, w: int) -> None:
        """Worker ``w`` is (re)started: nothing posted or answered, nobody asleep, nothing left on its new pipe."""
        for word in range(WORDS):
            self._words[w * WORDS + word] = 0
        self._expected[w] = self._taken[w] = self.undrained[w] = 0

    def close(self) -> None:
        """Unmap and remove the segment (workers still attached keep their mapping until they close)."""
        self._words.release()
        self._segment.close()


class WorkerBell:
    """A worker's side of its doorbell: the step posted to it, its answers, and whether it is blocked."""

    def __init__(self, ref: DoorbellRef) -> None:
        self._segment = SharedArray(ref.spec, create=False)
        self._words = _words(self._segment.array)
        at = ref.index * WORDS
        self._posted, self._answered = at + POSTED, at + ANSWERED
        self._asleep, self._caller_asleep = at + WORKER_ASLEEP, at + CALLER_ASLEEP

    def posted(self) -> int:
        """The number of the last step the caller rang for (0: none since this worker started)."""
        return self._words[self._posted]

    def answer(self, seq: int) -> bool:
        """Ring the caller: step ``seq`` is answered with ``OK`` (its rows are in the buffers). True when the
        reply must go on the pipe too: the caller is (or is about to be) blocked."""
        self._words[self._answered] = seq
        fence()
        return self._words[self._caller_asleep] != 0

    def sleep(self) -> None:
        """This worker is about to block on its pipe: steps come on the pipe too from now (look at
        :meth:`posted` once more after this: a step rung just before saw no sleeper)."""
        self._words[self._asleep] = 1
        fence()

    def wake(self) -> None:
        self._words[self._asleep] = 0

    def close(self) -> None:
        self._words.release()
        self._segment.close()


def step_of(message: bytes) -> int:
    """The number of a ``STEP`` message (rung on a doorbell), or 0 for any other message.

    >>> from ding.envs.env_manager.core.sequence import step_message
    >>> step_of(step_message(3)), step_of(b'R' + bytes(8)), step_of(b'pickled command')
    (3, 0, 0)
    """
    return message_seq(message) if len(message) == HEADER and message[:1] == STEP else 0
