"""The row codec: step data of private buffers as raw array bytes (no pickling on the per-step path).

When buffers are private (``shared_memory=False``, workers on other hosts, Ray actors), a step
request carries the group's control and action rows, and the reply its result rows (ready and final
observations, rewards, end flags); a reset reply carries the result rows too. Every channel (a pipe,
zmq, a Ray call) sends these same bytes.
Both sides hold arrays of the same layout (shapes and explicit byte orders), so the rows travel as
their bytes, concatenated in layout order, and are copied straight into the receiver's arrays; a
message of the wrong length is rejected. Only a reply's rare part (infos, failures) is pickled.

- request: ``RAW_STEP`` + the step's number (:mod:`.sequence`) + control rows + action rows (when actions have a
  buffer);
- reply: ``RAW_REPLY`` + 4-byte length of the head + head (``OK`` and the step's number, or an encoded
  ``StepReply``) + result rows.

>>> import numpy as np
>>> a, b = np.zeros((4, 2), "<i8"), np.zeros(4, "<f4")
>>> a[1:3], b[1:3] = 7, 0.5
>>> data = pack_rows([a, b], slice(1, 3))
>>> c, d = np.zeros((4, 2), "<i8"), np.zeros(4, "<f4")
>>> unpack_rows(data, [c, d], slice(1, 3), 0)
40
>>> c[1:3].tolist(), d.tolist()
([[7, 7], [7, 7]], [0.0, 0.5, 0.5, 0.0])
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np

from ding.envs.env_manager.core.sequence import HEADER, RAW_STEP, SEQ
from ding.envs.env_manager.core.shm import SharedBuffers

RAW_REPLY = b"r"
"""A step or reset reply whose result rows follow its head as raw bytes."""
_HEAD = struct.Struct("!I")


class MalformedMessage(ValueError):
    """A message that does not follow the wire format (it is dropped and logged, or raised; never processed)."""


def input_arrays(buffers: SharedBuffers) -> list[np.ndarray]:
    """The arrays a step request carries rows of, in wire order."""
    return [buffers.control] if buffers.action is None else [buffers.control, buffers.action]


def result_arrays(buffers: SharedBuffers) -> list[np.ndarray]:
    """The arrays a reply carries rows of, in wire order."""
    return [*buffers.ready, *buffers.final, buffers.reward, buffers.flags]


def pack_rows(arrays: Sequence[np.ndarray], rows: slice) -> bytes:
    """The bytes of ``rows`` of every array, one after the other."""
    return b"".join([array[rows].tobytes() for array in arrays])


def unpack_rows(data: bytes, arrays: Sequence[np.ndarray], rows: slice, offset: int) -> int:
    """Copy ``rows`` of every array from ``data`` at ``offset`` (all of the rest of it); returns the bytes read."""
    views = [array[rows] for array in arrays]
    size = sum(view.nbytes for view in views)
    if len(data) - offset != size:
        raise MalformedMessage(f"expected {size} bytes of step rows, got {len(data) - offset}")
    position = offset
    for view in views:
        view[...] = np.frombuffer(data, view.dtype, view.size, position).reshape(view.shape)
        position += view.nbytes
    return size


def pack_request(buffers: SharedBuffers, rows: slice, seq: int) -> bytes:
    return RAW_STEP + SEQ.pack(seq) + pack_rows(input_arrays(buffers), rows)


def unpack_request(message: bytes, buffers: SharedBuffers, rows: slice) -> None:
    unpack_rows(message, input_arrays(buffers), rows, HEADER)


def pack_reply(head: bytes, buffers: SharedBuffers, rows: slice) -> bytes:
    return b"".join([RAW_REPLY, _HEAD.pack(len(head)), head, pack_rows(result_arrays(buffers), rows)])


def unpack_reply(reply: bytes, buffers: SharedBuffers, rows: slice) -> bytes:
    """Copy a reply's result rows into ``buffers``; returns its head."""
    start = len(RAW_REPLY) + _HEAD.size
    if len(reply) < start:
        raise MalformedMessage(f"step reply of {len(reply)} bytes is shorter than its {start}-byte header")
    (length,) = _HEAD.unpack_from(reply, len(RAW_REPLY))
    if start + length > len(reply):
        raise MalformedMessage(f"step reply head of {length} bytes exceeds the {len(reply)}-byte reply")
    unpack_rows(reply, result_arrays(buffers), rows, start + length)
    return reply[start : start + length]
