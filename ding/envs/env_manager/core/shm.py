"""Shared-memory buffers for a batch of envs, laid out from their declared spaces.

Every buffer has one row per env, of the dtype the spaces declare (uint8 frames take one byte a pixel).
Observation leaves (Box, or the Box/Discrete leaves of Dict and Tuple observations) get two buffers:
``ready`` (what each env waits to be acted on) and ``final`` (an episode's last observation, returned in its
timestep while ``ready`` already holds the next episode's first one).
Rewards, end flags, actions and per-env control words have one each.

With ``shared=False`` every process keeps private arrays of the same layout and the rows of a
step travel as raw bytes in the messages (:mod:`.rows`; the ``shared_memory=False`` setting).

Envs whose spaces were probed rather than declared (DI-engine's style) check their own actions, so
their actions always travel pickled; without shared memory their observations and rewards do too,
as whatever the env returns (``pickled`` layouts have no observation buffers).

Segments are named ``ding_<pid>_<token>_<n>`` and registered with multiprocessing's resource
tracker, which unlinks them even if the owning process is killed. Other processes map them without
registering (on Linux): an attaching process that is not the owner's child, such as a Ray actor,
would otherwise have its own tracker unlink the owner's segments when it dies.

An attachment can be revoked (:meth:`SharedBuffers.revoke`): its pages are replaced in place by private memory,
so a thread that still holds its arrays (a worker thread given up on while stuck in env code) can no longer read
or write the rows everyone else uses.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import mmap
import os
import secrets
import sys
from collections.abc import Callable, Sequence
from multiprocessing import shared_memory
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.values.spaces import EnvSpaces

Path = tuple[Any, ...]

FLAG_DONE, FLAG_TERMINATED, FLAG_TRUNCATED, FLAG_RESET = 0, 1, 2, 3
"""Columns of the ``flags`` buffer; FLAG_RESET marks a row whose ``ready`` obs is a new episode's first."""


@dataclasses.dataclass(frozen=True)
class ArraySpec:
    """Name, shape and dtype of one shared array: enough for another process to attach to it."""

    name: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def nbytes(self) -> int:
        return max(1, int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize)


class _Segment(shared_memory.SharedMemory):
    """A segment whose mapping lives as long as any array using it (the base class unmaps on ``del``)."""

    def __del__(self) -> None:
        pass


def _map_untracked(spec: ArraySpec) -> mmap.mmap:
    """Map an existing segment without registering it with a resource tracker (Linux: /dev/shm)."""
    fd = os.open(os.path.join("/dev/shm", spec.name), os.O_RDWR)
    try:
        return mmap.mmap(fd, spec.nbytes)
    finally:
        os.close(fd)


_MAP_FIXED = 0x10
"""``MAP_FIXED`` on Linux and macOS (Python's ``mmap`` module does not name it)."""


def _map_private_over(mapping: mmap.mmap) -> None:
    """Replace the pages of ``mapping`` by private zeroed memory at the same address (``mmap`` with ``MAP_FIXED``).

    Arrays over ``mapping`` stay valid; they no longer reach the segment (one system call, atomic for other threads).
    """
    if not sys.platform.startswith(("linux", "darwin")):
        raise NotImplementedError(f"revoking a shared-memory attachment needs Linux or macOS, not {sys.platform}")
    size = len(mapping)
    view = ctypes.c_char.from_buffer(mapping)
    address = ctypes.addressof(view)
    del view  # the address stays; the export of the buffer ends
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_FIXED
    if libc.mmap(address, size, mmap.PROT_READ | mmap.PROT_WRITE, flags, -1, 0) != address:
        code = ctypes.get_errno()
        raise OSError(code, f"cannot cut a revoked attachment off its shared memory: {os.strerror(code)}")


class SharedArray:
    """A NumPy array backed by a named shared-memory segment.

    Closing removes the segment's name (owner) and this object's hold on it; arrays a caller kept
    stay readable, and the memory is returned once the last of them is gone.
    """

    def __init__(self, spec: ArraySpec, create: bool) -> None:
        self.spec = spec
        self._owner = create
        self._shm: _Segment | None = None
        buffer: Any
        if create or not sys.platform.startswith("linux"):
            self._shm = _Segment(name=spec.name, create=create, size=spec.nbytes)
            buffer = self._shm.buf
            self._mapping: mmap.mmap | None = self._shm._mmap  # type: ignore[attr-defined]
        else:
            buffer = self._mapping = _map_untracked(spec)  # unmapped when the last array using it is gone
        self.array: np.ndarray = np.ndarray(spec.shape, dtype=np.dtype(spec.dtype), buffer=buffer)
        if create:
            self.array.fill(0)

    def revoke(self) -> None:
        """Cut this mapping off the segment: its array reads zeros and writes where nobody reads."""
        if self._mapping is not None:
            _map_private_over(self._mapping)

    def close(self) -> None:
        """Drop this process's mapping; the owner also removes the segment."""
        self.array = np.empty(0)
        self._mapping = None
        if self._shm is None:
            return
        shm, self._shm = self._shm, None
        with contextlib.suppress(OSError):
            os.close(shm._fd)  # type: ignore[attr-defined]  # the mapping does not need the descriptor
        if self._owner:
            with contextlib.suppress(FileNotFoundError):
                shm.unlink()


DYNAMIC_SHAPE = (
    "observation leaf {path}: {space} has a dynamic shape so its not possible to make a static shared memory. "
    "ding's process managers lay observations out in rows of a fixed shape and dtype (Box, Discrete, MultiDiscrete "
    "and MultiBinary leaves, in Dict and Tuple spaces too)"
)
"""Why a space without a fixed shape gets no buffer; its first sentence is gymnasium's, so that code written for
gymnasium's vector envs (its tests skip such spaces on this text) treats ding's refusal as gymnasium's own."""


