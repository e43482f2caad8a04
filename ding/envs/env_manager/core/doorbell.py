"""Doorbells: a step handed over through shared memory while both ends are awake, with the pipe behind it.

Each worker of a pipe channel has two shared 64-bit words: ``posted``, where the caller writes the number
(:mod:`.sequence`) of the step it sends, and ``answered``, where the worker writes the number of the step it answers
with nothing but rows to say (``OK``). A process that is spinning for its next message sees a number change without
a system call; a pipe's message costs a ``poll`` and two ``read`` calls on the receiving side. The message still
travels on the pipe as well, so a blocked process is woken exactly as before, and nothing depends on a doorbell
being seen. Each end drops the pipe's copy of a step or a reply it already took from a doorbell (by the step's
number: numbers only grow), so every step runs once and every reply is delivered once, whichever way it came.

Order: the writer fills the step buffers (actions and control rows; results and flags), then rings; the reader sees
the ring, then reads the buffers. On x86-64 stores become visible to other cores in program order and loads are
not reordered with older loads, which is all this needs; elsewhere doorbells are off (:func:`supported`) and every
hand-over goes through the pipe.

>>> from ding.envs.env_manager.core.sequence import step_message
>>> bells = Doorbells(2)
>>> worker = WorkerBell(bells.ref(1))
>>> bells.ring(1, step_message(5)); worker.posted()
5
>>> bells.answer(1) is None, worker.answer(5), bells.answer(1) == ok_reply(5)
(True, None, True)
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
from typing import Any

import numpy as np

from ding.envs.env_manager.core.sequence import HEADER, OK, STEP, message_seq, ok_reply
from ding.envs.env_manager.core.shm import ArraySpec, SharedArray

__all__ = ["DoorbellRef", "Doorbells", "WorkerBell", "supported"]

WORDS = 8
"""64-bit words per worker: one cache line each, so two workers' doorbells never share one."""
POSTED, ANSWERED = 0, 1
"""A worker's words: the step the caller sent it; the step it answered with ``OK``."""
DRAIN_AT = 16
"""Replies taken from a doorbell after which the caller reads their copies off the pipe (before its next send)."""


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

    def ref(self, w: int) -> DoorbellRef:
        return DoorbellRef(self._segment.spec, w)

    def ring(self, w: int, message: bytes) -> None:
        """Note a message to worker ``w``; a step (``STEP`` and its number) rings its doorbell."""
        seq = self._expected[w] = step_of(message)
        if seq:
            self._words[w * WORDS + POSTED] = seq

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
        """Worker ``w`` is (re)started: nothing posted or answered, nothing left on its new pipe."""
        self._words[w * WORDS + POSTED] = 0
        self._words[w * WORDS + ANSWERED] = 0
        self._expected[w] = self._taken[w] = self.undrained[w] = 0

    def close(self) -> None:
        """Unmap and remove the segment (workers still attached keep their mapping until they close)."""
        self._words.release()
        self._segment.close()


class WorkerBell:
    """A worker's side of its doorbell: the step posted to it, and its answers."""

    def __init__(self, ref: DoorbellRef) -> None:
        self._segment = SharedArray(ref.spec, create=False)
        self._words = _words(self._segment.array)
        self._posted = ref.index * WORDS + POSTED
        self._answered = ref.index * WORDS + ANSWERED

    def posted(self) -> int:
        """The number of the last step the caller rang for (0: none since this worker started)."""
        return self._words[self._posted]

    def answer(self, seq: int) -> None:
        """Ring the caller: step ``seq`` is answered with ``OK`` (its rows are in the buffers)."""
        self._words[self._answered] = seq

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
