"""The manager's bound socket: where it listens, its CURVE server settings, its connection log, and its poller.

``ipc`` endpoints on Linux are abstract sockets: no file exists, so nothing is left behind even when
the manager is killed, and CURVE keys made in memory (not file permissions) keep other users out.
Elsewhere ``ipc`` is a socket file in a fresh 0700 directory. ``tcp`` binds 127.0.0.1 on a free port;
any other interface must be named explicitly (``tcp://10.0.0.5:5555``, or ``tcp://0.0.0.0:5555``).

>>> resolve_endpoint("tcp")
('tcp://127.0.0.1:*', None)
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import sys
import tempfile
from typing import cast

import zmq
from zmq.utils.monitor import recv_monitor_message

from ding.envs.env_manager.channels.zmq.keys import ManagerKeys, start_authenticator
from ding.envs.env_manager.channels.zmq.refusals import REFUSED_HANDSHAKE, CountedLog

logger = logging.getLogger("ding.zmq")
HANDSHAKE_FAILED = (
    zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_AUTH
)
MONITORED_EVENTS = HANDSHAKE_FAILED | zmq.EVENT_DISCONNECTED
MONITOR_QUEUE = 100_000
"""Connection events the monitor holds until the hub reads them (zmq drops events past it): a flood of
connections between two reads is counted in full."""
# plain ints: zmq's flag enums cost an object per use on the per-step path
_NOBLOCK, _NOBLOCK_MORE = int(zmq.NOBLOCK), int(zmq.NOBLOCK | zmq.SNDMORE)
_EVENTS, _POLLIN, _RCVMORE = int(zmq.EVENTS), int(zmq.POLLIN), int(zmq.RCVMORE)


def resolve_endpoint(endpoint: str) -> tuple[str, str | None]:
    """The address to bind for a configured endpoint, and a private directory to remove afterwards."""
    if endpoint == "ipc" and sys.platform.startswith("linux"):
        return f"ipc://@ding-zmq-{os.getpid()}-{secrets.token_hex(6)}", None
    if endpoint == "ipc":
        directory = tempfile.mkdtemp(prefix="ding-zmq-")  # mode 0700: only this user reaches the socket
        return f"ipc://{directory}/manager.sock", directory
    if endpoint == "tcp":
        return "tcp://127.0.0.1:*", None
    return endpoint, None


def bind_router(router: zmq.Socket[bytes], address: str, keys: ManagerKeys, max_message_bytes: int) -> str:
    """Make ``router`` a CURVE server and bind it; returns the bound endpoint (with the chosen port)."""
    router.curve_server = True
    router.curve_publickey = keys.public
    router.curve_secretkey = keys.secret
    router.setsockopt(zmq.ROUTER_MANDATORY, 1)  # sending to a worker that is not connected fails at once
    router.setsockopt(zmq.ROUTER_HANDOVER, 1)  # a worker reconnecting under its id replaces its old link
    router.setsockopt(zmq.MAXMSGSIZE, max_message_bytes)  # a larger message closes the sender's connection
    router.setsockopt(zmq.LINGER, 500)
    router.bind(address)
    return router.get_string(zmq.LAST_ENDPOINT)


def local_ipc_address() -> str | None:
    """A fresh abstract ``ipc`` address (Linux), for peers in this host's network namespace; None elsewhere."""
    return resolve_endpoint("ipc")[0] if sys.platform.startswith("linux") else None


def ipc_reachable(address: str) -> bool:
    """Whether an abstract ``ipc://@name`` socket is bound in this process's network namespace.

    >>> ipc_reachable("ipc://@ding-zmq-nobody-bound-this")
    False
    """
    if not address.startswith("ipc://@"):
        return False
    name = address[len("ipc://") :]
    try:
        with open("/proc/net/unix", encoding="utf-8", errors="replace") as table:
            return any(line.rstrip("\n").endswith(" " + name) for line in table)
    except OSError:
        return False


def log_connection_events(
    monitor: zmq.Socket[bytes], max_message_bytes: int, refusals: CountedLog, closes: CountedLog
) -> bool:
    """Count (and log, a few lines at a time) refused handshakes and closed connections; True when one closed.

    A handshake refused by the authenticator (an unadmitted key) is counted there, with the peer's address.
    """
    closed = False
    while True:
        try:
            event = recv_monitor_message(monitor, zmq.NOBLOCK)
        except zmq.Again:
            return closed
        kind, where = event["event"], event["endpoint"].decode(errors="replace")
        if kind & HANDSHAKE_FAILED and not kind & zmq.EVENT_HANDSHAKE_FAILED_AUTH:
            refusals.count(
                REFUSED_HANDSHAKE,
                where,
                "refused a connection at %s: security handshake failed (event %s, value %s) - a peer without "
                "the manager's keys, or not speaking ZMTP/CURVE",
                where,
                int(kind),
                int(event["value"]),
            )
        elif kind == zmq.EVENT_DISCONNECTED:
            closed = True
            closes.count(
                "connection_closed",
                where,
                "a connection at %s closed (a worker exiting, a network failure, or a message over %d bytes)",
                where,
                max_message_bytes,
            )


