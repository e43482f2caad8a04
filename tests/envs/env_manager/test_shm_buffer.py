"""``ShmBuffer``: an array in shared memory written by a child process and read by its parent."""

from __future__ import annotations

import multiprocessing
import os
from multiprocessing.connection import Connection

import numpy as np
import pytest

from ding.envs.env_manager import ShmBuffer
from ding.envs.env_manager.subprocess_env_manager import ShmBuffer as ShmBufferFromDIEngineModule


def write(buffer: ShmBuffer, value: float, done: Connection) -> None:
    buffer.fill(np.full(buffer.shape, value, dtype=np.float32))
    done.send(os.getpid())
    done.close()


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_a_child_fills_what_the_parent_gets(context: str) -> None:
    assert ShmBufferFromDIEngineModule is ShmBuffer
    ctx = multiprocessing.get_context(context)
    buffer = ShmBuffer(dtype=np.float32, shape=(4, 8, 8), copy_on_get=False)
    view = buffer.get()
    for value in (1.5, 2.5):
        here, there = ctx.Pipe()
        child = ctx.Process(target=write, args=(buffer, value, there))
        child.start()
        assert here.recv() != os.getpid()
        child.join()
        assert child.exitcode == 0
        np.testing.assert_array_equal(view, np.full((4, 8, 8), value, np.float32))  # the same memory, rewritten
    buffer.close()
    assert not os.path.exists(f"/dev/shm/{buffer.name}")


def test_copy_on_get_hands_out_copies() -> None:
    buffer = ShmBuffer(np.int64, 3)
    buffer.fill([1, 2, 3])
    first = buffer.get()
    buffer.fill(np.array([4, 5, 6]))
    assert first.tolist() == [1, 2, 3] and buffer.get().tolist() == [4, 5, 6]
    assert buffer.get().dtype == np.int64 and buffer.shape == (3,)
    with pytest.raises(ValueError, match=r"ShmBuffer\.fill got an array of shape \(2,\); this buffer holds \(3,\)"):
        buffer.fill([1, 2])
    name = buffer.name
    del buffer, first
    assert not os.path.exists(f"/dev/shm/{name}")  # collected: the segment is removed
