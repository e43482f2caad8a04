"""Step numbers: every step a manager sends carries one, and every step reply says which step it answers.

The core numbers each dispatch of a step (one number for the envs of one batch). The number travels in the step
message, the worker echoes it in its reply, and the core delivers a reply only when it answers the step the worker
was last sent; any other (a result that arrives after its step was given up on) is dropped and counted, never
delivered (:attr:`BatchCore.late_results <ding.envs.env_manager.core.batch_core.BatchCore.late_results>`).

- step message: ``STEP`` + number (results in shared memory), or ``RAW_STEP`` + number + rows (:mod:`.rows`);
- step reply: ``OK`` + number when there is nothing else to say, else an encoded
  :class:`~.replies.StepReply` whose ``seq`` is the number (with private rows, either one is the head of the
  raw reply).

>>> message = step_message(7)
>>> is_step(message), message_seq(message), ok_reply(7)
(True, 7, b'k\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x07')
"""

from __future__ import annotations

import struct

STEP = b"S"
"""A step whose actions and results are in shared memory."""
RAW_STEP = b"R"
"""A step request whose control and action rows follow as raw bytes (:mod:`.rows`)."""
OK = b"k"
"""A step reply with nothing besides the rows to report."""
SEQ = struct.Struct("!Q")
HEADER = len(STEP) + SEQ.size
"""Bytes before a step message's rows."""


def step_message(seq: int) -> bytes:
    return STEP + SEQ.pack(seq)


def ok_reply(seq: int) -> bytes:
    return OK + SEQ.pack(seq)


def is_step(message: bytes) -> bool:
    """Whether a message to a worker is a step (else it is an encoded command)."""
    return message[:1] in (STEP, RAW_STEP) and len(message) >= HEADER


def message_seq(message: bytes) -> int:
    """The number of the step a step message (or an ``OK`` reply) is about."""
    (seq,) = SEQ.unpack_from(message, 1)
    return int(seq)
