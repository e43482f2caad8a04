"""Transport ``"shm"``: the pipe channel with Ray actors on this node as its placement.

Ray places, starts and restarts the worker processes: one actor
(:class:`~ding.envs.env_manager.channels.ray.actor_pipe_worker.RayShmWorker`) per env group, with the requested
resources and ``max_restarts``, pinned to the manager's node. Each actor connects back over an abstract
``AF_UNIX`` socket (authenticated with a key the placement made) and runs the pipe worker's loop, so a batch step
costs what it costs the subprocess manager: a one-byte wake-up per actor, actions and results in shared memory.
Ray calls are made only to create, ping and kill actors.

Faults are the pipe channel's: a dead actor's process is seen at once (its ``pidfd`` is the handle's sentinel), a
hung one is killed with ``ray.kill`` when stopped, for Ray to restart it; the restarted incarnation connects again
and gets its envs built afresh; an actor Ray will not bring back (``max_restarts`` spent, or killed for good) is
replaced by a new one.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import secrets
import select
import signal
import socket
import struct
import time
from collections.abc import Mapping, Sequence
from multiprocessing import AuthenticationError, connection
from multiprocessing.connection import Connection
from typing import Any, cast

from ding.envs.env_manager.channels.pipe import WorkerHandle
from ding.envs.env_manager.channels.ray import cluster
from ding.envs.env_manager.channels.ray.actor_pipe_worker import RayShmWorker
from ding.envs.env_manager.channels.ray.actors import (
    EXIT_WAIT,
    ActorWatch,
    actor_options,
    kill_actors,
    named_resources,
    resource_request,
    wait_for_exit,
)
from ding.envs.env_manager.core.channel import WorkerSetup
from ding.errors import EnvManagerError, WorkerDiedError, WorkerTimeoutError

HANDSHAKE_TIMEOUT = 5.0
"""Seconds a connecting actor gets to authenticate and say which env group it serves."""
_POLL = 0.05


class ActorProcess:
    """What the pipe channel uses of a worker's process, for a Ray actor's process on this node.

    ``sentinel`` is a ``pidfd`` (readable once the process has exited, with no pid-reuse race);
    ``kill`` asks Ray to kill the actor, which Ray then restarts if ``max_restarts`` allows.
    """

    def __init__(self, ray: Any, actor: Any, pid: int) -> None:
        self._ray = ray
        self.actor = actor
        self.pid = pid
        self.exitcode: int | None = None  # not known here: the process is Ray's child, not this one's
        try:
            self.sentinel = os.pidfd_open(pid)
        except ProcessLookupError:  # gone already: a sentinel that is readable at once
            self.sentinel, write = os.pipe()
            os.close(write)

    def join(self, timeout: float | None = None) -> None:
        if self.sentinel >= 0:
            select.select([self.sentinel], [], [], timeout)

    def is_alive(self) -> bool:
        return self.sentinel >= 0 and not select.select([self.sentinel], [], [], 0)[0]

    def kill(self) -> None:
        self._ray.kill(self.actor, no_restart=False)

    def kill_now(self) -> None:
        """SIGKILL the process through its ``pidfd`` (no pid can be reused while it is open)."""
        if self.sentinel >= 0 and self.is_alive():
            with contextlib.suppress(ProcessLookupError, OSError):
                signal.pidfd_send_signal(self.sentinel, signal.SIGKILL)

    def close(self) -> None:
        if self.sentinel >= 0:
            os.close(self.sentinel)
            self.sentinel = -1


def _set_timeouts(sock: socket.socket, seconds: float) -> None:
    """Kernel-level receive and send timeouts (0: none), which also bound ``os.read`` on the descriptor."""
    value = struct.pack("ll", int(seconds), int((seconds % 1) * 1e6))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, value)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, value)


class RayActorsOnNode:
    """Pipe workers as Ray actors on this node that connect back to a local socket (see the module docstring)."""

    def __init__(self, connection: cluster.Connection, cfg: Mapping[str, Any], launch_timeout: float | None) -> None:
        """``cfg``: the manager's actor settings; ``launch_timeout``: seconds an actor may take to connect."""
        self._ray = cluster.import_ray()
        self.connection = connection
        self.options = actor_options(cfg)
        self.request = resource_request(cfg)
        self.launch_timeout = float(launch_timeout or 60.0)
        self.actors: list[Any] = []  # one actor handle per env group
        self.address = ""
        self._listener: socket.socket | None = None
        self._authkey = secrets.token_bytes(32)
        self._arrived: dict[int, tuple[Connection, int]] = {}  # connected actors not yet given their envs
        self._node_id = ""
        self._actor_class: Any = None

    @property
    def listening(self) -> bool:
        return self._listener is not None

    # ----- the placement protocol ----------------------------------------------------------------
    def open(self, group_count: int) -> None:
        """Join Ray, listen, and create every group's actor at once (Ray starts them in parallel)."""
        self.actors = [None] * group_count
        self.connection.open()
        self._actor_class = self._ray.remote(RayShmWorker)
        self._node_id = self._ray.get_runtime_context().get_node_id()
        self._listen(group_count)
        for w in range(group_count):
            self.actors[w] = self._new_actor(w)

    def start(self, setup: WorkerSetup) -> WorkerHandle:
        """Take the connection of the group's actor (its current incarnation) and send it its setup."""
        w = setup.index
        conn, pid = self._await_connection(w, setup.env_ids)
        handle = WorkerHandle(w, setup.env_ids, ActorProcess(self._ray, self.actors[w], pid), conn, kind="actor")
        with contextlib.suppress(OSError):  # a closed connection shows up as the actor's death when receiving
            conn.send_bytes(pickle.dumps(setup, protocol=pickle.HIGHEST_PROTOCOL))
        return handle

    def stop(self, handle: WorkerHandle) -> None:
        """Drop an actor's connection; a live (hung) actor is killed for Ray to restart.

        The process is gone when this returns (Ray's kill, or ours after :data:`EXIT_WAIT`): it shares the step
        buffers, and a hung actor waking up must not write the rows its successor's envs use.
        """
        process = cast(ActorProcess, handle.process)
        if process.is_alive():
            process.kill()
        process.join(EXIT_WAIT)
        process.kill_now()
        process.join(EXIT_WAIT)
        process.close()
        handle.conn.close()

    def finish(self, handles: Sequence[WorkerHandle], deadline: float) -> None:
        """Wait until ``deadline`` for the actors to close their envs and connections, then kill every actor."""
        open_conns = {handle.conn: handle for handle in handles}
        while open_conns and (remaining := deadline - time.monotonic()) > 0:
            for ready in connection.wait(list(open_conns), remaining):
                conn = cast(Connection, ready)
                try:
                    conn.recv_bytes()  # a late reply: the end of the connection follows
                except (EOFError, OSError):  # the worker closed its envs and its connection
                    open_conns.pop(conn)
        kill_actors(self.actors)
        for handle in handles:
            cast(ActorProcess, handle.process).close()
            handle.conn.close()
        wait_for_exit(self._ray, [(handle.process.pid, self._node_id) for handle in handles])

    def close(self) -> None:
        """Kill the actors left (a launch that failed part way), stop listening and leave Ray."""
        try:
            kill_actors(self.actors)
            self.actors = [None] * len(self.actors)
            for conn, _ in self._arrived.values():
                conn.close()
            self._arrived.clear()
            if self._listener is not None:
                self._listener.close()
                self._listener = None
        finally:
            self.connection.close()

    # ----- actors and their connections ----------------------------------------------------------
    def _listen(self, group_count: int) -> None:
        if self._listener is not None:
            return
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.address = f"\0ding-ray-shm-{os.getpid()}-{secrets.token_hex(8)}"
        listener.bind(self.address)
        listener.listen(max(16, group_count))
        listener.setblocking(False)
        self._listener = listener

    def _new_actor(self, w: int) -> Any:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        strategy = NodeAffinitySchedulingStrategy(node_id=self._node_id, soft=False)
        return self._actor_class.options(**self.options, scheduling_strategy=strategy).remote(
            self.address, self._authkey, w
        )

    def _await_connection(self, w: int, env_ids: list[int]) -> tuple[Connection, int]:
        ray = self._ray
        actor = f"actor {w} (envs {env_ids})"
        timeout = self.launch_timeout
        deadline = time.monotonic() + timeout
        watch = ActorWatch(ray, self.actors[w])
        last_death = ""
        while w not in self._arrived:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                if last_death:
                    raise WorkerDiedError(
                        f"{actor} did not connect within {timeout} s; its last incarnation died: {last_death}"
                    )
                raise WorkerTimeoutError(
                    f"{actor} did not connect within {timeout} s; can Ray place it on this node? It asks for "
                    f"{self.request or 'no resources'}, the cluster has {ray.cluster_resources()}"
                )
            try:
                death = watch.gave_up()
            except ray.exceptions.ActorUnschedulableError:
                raise EnvManagerError(self._refusal(actor)) from None
            if death is not None:  # Ray will not bring it back: start a new actor
                last_death = death
                self.actors[w] = self._new_actor(w)
                watch = ActorWatch(ray, self.actors[w])
            self._accept(min(_POLL, remaining))
        return self._arrived.pop(w)

    def _refusal(self, actor: str) -> str:
        """Why ``actor`` cannot run where transport 'shm' keeps it, and what works instead (one line)."""
        node: dict[str, Any] = next((n for n in self._ray.nodes() if n.get("NodeID") == self._node_id), {})
        return (
            f"transport 'shm' keeps actors on the trainer's node {node.get('NodeManagerAddress', '?')} (Ray node "
            f"{self._node_id[:12]}), but {actor} asks for {self.request or 'no resources'} and this node has "
            f"{named_resources(node.get('Resources', {}))}; use transport 'ray' or 'zmq' for actors on other nodes"
        )

    def _accept(self, timeout: float) -> None:
        """Accept one actor's connection if one comes within ``timeout`` s; strangers are turned away."""
        listener = self._listener
        assert listener is not None
        if not select.select([listener], [], [], timeout)[0]:
            return
        try:
            sock, _ = listener.accept()
        except BlockingIOError:
            return
        sock.setblocking(True)
        _set_timeouts(sock, HANDSHAKE_TIMEOUT)
        conn = Connection(sock.detach())
        try:
            connection.deliver_challenge(conn, self._authkey)
            connection.answer_challenge(conn, self._authkey)
            index, pid, node = pickle.loads(conn.recv_bytes(4096))  # authenticated: one of this manager's actors
            with socket.socket(fileno=os.dup(conn.fileno())) as same:
                _set_timeouts(same, 0)
        except (OSError, EOFError, AuthenticationError, pickle.UnpicklingError, ValueError, TypeError):
            conn.close()  # a stranger, or an actor that died mid-handshake: its group waits for the next
            return
        if not (isinstance(index, int) and 0 <= index < len(self.actors)) or node != self._node_id:
            conn.close()
            return
        stale = self._arrived.pop(index, None)
        if stale is not None:  # an earlier incarnation that died before it was set up
            stale[0].close()
        self._arrived[index] = (conn, int(pid))
