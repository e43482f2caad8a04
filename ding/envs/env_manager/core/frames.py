"""Messages on a ``multiprocessing`` connection in the fewest system calls: a step's hand-over costs two of them.

A :class:`~multiprocessing.connection.Connection` frames each message with a 4-byte length. Its ``send_bytes``
and ``recv_bytes`` are general (any size, any handle) and cost a few microseconds of Python around the system calls:
on two 1 ms envs that is a measurable part of a batch. These functions write and read the same frames straight on
the connection's file descriptor, so either end may use either API: a short message goes out in one ``write``, and
a message is read with one ``read`` for its length and one for its bytes.

>>> import multiprocessing
>>> here, there = multiprocessing.Pipe()
>>> send_frame(here, b'step'), there.recv_bytes()
(None, b'step')
>>> there.send_bytes(b'ok'), recv_frame(here)
(None, b'ok')
>>> there.close(); recv_frame(here)
Traceback (most recent call last):
...
EOFError
"""

from __future__ import annotations

import os
import struct
from multiprocessing.connection import Connection

LENGTH = struct.Struct("!i")
"""A frame's length, as ``multiprocessing`` writes it (-1 announces an 8-byte length: a message over 2 GiB)."""
LONG_LENGTH = struct.Struct("!Q")
SHORT = 16384
"""The longest message sent in one write with its length (``multiprocessing`` writes longer ones in two)."""


def send_frame(conn: Connection, message: bytes) -> None:
    """``conn.send_bytes(message)``: one ``write`` for a short message; a longer one goes through ``conn``."""
    if len(message) > SHORT:
        conn.send_bytes(message)
        return
    fd = conn.fileno()  # raises OSError on a closed connection, as send_bytes does
    data = memoryview(LENGTH.pack(len(message)) + message)
    while data:
        data = data[os.write(fd, data) :]


def recv_frame(conn: Connection) -> bytes:
    """``conn.recv_bytes()``: the next message; EOFError when the other end closed before one began."""
    fd = conn.fileno()
    (size,) = LENGTH.unpack(_read(fd, LENGTH.size, first=True))
    if size == -1:
        (size,) = LONG_LENGTH.unpack(_read(fd, LONG_LENGTH.size))
    return _read(fd, size)


def _read(fd: int, size: int, first: bool = False) -> bytes:
    """Exactly ``size`` bytes from ``fd`` (most often in one ``read``)."""
    data = os.read(fd, size)
    if len(data) == size:
        return data
    parts, got = [data], len(data)
    while data:
        if got == size:
            return b"".join(parts)
        data = os.read(fd, size - got)
        parts.append(data)
        got += len(data)
    if first and not got:
        raise EOFError
    raise OSError("got end of file during message")
