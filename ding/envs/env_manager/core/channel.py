"""The channel protocol: how the batch core reaches the workers that hold its envs.

A manager splits its envs into groups of ``envs_per_worker``; group ``w`` lives in one worker. The core
(:class:`~ding.envs.env_manager.core.batch_core.BatchCore`) decides *what* to say to each worker and what the
answers mean; a channel only carries bytes to and from worker ``w`` and tells when one is gone:

============  =========================================================================================
``open``      get ready to start workers (bind a socket, join a Ray cluster); called once per launch
``start``     start the worker of group ``w`` (where: the channel's placement) and hand it its setup
``send``      one message to worker ``w``; a worker already gone gives a :class:`Failure`
``poll``      which of some workers have an answer (or died), waiting up to a timeout for the first
``receive``   one answer from each of some workers; a dead or silent one gives a :class:`Failure`
``handed_over``  ``send`` has rung its workers and returns to the caller's work: the pipe and zmq channels' caller
              gives its core up once when it keeps finding its quick replies in (:class:`~.spin.CoreYield`); the
              thread and Ray-call channels do nothing
``stop``      drop worker ``w`` after a failure (a live one is killed); ``start`` gives the group a new one
``close``     ask every worker to close its envs, wait a grace period, kill what is left, free everything
``pids``      liveness and monitoring: each group's worker process id (None: none running)
``codec``     how the workers encode their answers (:mod:`~ding.envs.env_manager.core.codec`): pickle for the
              trainer's own processes, threads and Ray actors, data only for zmq peers
``late_replies``  replies the channel dropped because they came after their request was given up on (a hung
              worker's answer at last); never delivered
============  =========================================================================================

A worker's first answer after ``start`` is its startup: an encoded ``{env_id: EnvSpaces}`` of the envs it built,
or a :class:`Failure` when one could not be built. Every later answer is the reply to one message, in order.
Channels: :mod:`~ding.envs.env_manager.channels.pipe` (a pipe plus shared memory, local processes or Ray actors
on this node), :mod:`~ding.envs.env_manager.channels.zmq` (ipc or CURVE tcp; local, remote or Ray-actor workers)
and :mod:`~ding.envs.env_manager.channels.ray` (one Ray call per message).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Protocol

from ding.envs.env_manager.core.codec import Codec
from ding.envs.env_manager.core.doorbell import DoorbellRef
from ding.envs.env_manager.core.failure import Failure
from ding.envs.env_manager.core.shm import BufferLayout
from ding.envs.env_manager.core.spin import SpinBudget

Reply = bytes | Failure
"""What a worker answered, or why it did not."""


@dataclasses.dataclass(frozen=True)
class WorkerSetup:
    """What a worker needs to serve group ``index``: its env ids, their pickled constructors, the buffer layout."""

    index: int
    env_ids: list[int]
    env_fns_blob: bytes  # cloudpickle of the group's constructors
    layout: BufferLayout | None  # None until the spaces are known (probing); sent later with ATTACH
    spin_limit: float  # seconds a worker may poll for its next message before it blocks
    state_key: bytes = b""  # the trainer's env state key (ding.envs.env_state), for workers that cannot inherit it
    doorbell: DoorbellRef | None = None  # the worker's doorbell (core.doorbell), given by a channel that rings one


class Channel(Protocol):
    """The transport between the batch core and its workers (see the module's table)."""

    codec: Codec

    @property
    def late_replies(self) -> int: ...

    def open(self, group_count: int) -> None: ...

    def start(self, setup: WorkerSetup) -> None: ...

    def send(self, w: int, message: bytes) -> Failure | None: ...

    def poll(self, workers: Sequence[int], timeout: float | None) -> list[int]: ...

    def handed_over(self, quick: bool) -> None:
        """``send`` has rung its workers, whose replies are ``quick`` (the pipe channel may yield the caller's core
        to one of them)."""
        ...

    def receive(
        self, workers: Sequence[int], timeout: float | None, spin: SpinBudget | None = None
    ) -> dict[int, Reply]: ...

    def stop(self, w: int) -> None: ...

    def close(self) -> None: ...

    def pids(self) -> list[int | None]: ...