def obs_leaves(space: spaces.Space[Any], path: Path = ()) -> list[tuple[Path, spaces.Space[Any]]]:
    """The fixed-shape leaves of an observation space with their paths (keys / indices)."""
    if isinstance(space, spaces.Dict):
        return [leaf for key, sub in space.spaces.items() for leaf in obs_leaves(sub, (*path, key))]
    if isinstance(space, spaces.Tuple):
        return [leaf for i, sub in enumerate(space.spaces) for leaf in obs_leaves(sub, (*path, i))]
    if space.shape is None or space.dtype is None:
        raise TypeError(DYNAMIC_SHAPE.format(path=path, space=space))
    return [(path, space)]


def build_tree(space: spaces.Space[Any], leaf: Callable[[Path], Any], path: Path = ()) -> Any:
    """Rebuild a (nested) observation from a function giving each leaf's value by path."""
    if isinstance(space, spaces.Dict):
        return {key: build_tree(sub, leaf, (*path, key)) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(build_tree(sub, leaf, (*path, i)) for i, sub in enumerate(space.spaces))
    return leaf(path)


def get_path(value: Any, path: Path) -> Any:
    for key in path:
        value = value[key]
    return value


def action_buffer_shape(space: spaces.Space[Any]) -> tuple[tuple[int, ...], str] | None:
    """Shape and dtype of one env's action in shared memory, or None when actions must travel pickled."""
    if isinstance(space, spaces.Discrete):
        return (), "int64"
    if isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
        return tuple(space.shape), np.dtype(space.dtype).str
    return None


@dataclasses.dataclass(frozen=True)
class BufferLayout:
    """The specs of every shared array of a batch; picklable, so workers can attach by name."""

    env_num: int
    obs_paths: tuple[Path, ...]
    ready: tuple[ArraySpec, ...]
    final: tuple[ArraySpec, ...]
    reward: ArraySpec
    flags: ArraySpec
    action: ArraySpec | None
    control: ArraySpec
    shared: bool = True
    pickled: bool = False
    """Observations and rewards travel pickled with the replies (no observation buffers)."""

    @classmethod
    def plan(cls, env_spaces: EnvSpaces, env_num: int, shared: bool = True, declared: bool = True) -> BufferLayout:
        """The layout for ``env_num`` envs; ``declared=False``: probed spaces (pickled actions, see the module)."""
        token = f"ding_{os.getpid()}_{secrets.token_hex(4)}"
        counter = iter(range(1_000_000))

        def spec(shape: Sequence[int], dtype: Any) -> ArraySpec:
            return ArraySpec(f"{token}_{next(counter)}", (env_num, *shape), np.dtype(dtype).str)

        pickled = not declared and not shared
        leaves = [] if pickled else obs_leaves(env_spaces.observation)
        action = action_buffer_shape(env_spaces.action) if declared else None
        return cls(
            env_num=env_num,
            obs_paths=tuple(path for path, _ in leaves),
            ready=tuple(spec(leaf.shape or (), leaf.dtype) for _, leaf in leaves),
            final=tuple(spec(leaf.shape or (), leaf.dtype) for _, leaf in leaves),
            reward=spec(env_spaces.reward.shape or (1,), env_spaces.reward.dtype or np.float32),
            flags=spec((4,), np.bool_),
            action=spec(action[0], action[1]) if action is not None else None,
            control=spec((2,), np.int64),
            shared=shared,
            pickled=pickled,
        )

    def all_specs(self) -> list[ArraySpec]:
        specs = [*self.ready, *self.final, self.reward, self.flags, self.control]
        return [*specs, self.action] if self.action is not None else specs

    @property
    def nbytes(self) -> int:
        return sum(spec.nbytes for spec in self.all_specs())


CONTROL_STEP, CONTROL_RESET_ON_DONE = 0, 1
"""Columns of the ``control`` buffer: 1 = step this env in the next batch; 1 = reset it when its episode ends."""


class SharedBuffers:
    """Every shared array of a batch, attached in this process."""

    def __init__(self, layout: BufferLayout, create: bool) -> None:
        self.layout = layout
        self._arrays: list[SharedArray] = []
        try:
            self.ready = [self._attach(spec, create) for spec in layout.ready]
            self.final = [self._attach(spec, create) for spec in layout.final]
            self.reward = self._attach(layout.reward, create)
            self.flags = self._attach(layout.flags, create)
            self.control = self._attach(layout.control, create)
            self.action = self._attach(layout.action, create) if layout.action is not None else None
        except BaseException:
            self.close()
            raise

    def _attach(self, spec: ArraySpec, create: bool) -> np.ndarray:
        if not self.layout.shared:  # each process keeps a private copy; rows travel through the pipe
            return np.zeros(spec.shape, dtype=np.dtype(spec.dtype))
        shared = SharedArray(spec, create)
        self._arrays.append(shared)
        return shared.array

    def write_obs(self, target: list[np.ndarray], env_id: int, obs: Any) -> None:
        paths = self.layout.obs_paths
        if len(paths) == 1 and not paths[0]:
            target[0][env_id] = obs
            return
        for buffer, path in zip(target, paths, strict=True):
            buffer[env_id] = get_path(obs, path)

    def all_specs(self) -> list[ArraySpec]:
        return self.layout.all_specs() if self.layout.shared else []

    def revoke(self) -> None:
        """Cut this attachment off the segments (see the module docstring); private buffers have nothing to cut.

        The segments and every other attachment, in this process or others, are untouched.
        """
        for shared in self._arrays:
            shared.revoke()

    def close(self) -> None:
        for shared in self._arrays:
            shared.close()
        self._arrays = []
