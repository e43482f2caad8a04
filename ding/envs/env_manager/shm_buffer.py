"""``ShmBuffer``: one array in shared memory, written by one process and read by others (DI-engine's class).

Built on :class:`~ding.envs.env_manager.core.shm.SharedArray`: a forked child shares the mapping it
inherits; a pickled buffer (a spawned child) attaches to the segment by name. The creating
process removes the segment when the buffer is closed or collected, and multiprocessing's resource
tracker removes it if that process is killed.
"""

from __future__ import annotations

import os
import secrets
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from ding.envs.env_manager.core.shm import ArraySpec, SharedArray


def _release(shared: SharedArray, owner_pid: int) -> None:
    if os.getpid() == owner_pid:  # a forked child holds a copy of this object but not the segment's name
        shared.close()


class ShmBuffer:
    """An array of ``dtype`` and ``shape`` in shared memory: ``fill(x)`` writes it, ``get()`` reads it.

    Example:
        >>> buffer = ShmBuffer(np.float32, (2,))
        >>> buffer.fill(np.array([1.0, 2.0]))
        >>> buffer.get()
        array([1., 2.], dtype=float32)
        >>> buffer.close()
    """

    def __init__(self, dtype: Any, shape: int | Sequence[int], copy_on_get: bool = True) -> None:
        shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)
        self.shape: tuple[int, ...] = shape
        self.copy_on_get = bool(copy_on_get)
        self._spec = ArraySpec(f"ding_buf_{os.getpid()}_{secrets.token_hex(6)}", shape, self.dtype.str)
        self._shared = SharedArray(self._spec, create=True)
        self._finalizer = weakref.finalize(self, _release, self._shared, os.getpid())

    @property
    def name(self) -> str:
        """The shared-memory segment's name."""
        return self._spec.name

    def fill(self, value: Any) -> None:
        """Write ``value`` (an array of this buffer's shape, or one that casts to it) into the buffer."""
        array = np.asarray(value)
        if array.shape != self.shape:
            raise ValueError(f"ShmBuffer.fill got an array of shape {array.shape}; this buffer holds {self.shape}")
        np.copyto(self._shared.array, array, casting="unsafe")

    def get(self) -> np.ndarray:
        """The buffer's contents: a copy, or with ``copy_on_get=False`` a view of the shared memory."""
        return self._shared.array.copy() if self.copy_on_get else self._shared.array

    def close(self) -> None:
        """Drop this process's mapping; in the creating process, remove the segment too."""
        self._finalizer()

    def __getstate__(self) -> dict[str, Any]:
        return {"spec": self._spec, "copy_on_get": self.copy_on_get}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._spec = state["spec"]
        self.dtype = np.dtype(self._spec.dtype)
        self.shape = self._spec.shape
        self.copy_on_get = state["copy_on_get"]
        self._shared = SharedArray(self._spec, create=False)
        self._finalizer = weakref.finalize(self, _release, self._shared, -1)  # not the owner: only unmaps
