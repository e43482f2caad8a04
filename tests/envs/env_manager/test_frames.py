"""The worker hand-over's frames: the same bytes on the wire as ``Connection.send_bytes`` / ``recv_bytes``.

Either end may use either API, messages of every size arrive whole, and the ends of a connection (closed before a
message, in the middle of one, on this side) raise what ``multiprocessing`` raises, which the channel and the worker
loop turn into a dead worker or a clean exit.
"""

from __future__ import annotations

import multiprocessing
import os
import struct
import threading
from collections.abc import Iterator
from multiprocessing.connection import Connection

import pytest

from ding.envs.env_manager.core.frames import SHORT, recv_frame, send_frame


@pytest.fixture
def pair() -> Iterator[tuple[Connection, Connection]]:
    here, there = multiprocessing.Pipe()
    yield here, there
    here.close()
    there.close()


@pytest.mark.parametrize("size", [0, 1, 9, SHORT, SHORT + 1, 300_000])
def test_frames_and_connections_read_each_others_messages(pair: tuple[Connection, Connection], size: int) -> None:
    here, there = pair
    message = bytes(range(256)) * (size // 256) + bytes(size % 256)
    reader = threading.Thread(target=lambda: got.append(there.recv_bytes()))
    got: list[bytes] = []
    reader.start()  # a long message fills the socket's buffer: the other end reads while this one writes
    send_frame(here, message)
    reader.join(10)
    assert got == [message]
    writer = threading.Thread(target=there.send_bytes, args=(message,))
    writer.start()
    assert recv_frame(here) == message
    writer.join(10)


def test_messages_in_a_row_stay_apart(pair: tuple[Connection, Connection]) -> None:
    here, there = pair
    for message in (b"a", b"", b"bc" * 10, b"d"):
        send_frame(here, message)
    assert [recv_frame(there) for _ in range(4)] == [b"a", b"", b"bc" * 10, b"d"]


def test_a_message_that_arrives_in_pieces_is_read_whole(pair: tuple[Connection, Connection]) -> None:
    here, there = pair
    frame = struct.pack("!i", 6) + b"abcdef"
    fd = there.fileno()

    def trickle() -> None:
        for byte in frame:
            os.write(fd, bytes([byte]))

    writer = threading.Thread(target=trickle)
    writer.start()
    assert recv_frame(here) == b"abcdef"
    writer.join(10)


def test_the_ends_of_a_connection_raise_what_multiprocessing_raises(pair: tuple[Connection, Connection]) -> None:
    here, there = pair
    os.write(there.fileno(), struct.pack("!i", 10) + b"abc")  # a message cut short by its writer's death
    there.close()
    with pytest.raises(OSError, match="end of file during message"):
        recv_frame(here)
    with pytest.raises(EOFError):  # nothing more: the other end is gone
        recv_frame(here)
    with pytest.raises(BrokenPipeError):
        send_frame(here, b"step")
    here.close()
    with pytest.raises(OSError, match="handle is closed"):
        send_frame(here, b"step")
    with pytest.raises(OSError, match="handle is closed"):
        recv_frame(here)
