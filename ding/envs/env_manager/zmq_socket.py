"""The manager's bound socket: where it listens, its CURVE server settings, and its connection log.

``ipc`` endpoints on Linux are abstract sockets: no file exists, so nothing is left behind even when
the manager is killed, and CURVE keys made in memory (not file permissions) keep other users out.
Elsewhere ``ipc`` is a socket file in a fresh 0700 directory. ``tcp`` binds 127.0.0.1 on a free port;
any other interface must be named explicitly (``tcp://10.0.0.5:5555``, or ``tcp://0.0.0.0:5555``).

>>> resolve_endpoint("tcp")
('tcp://127.0.0.1:*', None)
"""

from __future__ import annotations

import logging
import os
import secrets
import sys
import tempfile

import zmq
from zmq.utils.monitor import recv_monitor_message

from ding.envs.env_manager.zmq_keys import ManagerKeys

logger = logging.getLogger("ding.zmq")
HANDSHAKE_FAILED = (
    zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_AUTH
)
MONITORED_EVENTS = HANDSHAKE_FAILED | zmq.EVENT_DISCONNECTED


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


def log_connection_events(monitor: zmq.Socket[bytes], max_message_bytes: int) -> bool:
    """Log the socket's refused handshakes and closed connections; True when a connection closed."""
    closed = False
    while True:
        try:
            event = recv_monitor_message(monitor, zmq.NOBLOCK)
        except zmq.Again:
            return closed
        kind, where = event["event"], event["endpoint"].decode(errors="replace")
        if kind & HANDSHAKE_FAILED:
            logger.warning(
                "refused a connection at %s: security handshake failed (event %s, value %s) - a peer without "
                "the manager's keys, or not speaking ZMTP/CURVE",
                where,
                kind,
                event["value"],
            )
        elif kind == zmq.EVENT_DISCONNECTED:
            closed = True
            logger.info(
                "a connection at %s closed (a worker exiting, a network failure, or a message over %d bytes)",
                where,
                max_message_bytes,
            )
