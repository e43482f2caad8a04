"""Ray actors as the placement of zmq workers: Ray for the processes, zmq for the data.

Ray places, starts and restarts the worker processes: one actor
(:class:`~ding.envs.env_manager.channels.zmq.ray_worker.RayZmqWorker`) per env group, with the requested
resources and ``max_restarts``. Each actor runs ding's zmq worker loop, which connects back to the hub's tcp
endpoint with the CURVE key pair the channel made in memory (the hub admits that key only), so steps travel over
zmq and never through Ray calls. Actors that share the manager's host (and network namespace) connect to a
second, abstract ``ipc`` address of the same socket instead, with the same keys: no tcp stack per message.

Faults: the hub drops a worker as soon as its connection closes (a killed actor), after ``heartbeat_timeout``
of silence, or when the core stops its group after a timeout (then the actor is killed with ``ray.kill`` so
that Ray restarts it). The restarted actor registers as a new worker under a new routing id and takes its
group again; an actor Ray will not bring back is replaced by a new one.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ding.envs.env_manager.channels.pipe import CLOSE_GRACE
from ding.envs.env_manager.channels.ray.actors import (
    ActorWatch,
    actor_options,
    kill_actors,
    no_node_can_take,
    resource_request,
    wait_for_exit,
)
from ding.envs.env_manager.channels.ray.cluster import Connection, import_ray
from ding.envs.env_manager.channels.zmq.hub import Hub
from ding.envs.env_manager.channels.zmq.placement import Binding
from ding.envs.env_manager.channels.zmq.ray_worker import RayZmqWorker
from ding.envs.env_manager.channels.zmq.socket import local_ipc_address
from ding.envs.env_manager.core.channel import WorkerSetup
from ding.envs.env_manager.core.failure import Failure, FailureKind
from ding.errors import WorkerTimeoutError


class RayActors:
    """One Ray actor per env group, each running a zmq worker (see the module docstring).

    ``cfg`` holds the ray manager's actor settings (``resources_per_worker``, ``num_cpus_per_worker``,
    ``max_restarts``) and ``endpoint`` (None: tcp on this node's Ray address); ``start_timeout`` is how long an
    actor may take to register; ``groups`` are the env ids of each group (for error messages).
    """

    def __init__(
        self, connection: Connection, cfg: Mapping[str, Any], start_timeout: float, groups: Sequence[Sequence[int]]
    ) -> None:
        self._ray = import_ray()
        self.groups = [list(group) for group in groups]
        self.connection = connection
        self.endpoint: str | None = cfg["endpoint"]
        self.options = actor_options(cfg)
        self.options.pop("max_task_retries")  # no method of this actor is retried or replayed anyway
        self.request = resource_request(cfg)
        self.start_timeout = start_timeout
        self.actors: list[Any] = []  # one actor handle per env group
        self.prefix = f"ray-{os.getpid()}-{secrets.token_hex(4)}"
        self.retired: set[bytes] = set()  # workers replaced after a fault: never given envs again
        self._actor_class: Any = None

    # ----- the placement protocol ----------------------------------------------------------------
    def prepare(self) -> Binding:
        """Join Ray; the hub listens on ``endpoint`` (or this node's address) and on a local ``ipc`` address."""
        self.connection.open()
        if self._actor_class is None:
            self._actor_class = self._ray.remote(RayZmqWorker)
        return Binding(
            self.endpoint or self._default_endpoint(),
            local_address=local_ipc_address(),  # actors on this host connect here: no tcp stack per message
            drop_on_disconnect=True,  # Ray restarts the process: a closed connection means a dead one
        )

    def bring_up(self, hub: Hub, group_count: int) -> None:
        """Create one actor per env group and wait until each has registered."""
        self.actors = [self._new_actor(w, hub) for w in range(group_count)]
        failure = hub.wait_for(
            lambda: len(hub.peers) >= group_count, self.start_timeout, f"{group_count} actors registering"
        )
        if failure is None:
            return
        if failure.kind is not FailureKind.TIMEOUT:
            raise failure.error()
        with hub.lock:
            registered = {self._actor_index(identity) for identity in hub.peers}
        w = min(set(range(group_count)) - registered)
        raise WorkerTimeoutError(
            f"actor {w} (pid None, envs {self.groups[w]}) did not start within {self.start_timeout} s; can Ray "
            f"place it? It asks for {self.request or 'no resources'}, the cluster has "
            f"{self._ray.cluster_resources()}"
        )

    def choose(self, hub: Hub, setup: WorkerSetup) -> bytes | Failure:
        """Actor ``w``'s worker: registered already, registering after Ray's restart, or a replacement actor's."""
        w = setup.index
        deadline = time.monotonic() + self.start_timeout
        watch = ActorWatch(self._ray, self.actors[w])
        wait = 0.0
        while (identity := hub.idle_peer(lambda i: self._serves(i, w), wait)) is None:
            if time.monotonic() >= deadline:
                why = no_node_can_take(self._ray, self.request) or f"max_restarts={self.options['max_restarts']}"
                return Failure.died(
                    f"actor {w} (envs {setup.env_ids}) has no worker registered within {self.start_timeout} s "
                    f"after a fault ({why})"
                )
            if watch.gave_up() is not None:  # Ray will not bring it back: start a new actor
                self.actors[w] = self._new_actor(w, hub)
                watch = ActorWatch(self._ray, self.actors[w])
            wait = 0.02
        return identity

    def dropped(self, w: int, identity: bytes) -> None:
        """Retire the dropped worker; its actor, if still connected (hung), is killed for Ray to restart."""
        self.retired.add(identity)
        if w < len(self.actors):
            with contextlib.suppress(Exception):  # dead already: Ray restarts it, or has given it up
                self._ray.kill(self.actors[w], no_restart=False)

    def close(self, told: Sequence[bytes]) -> None:
        """Give the workers told to close ``CLOSE_GRACE`` s, kill every actor, wait for their exit here, leave Ray."""
        actors, self.actors = self.actors, []
        try:
            if actors and self._ray.is_initialized():
                registered = {self._actor_index(identity) for identity in told if identity not in self.retired}
                self._stop(actors, registered)
        finally:
            self.connection.close()

    # ----- actors --------------------------------------------------------------------------------
    def _default_endpoint(self) -> str:
        """tcp on this node's address as Ray reports it; loopback when every node of the cluster is this one."""
        here = self._ray.util.get_node_ip_address()
        nodes = [node for node in self._ray.nodes() if node.get("Alive")]
        host = "127.0.0.1" if all(node.get("NodeManagerAddress") == here for node in nodes) else here
        return f"tcp://{host}:*"

    def _new_actor(self, w: int, hub: Hub) -> Any:
        return self._actor_class.options(**self.options).remote(
            hub.endpoint, hub.local_keys, f"{self.prefix}-{w}", hub.max_bytes, hub.local_endpoint
        )

    def _actor_index(self, identity: bytes) -> int | None:
        """The env group of the actor whose worker registered as ``identity`` (``<prefix>-<w>-<pid>``)."""
        head = f"{self.prefix}-".encode()
        if not identity.startswith(head):
            return None
        return int(identity[len(head) :].split(b"-")[0])

    def _serves(self, identity: bytes, w: int) -> bool:
        return identity not in self.retired and self._actor_index(identity) == w

    def _stop(self, actors: list[Any], registered: set[int | None]) -> None:
        ray = self._ray
        refs = []
        for w, actor in enumerate(actors):
            if w in registered:
                with contextlib.suppress(Exception):  # an actor that is gone has nothing to close
                    refs.append(actor.join.remote(CLOSE_GRACE))
        ready: list[Any] = []
        with contextlib.suppress(Exception):  # Ray shutting down: the actors are killed below either way
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=CLOSE_GRACE + 1.0)
        processes: list[tuple[int | None, str | None]] = []
        for ref in ready:
            with contextlib.suppress(Exception):  # an actor that died while closing: nothing to wait for
                pid, node, _ = ray.get(ref)
                processes.append((pid, node))
        kill_actors(actors)
        wait_for_exit(ray, processes)