class RouterSocket:
    """The bound ROUTER socket with its authenticator, connection monitor and poller (no worker bookkeeping).

    Besides the socket and the monitor, the poller watches file descriptors the caller registers (the sentinels
    of local worker processes), so one wait notices a message, a closed connection and a process exit alike.
    """

    def __init__(
        self,
        endpoint: str,
        keys: ManagerKeys,
        max_message_bytes: int,
        local_address: str | None,
        refusals: CountedLog | None = None,
    ) -> None:
        """``local_address``: a second address to bind (an abstract ``ipc`` one) for workers on this host;
        ``refusals``: where refused connections are counted (its own when None)."""
        self.max_bytes = max_message_bytes
        self.refusals = refusals if refusals is not None else CountedLog(logger, "refused connections and messages")
        self.closes = CountedLog(logger, "closed connections", logging.INFO)
        self.context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        self.auth = start_authenticator(self.context, keys, self.refusals)
        address, self.ipc_dir = resolve_endpoint(endpoint)
        self.router = self.context.socket(zmq.ROUTER)
        self.monitor: zmq.Socket[bytes] | None = None
        try:
            self.endpoint = bind_router(self.router, address, keys, max_message_bytes)
            self.local_endpoint: str | None = None
            if local_address is not None:
                self.router.bind(local_address)
                self.local_endpoint = self.router.get_string(zmq.LAST_ENDPOINT)
            self.monitor = self._monitor()
        except BaseException:
            self.close()
            raise
        self.poller = zmq.Poller()
        self.poller.register(self.router, zmq.POLLIN)
        self.poller.register(self.monitor, zmq.POLLIN)

    def _monitor(self) -> zmq.Socket[bytes]:
        """The socket the router's connection events arrive on (with room for :data:`MONITOR_QUEUE` of them)."""
        address = f"inproc://ding-monitor-{secrets.token_hex(8)}"
        self.router.monitor(address, MONITORED_EVENTS)
        monitor = self.context.socket(zmq.PAIR)
        monitor.setsockopt(zmq.RCVHWM, MONITOR_QUEUE)
        monitor.connect(address)
        return monitor

    def send(self, identity: bytes, frame: bytes) -> bool:
        """Send one frame to the peer ``identity``; False when it is not connected or its queue is full."""
        return self._send(identity, frame) is None

    def reachable(self, identity: bytes, frame: bytes) -> bool:
        """Send ``frame`` to ``identity``; False only when the peer has no connection (a full queue is no proof)."""
        return self._send(identity, frame) != zmq.EHOSTUNREACH

    def _send(self, identity: bytes, frame: bytes) -> int | None:
        """Send without blocking; the error number when zmq refuses (EHOSTUNREACH: not connected; EAGAIN: full)."""
        try:
            self.router.send(identity, _NOBLOCK_MORE)
            self.router.send(frame, _NOBLOCK)
        except zmq.ZMQError as err:
            return err.errno
        return None

    def readable(self) -> bool:
        """Whether a message is waiting (no system call)."""
        return bool(cast(int, self.router.getsockopt(_EVENTS)) & _POLLIN)

    def receive(self) -> tuple[bytes, list[bytes]] | None:
        """The next waiting message as (sender identity, frames), or None when there is none."""
        router = self.router
        try:
            frames = [router.recv(_NOBLOCK)]
            while router.getsockopt(_RCVMORE):
                frames.append(router.recv(_NOBLOCK))
        except zmq.Again:
            return None
        return frames[0], frames[1:]

    def watch(self, fd: int) -> None:
        self.poller.register(fd, zmq.POLLIN)

    def unwatch(self, fd: int) -> None:
        with contextlib.suppress(KeyError, ValueError, OSError):  # not watched, or closed already: nothing to undo
            self.poller.unregister(fd)

    def wait(self, timeout: float) -> tuple[bool, bool, list[int]]:
        """Wait up to ``timeout`` s for traffic: (a message is in, a connection closed, watched fds that fired)."""
        events = dict(self.poller.poll(max(0, int(timeout * 1000))))
        if not events:
            return False, False, []
        monitor = cast(zmq.Socket[bytes], self.monitor)
        closed = monitor in events and log_connection_events(monitor, self.max_bytes, self.refusals, self.closes)
        fds = [fd for fd in events if isinstance(fd, int)]
        return self.router in events, closed, fds

    def close(self) -> None:
        """Close the sockets, the authenticator and the context; remove the private ``ipc`` directory."""
        if self.monitor is not None:
            with contextlib.suppress(zmq.ZMQError):
                self.router.disable_monitor()
            self.monitor.close(0)
        self.router.close()
        self.auth.stop()
        self.context.term()
        self.closes.close()
        if self.ipc_dir is not None:
            shutil.rmtree(self.ipc_dir, ignore_errors=True)
