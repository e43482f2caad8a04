"""Where zmq workers run: the placement protocol, and workers on this host plus workers registering from anywhere.

A :class:`ZmqChannel <ding.envs.env_manager.channels.zmq.channel.ZmqChannel>` talks to whatever workers register
with its hub; a placement decides where the hub listens, which workers it brings up, and which registered worker
takes an env group. :class:`LocalAndRemoteWorkers` starts processes on this host and waits for workers started
by hand elsewhere (``ding -m worker --connect tcp://HOST:PORT --keys DIR``); the Ray placement
(:class:`~ding.envs.env_manager.channels.zmq.ray_actors.RayActors`) runs each worker in a Ray actor.
"""

from __future__ import annotations

import dataclasses
import functools
import multiprocessing
import os
import secrets
from collections.abc import Sequence
from multiprocessing import resource_tracker
from multiprocessing.process import BaseProcess
from typing import Any, Protocol

from ding.envs.env_manager.channels.zmq.hub import Hub
from ding.envs.env_manager.channels.zmq.worker import WorkerOptions, local_worker_main
from ding.envs.env_manager.core.channel import WorkerSetup
from ding.envs.env_manager.core.failure import Failure


@dataclasses.dataclass(frozen=True)
class Binding:
    """Where the hub listens, and what a closed connection means.

    >>> Binding("tcp://127.0.0.1:*").drop_on_disconnect
    False
    """

    endpoint: str  # "ipc", "tcp", "ipc:///path" or "tcp://HOST:PORT" (see channels.zmq.socket.resolve_endpoint)
    local_address: str | None = None  # a second, abstract ipc address for workers in this host's network namespace
    drop_on_disconnect: bool = False  # every worker runs under a supervisor that restarts it: closed means dead


class ZmqPlacement(Protocol):
    """Where the workers of a zmq channel run (see the module docstring)."""

    def prepare(self) -> Binding:
        """Get ready for a launch (join a cluster, say) and tell where the hub should listen."""
        ...

    def bring_up(self, hub: Hub, group_count: int) -> None:
        """Start the workers of a launch and wait until they registered with ``hub``; raise when they do not."""
        ...

    def choose(self, hub: Hub, setup: WorkerSetup) -> bytes | Failure:
        """The registered worker to take env group ``setup.index``, or why there is none."""
        ...

    def dropped(self, w: int, identity: bytes) -> None:
        """The hub dropped worker ``identity`` after env group ``w`` failed on it."""
        ...

    def close(self, told: Sequence[bytes]) -> None:
        """After the hub shut down (``told``: the workers it told to close): stop what the placement started."""
        ...


class LocalAndRemoteWorkers:
    """``local`` worker processes on this host and ``remote`` workers that register from anywhere.

    When a worker fails, its env group goes to an idle registered worker, to a fresh local worker (when
    ``local`` > 0), or to the least loaded worker.

    >>> placement = LocalAndRemoteWorkers("ipc", "spawn", local=2, remote=0, wait_timeout=60.0, start_timeout=60.0)
    >>> placement.prepare().endpoint, placement.context.get_start_method()
    ('ipc', 'spawn')
    """

    def __init__(
        self,
        endpoint: str,
        start_method: str | None,
        local: int,
        remote: int,
        wait_timeout: float,
        start_timeout: float,
    ) -> None:
        """``wait_timeout``: seconds a launch waits for every worker; ``start_timeout``: for one fresh local one."""
        self.endpoint = endpoint
        self.context: Any = multiprocessing.get_context(start_method or "fork")
        self.local, self.remote = local, remote
        self.wait_timeout, self.start_timeout = wait_timeout, start_timeout

    def prepare(self) -> Binding:
        return Binding(self.endpoint)

    def bring_up(self, hub: Hub, group_count: int) -> None:
        self._start(hub, self.local)
        wanted = self.local + self.remote
        failure = hub.wait_for(lambda: len(hub.peers) >= wanted, self.wait_timeout, f"{wanted} workers registering")
        if failure is not None:
            raise failure.error()

    def choose(self, hub: Hub, setup: WorkerSetup) -> bytes | Failure:
        identity = hub.idle_peer()
        if identity is None and self.local:
            fresh = self._start(hub, 1)[0]
            failure = hub.wait_for(lambda: fresh in hub.peers, self.start_timeout, "a new local worker")
            if failure is not None:
                return failure
            identity = fresh
        if identity is None:
            identity = hub.least_loaded_peer()
        if identity is None:
            return Failure.died(
                f"no worker left to run envs {setup.env_ids}: every worker died or was cut off; start more "
                f"workers with `ding -m worker --connect {hub.endpoint} --keys DIR`"
            )
        return identity

    def dropped(self, w: int, identity: bytes) -> None:
        pass  # the hub killed it if it was local; a remote one is told to forget its groups

    def close(self, told: Sequence[bytes]) -> None:
        pass  # the hub joined (or killed) the local workers; remote ones were told to close

    def _start(self, hub: Hub, count: int) -> list[bytes]:
        """Start ``count`` worker processes on this host; they register like any other worker."""
        resource_tracker.ensure_running()  # forked workers then share it: segments they attach stay the manager's
        started = []
        for _ in range(count):
            identity = f"local-{os.getpid()}-{secrets.token_hex(4)}".encode()
            options = WorkerOptions(hub.endpoint, hub.local_keys, identity, max_message_bytes=hub.max_bytes)
            hub.start_local(identity, functools.partial(self._process, options))
            started.append(identity)
        return started

    def _process(self, options: WorkerOptions) -> BaseProcess:
        process: BaseProcess = self.context.Process(
            target=local_worker_main, args=(options, os.getpid()), name="ding-zmq-worker", daemon=True
        )
        process.start()
        return process
