"""``RayShmEnvManager``: the ray manager's ``"shm"`` transport, Ray for the processes and shared memory for the data.

Ray places, starts and restarts the worker processes: one actor
(:class:`~ding.envs.env_manager.ray_shm_worker.RayShmWorker`) per group of ``envs_per_worker`` envs,
with the requested resources and ``max_restarts``, pinned to the manager's node. Each actor connects
back over an abstract ``AF_UNIX`` socket (authenticated with a key the manager made) and runs the
subprocess manager's worker loop, so a batch step costs what it costs the subprocess manager: a
one-byte wake-up per actor, actions and results in shared memory. Ray calls are made only to create,
ping and kill actors.

Faults are the subprocess manager's, mapped onto Ray: a dead actor's process is seen at once (its
``pidfd``), a hung one after ``step_timeout`` is killed with ``ray.kill`` for Ray to restart it; the
restarted incarnation connects again and gets its envs built afresh; an actor Ray will not bring back
(``max_restarts`` spent, or killed for good) is replaced by a new one. ``max_retry`` bounds the faults.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import secrets
import select
import socket
import struct
import time
import weakref
from collections.abc import Mapping, Sequence
from multiprocessing import AuthenticationError, connection
from multiprocessing.connection import Connection
from typing import Any, ClassVar, cast

from ding.envs.env_manager import ray_cluster
from ding.envs.env_manager.commands import Command, CommandKind
from ding.envs.env_manager.ray_manager import (
    CLOSE_GRACE,
    EXIT_WAIT,
    RayEnvManager,
    actor_options,
    check_ray_config,
    resource_request,
)
from ding.envs.env_manager.ray_shm_worker import RayShmWorker
from ding.envs.env_manager.subprocess_manager import SyncSubprocessEnvManager, WorkerHandle
from ding.errors import ConfigError, EnvManagerError, WorkerDiedError, WorkerTimeoutError

HANDSHAKE_TIMEOUT = 5.0
"""Seconds a connecting actor gets to authenticate and say which env group it serves."""
_POLL = 0.05


class ActorProcess:
    """What the subprocess manager uses of a worker's process, for a Ray actor's process on this node.

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
        with contextlib.suppress(Exception):
            self._ray.kill(self.actor, no_restart=False)

    def close(self) -> None:
        if self.sentinel >= 0:
            os.close(self.sentinel)
            self.sentinel = -1


class ActorHandle(WorkerHandle):
    """The manager's side of one actor: its connection and its process."""

    def describe(self) -> str:
        return f"actor {self.index} (pid {self.process.pid}, envs {self.env_ids})"


def _set_timeouts(sock: socket.socket, seconds: float) -> None:
    """Kernel-level receive and send timeouts (0: none), which also bound ``os.read`` on the descriptor."""
    value = struct.pack("ll", int(seconds), int((seconds % 1) * 1e6))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, value)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, value)


