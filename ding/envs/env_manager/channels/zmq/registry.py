"""Who the zmq workers are and whether they live: registration, the env groups each holds, liveness.

Workers register with ``HELLO`` and are welcomed. Every message from a worker counts as a sign of life;
workers send heartbeats from a thread and the manager pings them. A worker silent for ``heartbeat_timeout``
seconds, unreachable (when every worker runs under a supervisor that restarts it), or (started locally)
exited is dropped, and the groups it held get a :class:`~ding.envs.env_manager.core.failure.Failure`. A
dropped worker that speaks again is told to forget its groups and register afresh.

:class:`Registry` is the part of :class:`~ding.envs.env_manager.channels.zmq.hub.Hub` that knows the workers;
the hub adds the requests and replies of each env group. Methods starting with ``_`` run with the hub's lock
held.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from multiprocessing.process import BaseProcess

from ding.envs.env_manager.channels.zmq.protocol import (
    FORGET,
    HEARTBEAT_SUFFIX,
    PING,
    VERSION,
    WELCOME,
    MalformedMessage,
    Message,
    decode_json,
    encode,
    encode_json,
)
from ding.envs.env_manager.channels.zmq.refusals import REFUSED_MESSAGE, CountedLog
from ding.envs.env_manager.channels.zmq.socket import RouterSocket
from ding.envs.env_manager.core.failure import Failure

logger = logging.getLogger("ding.zmq")
PROBE_WINDOW = 1.0
"""Seconds after a closed connection during which a hub that drops disconnected workers looks for them."""
PROBE_INTERVAL = 0.02


@dataclasses.dataclass
class Peer:
    """A registered worker."""

    identity: bytes
    host: str
    pid: int
    last_seen: float
    process: BaseProcess | None = None
    slots: set[int] = dataclasses.field(default_factory=set)

    def describe(self) -> str:
        where = "local" if self.process is not None else f"on {self.host}"
        return f"worker {self.identity.decode(errors='replace')} (pid {self.pid} {where})"


class Registry:
    """The registered workers, the env group (``slot``) each holds, and their liveness."""

    def __init__(
        self, socket: RouterSocket, heartbeat_interval: float, heartbeat_timeout: float, drop_on_disconnect: bool
    ) -> None:
        self.socket = socket
        self.interval, self.timeout = heartbeat_interval, heartbeat_timeout
        self.drop_on_disconnect = drop_on_disconnect
        self.lock = threading.Lock()
        self.peers: dict[bytes, Peer] = {}
        self.dropped: dict[bytes, float] = {}  # identity -> when it was last told to forget
        self.pending_local: dict[bytes, BaseProcess] = {}  # started here, not registered yet
        self.slot_peer: dict[int, bytes] = {}
        self.slot_failure: dict[int, Failure] = {}  # slots without a worker, and why
        self._sentinels: dict[int, bytes] = {}
        self._probe_until = 0.0  # while a connection closed recently: look for the worker that lost it
        self._next_ping = 0.0

    @property
    def refusals(self) -> CountedLog:
        """Refused connections and messages (counted and logged a few lines at a time)."""
        return self.socket.refusals

    def start_local(self, identity: bytes, start: Callable[[], BaseProcess]) -> None:
        """Start a worker process on this host (``start``) that will register as ``identity``.

        It is started with the lock held, so its registration is known to be local; its exit is noticed at once.
        """
        with self.lock:
            process = start()
            self.pending_local[identity] = process
            self._sentinels[process.sentinel] = identity
            self.socket.watch(process.sentinel)

    def least_loaded_peer(self) -> bytes | None:
        with self.lock:
            live = sorted(self.peers.values(), key=lambda p: len(p.slots))
            return live[0].identity if live else None

    def peer_of(self, slot: int) -> Peer | None:
        identity = self.slot_peer.get(slot)
        return self.peers.get(identity) if identity is not None else None

    def drop_slot_peer(self, slot: int, reason: str) -> None:
        """Drop the worker holding ``slot`` (after a fault); every group it held must be placed again."""
        with self.lock:
            identity = self.slot_peer.get(slot)
            if identity is not None and identity in self.peers:
                self._drop(self.peers[identity], reason)

    # ----- internals (lock held) -----------------------------------------------------------------
    def _release(self, slot: int, failure: Failure) -> None:
        """``slot`` has no worker any more; its next reply is ``failure``."""
        self.slot_peer.pop(slot, None)
        self.slot_failure[slot] = failure

    def _drop(self, peer: Peer, reason: str) -> None:
        logger.warning("dropping %s: %s", peer.describe(), reason)
        self.peers.pop(peer.identity, None)
        self.dropped[peer.identity] = 0.0
        for slot in peer.slots:
            self._release(slot, Failure.died(reason))
        peer.slots = set()
        if peer.process is not None:
            self._unwatch(peer.process)
            if peer.process.is_alive():
                peer.process.kill()
            peer.process.join()
        else:
            self._forget(peer.identity, time.monotonic())

    def _forget(self, identity: bytes, now: float) -> None:
        """Tell a dropped worker (rate-limited) to drop its groups and register afresh."""
        if now - self.dropped.get(identity, 0.0) >= self.interval:
            self.dropped[identity] = now
            self.socket.send(identity, encode(FORGET))

    def _unwatch(self, process: BaseProcess) -> None:
        self.socket.unwatch(process.sentinel)
        self._sentinels.pop(process.sentinel, None)

    def _heard(self, identity: bytes, now: float) -> bool:
        """A sign of life from ``identity`` (a heartbeat socket counts for its worker); False if not registered."""
        base = identity[: -len(HEARTBEAT_SUFFIX)] if identity.endswith(HEARTBEAT_SUFFIX) else identity
        peer = self.peers.get(base)
        if peer is not None:
            peer.last_seen = now
            return True
        if base in self.dropped:
            self._forget(base, now)
        return False

    def _hello(self, identity: bytes, message: Message, now: float) -> None:
        try:
            info = decode_json(message.payload, ["host", "pid", "version"])
            if not isinstance(info["host"], str) or isinstance(info["pid"], bool) or not isinstance(info["pid"], int):
                raise MalformedMessage(f"host must be a string and pid an int, got {info!r:.200}")
            if info["version"] != VERSION:
                raise MalformedMessage(f"worker speaks protocol version {info['version']!r}, this manager {VERSION}")
        except MalformedMessage as err:
            self.refusals.count(
                REFUSED_MESSAGE, repr(identity[:64]), "dropped a malformed HELLO from %r: %s", identity[:64], err
            )
            return
        if identity.endswith(HEARTBEAT_SUFFIX):
            self.refusals.count(
                REFUSED_MESSAGE,
                repr(identity[:64]),
                "dropped a HELLO from %r: that routing id is reserved for heartbeats",
                identity[:64],
            )
            return
        if identity not in self.peers:
            process = self.pending_local.pop(identity, None)
            pid = process.pid if process is not None and process.pid is not None else info["pid"]
            self.peers[identity] = Peer(identity, info["host"], pid, now, process)
            self.dropped.pop(identity, None)
            logger.info("registered %s", self.peers[identity].describe())
        self.peers[identity].last_seen = now
        settings = {"heartbeat_interval": self.interval, "heartbeat_timeout": self.timeout}
        self.socket.send(identity, encode(WELCOME, encode_json(settings)))

    def _exited(self, fds: list[int]) -> None:
        """Local worker processes whose sentinels fired: a registered one is dropped (``wait_for`` reports others)."""
        for fd in fds:
            identity = self._sentinels.get(fd)
            if identity is None:
                continue
            peer = self.peers.get(identity)
            if peer is not None and peer.process is not None and peer.process.exitcode is not None:
                self._drop(peer, f"{peer.describe()} died (exit code {peer.process.exitcode})")
            process = self.pending_local.get(identity)
            if process is not None:
                self._unwatch(process)

    def _check_liveness(self, now: float, disconnected: bool) -> None:
        """Ping the workers; drop those silent past ``heartbeat_timeout``, and those whose connection is gone.

        A closed connection (``disconnected``) starts a probe for its worker when ``drop_on_disconnect``.
        """
        if disconnected and self.drop_on_disconnect:
            self._probe_until = now + PROBE_WINDOW
        if self._probe_until > 0.0:
            self._probe(now)
        if now >= self._next_ping:
            self._next_ping = now + self.interval
            for peer in list(self.peers.values()):
                if now - peer.last_seen > self.timeout:
                    self._drop(
                        peer,
                        f"{peer.describe()} sent nothing for {now - peer.last_seen:.1f} s "
                        f"(heartbeat_timeout {self.timeout} s)",
                    )
                else:  # a failed ping needs no action: the worker's silence will tell
                    self.socket.send(peer.identity + HEARTBEAT_SUFFIX, encode(PING))

    def _probe(self, now: float) -> None:
        """Drop the workers whose connection is gone (a send to them fails), until the probe window ends.

        Used when every worker runs under a supervisor that restarts it (``drop_on_disconnect``): a
        closed connection then means a dead process, and waiting out ``heartbeat_timeout`` would only
        delay the renewal of its envs. The socket learns of a closed connection shortly after the
        monitor does, so the probe repeats for a short window.
        """
        if now >= self._probe_until:
            self._probe_until = 0.0
            return
        for peer in list(self.peers.values()):
            if not self.socket.reachable(peer.identity, encode(PING)):
                self._drop(peer, f"{peer.describe()} lost its connection (its process exited, or the network failed)")

    def _wait_slice(self, timeout: float) -> float:
        """How long one wait for traffic may last: short slices while probing for lost connections."""
        return min(timeout, PROBE_INTERVAL) if self._probe_until > 0.0 else timeout