class RayShmEnvManager(SyncSubprocessEnvManager):
    """Envs in Ray actors on this node that step through shared memory; ``step`` returns when every env has its result.

    Built by ``create_env_manager({"type": "ray", "transport": "shm", ...}, env_fns)``.
    """

    manager_type = "ray"
    config: ClassVar[dict[str, Any]] = RayEnvManager.config

    def __init__(self, env_fn: Sequence[Any], cfg: Mapping[str, Any] | None = None) -> None:
        cfg = dict(cfg or {})
        if cfg.get("transport", "shm") != "shm":
            raise ConfigError(
                f"RayShmEnvManager runs transport 'shm', got {cfg['transport']!r}; build the ray manager with "
                f"create_env_manager({{'type': 'ray', 'transport': {cfg['transport']!r}}}, env_fns)"
            )
        super().__init__(env_fn, {**cfg, "transport": "shm"})
        check_ray_config(self._cfg)
        self._cfg.shared_memory = True
        self._ray = ray_cluster.import_ray()
        self._actor_class: Any = None
        self._actors: list[Any] = [None] * len(self._groups)  # one actor handle per env group
        self._listener: socket.socket | None = None
        self._address = ""
        self._authkey = secrets.token_bytes(32)
        self._arrived: dict[int, tuple[Connection, int]] = {}  # connected actors not yet given their envs
        self._node_id = ""
        self._connected = False
        weakref.finalize(self, ray_cluster.kill_actors, self._actors)

    @property
    def local_address(self) -> str | None:
        """The abstract ``AF_UNIX`` address the actors connect to (after ``launch``), starting with a NUL byte."""
        return self._address if self._listener is not None else None

    @property
    def worker_actors(self) -> list[Any]:
        """The Ray actor handles, one per group of ``envs_per_worker`` envs (None before launch, after close)."""
        return list(self._actors)

    # ----- actors --------------------------------------------------------------------------------
    def _create_envs(self) -> None:
        if not self._connected:
            init_kwargs = {"include_dashboard": False, **dict(self._cfg.init_kwargs)}
            self._connected = ray_cluster.connect(self._cfg.address, init_kwargs)
            self._actor_class = self._ray.remote(RayShmWorker)
        try:
            self._node_id = self._ray.get_runtime_context().get_node_id()
            self._listen()
            for w in range(len(self._groups)):  # all at once: Ray starts them in parallel
                self._actors[w] = self._new_actor(w)
        except BaseException:
            self.close()
            raise
        super()._create_envs()

    def _listen(self) -> None:
        if self._listener is not None:
            return
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._address = f"\0ding-ray-shm-{os.getpid()}-{secrets.token_hex(8)}"
        listener.bind(self._address)
        listener.listen(max(16, len(self._groups)))
        listener.setblocking(False)
        self._listener = listener

    def _new_actor(self, w: int) -> Any:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        options = actor_options(self._cfg)
        options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id=self._node_id, soft=False)
        return self._actor_class.options(**options).remote(self._address, self._authkey, w)

    def _start_worker(self, w: int) -> None:
        """Take the connection of actor ``w``'s current incarnation and send it its envs."""
        conn, pid = self._await_connection(w)
        self._workers[w] = ActorHandle(w, self._groups[w], ActorProcess(self._ray, self._actors[w], pid), conn)
        setup = (self._groups[w], self._blobs[w], self._layout, self._spin.limit)
        with contextlib.suppress(OSError):  # a closed connection shows up as the actor's fault when collecting
            conn.send_bytes(pickle.dumps(setup, protocol=pickle.HIGHEST_PROTOCOL))

    def _await_connection(self, w: int) -> tuple[Connection, int]:
        ray = self._ray
        timeout = float(self._launch_timeout() or 60.0)
        deadline = time.monotonic() + timeout
        watch = ray_cluster.ActorWatch(ray, self._actors[w])
        last_death = ""
        while w not in self._arrived:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                if last_death:
                    raise WorkerDiedError(
                        f"actor {w} (envs {self._groups[w]}) did not connect within {timeout} s; its last "
                        f"incarnation died: {last_death}"
                    )
                raise WorkerTimeoutError(
                    f"actor {w} (envs {self._groups[w]}) did not connect within {timeout} s; can Ray place it on "
                    f"this node? It asks for {resource_request(self._cfg) or 'no resources'}, the cluster has "
                    f"{ray.cluster_resources()}"
                )
            try:
                death = watch.gave_up()
            except ray.exceptions.ActorUnschedulableError:
                raise EnvManagerError(
                    f"actor {w} (envs {self._groups[w]}) cannot be placed on this node, where transport 'shm' "
                    f"keeps its actors: it asks for {resource_request(self._cfg) or 'no resources'}, this node "
                    f"has {self._node_resources()}"
                ) from None
            if death is not None:  # Ray will not bring it back: start a new actor
                last_death = death
                self._actors[w] = self._new_actor(w)
                watch = ray_cluster.ActorWatch(ray, self._actors[w])
            self._accept(min(_POLL, remaining))
        return self._arrived.pop(w)

    def _node_resources(self) -> dict[str, float]:
        node: dict[str, Any] = next((n for n in self._ray.nodes() if n.get("NodeID") == self._node_id), {})
        return dict(node.get("Resources", {}))

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
            conn.close()
            return
        if not (isinstance(index, int) and 0 <= index < len(self._groups)) or node != self._node_id:
            conn.close()
            return
        stale = self._arrived.pop(index, None)
        if stale is not None:  # an earlier incarnation that died before it was set up
            stale[0].close()
        self._arrived[index] = (conn, int(pid))

    def _kill_worker(self, w: int) -> None:
        """Drop actor ``w``'s connection; a live (hung) actor is killed for Ray to restart."""
        handle = self._workers[w]
        if handle is None:
            return
        self._workers[w] = None
        process = handle.process
        assert isinstance(process, ActorProcess)
        if process.is_alive():
            process.kill()
        process.join(EXIT_WAIT)
        process.close()
        handle.conn.close()

    def _close_envs(self) -> None:
        try:
            handles = [h for h in self._workers if h is not None]
            for handle in handles:
                with contextlib.suppress(OSError):
                    handle.conn.send_bytes(pickle.dumps(Command(CommandKind.CLOSE)))
            open_conns = {handle.conn: handle for handle in handles}
            deadline = time.monotonic() + CLOSE_GRACE
            while open_conns and (remaining := deadline - time.monotonic()) > 0:
                for ready in connection.wait(list(open_conns), remaining):
                    conn = cast(Connection, ready)
                    try:
                        conn.recv_bytes()  # a late reply: the end of the connection follows
                    except (EOFError, OSError):  # the worker closed its envs and its connection
                        open_conns.pop(conn)
            ray_cluster.kill_actors(self._actors)
            exit_deadline = time.monotonic() + EXIT_WAIT
            for handle in handles:
                process = handle.process
                assert isinstance(process, ActorProcess)
                process.join(max(0.0, exit_deadline - time.monotonic()))
                process.close()
                handle.conn.close()
            self._workers[:] = [None] * len(self._workers)
            self._actors[:] = [None] * len(self._actors)
            for conn, _ in self._arrived.values():
                conn.close()
            self._arrived.clear()
            if self._listener is not None:
                self._listener.close()
                self._listener = None
            self._free_buffers()
        finally:
            if self._connected:
                self._connected = False
                ray_cluster.release()
