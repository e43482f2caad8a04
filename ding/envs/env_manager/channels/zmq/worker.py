"""A zmq env worker: it connects to a manager, registers, and runs the env groups the manager assigns.

The same loop serves workers a manager starts on its own host and workers started by hand on
other hosts (``ding -m worker --connect tcp://HOST:PORT --keys DIR``). Each assigned group is a
subprocess-manager :class:`~ding.envs.env_manager.core.worker.Worker` with the buffer layout the manager
sends: private buffers, whose rows travel in the messages as raw bytes
(:mod:`~ding.envs.env_manager.core.rows`), or (local workers only) shared memory.

A second socket carries heartbeats from a thread, so a worker busy in a long env step still shows
it is alive, and notices when the manager is gone: after ``manager_timeout`` seconds without a
word from it the worker closes its envs and exits (at once if it is stuck in env code).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import pickle
import secrets
import socket
import threading
import time
from typing import cast

import zmq

from ding.envs.env_manager.channels.zmq.keys import WorkerKeys
from ding.envs.env_manager.channels.zmq.protocol import (
    ASSIGN,
    CLOSE,
    FORGET,
    HEARTBEAT,
    HEARTBEAT_SUFFIX,
    HELLO,
    PING,
    REPLY,
    REQUEST,
    TO_WORKER,
    VERSION,
    WELCOME,
    MalformedMessage,
    decode,
    decode_json,
    encode,
    encode_json,
)
from ding.envs.env_manager.core.codec import DATA_ONLY
from ding.envs.env_manager.core.failure import Failure
from ding.envs.env_manager.core.spin import SPIN_LIMIT, SpinBudget
from ding.envs.env_manager.core.worker import Worker, prepare_worker_process

EXIT_CLOSED = 0
"""The manager closed the worker."""
EXIT_MANAGER_GONE = 3
"""The manager stopped answering for ``manager_timeout`` seconds."""
EXIT_NO_MANAGER = 4
"""No manager welcomed the worker within ``connect_timeout`` seconds."""
logger = logging.getLogger("ding.zmq.worker")
# plain ints: zmq's flag enums cost an object per use on the per-step path
_EVENTS, _POLLIN, _RCVMORE = int(zmq.EVENTS), int(zmq.POLLIN), int(zmq.RCVMORE)


@dataclasses.dataclass(frozen=True)
class WorkerOptions:
    """How a worker connects; heartbeat settings default to the ones the manager announces."""

    endpoint: str
    keys: WorkerKeys
    identity: bytes | None = None
    connect_timeout: float = 60.0
    manager_timeout: float | None = None
    max_message_bytes: int = 64 << 20
    spin_limit: float = SPIN_LIMIT
    """Longest poll for the next request before blocking (0: block at once), as for subprocess workers."""


@dataclasses.dataclass
class _Link:
    """What the worker knows about its manager (shared by the main and the heartbeat thread)."""

    heard: float
    interval: float = 0.5
    timeout: float = 5.0
    welcomed: bool = False
    ever_welcomed: bool = False
    gone: int | None = None  # exit code once the manager is considered gone


def _socket(context: zmq.Context[zmq.Socket[bytes]], options: WorkerOptions, identity: bytes) -> zmq.Socket[bytes]:
    sock = context.socket(zmq.DEALER)
    sock.curve_secretkey = options.keys.secret
    sock.curve_publickey = options.keys.public
    sock.curve_serverkey = options.keys.server_public
    sock.setsockopt(zmq.ROUTING_ID, identity)
    sock.setsockopt(zmq.LINGER, 200)
    sock.setsockopt(zmq.MAXMSGSIZE, options.max_message_bytes)
    sock.connect(options.endpoint)
    return sock


class _Heartbeat(threading.Thread):
    """Sends heartbeats, hears the manager's pings, and decides when the manager is gone."""

    def __init__(self, context: zmq.Context[zmq.Socket[bytes]], options: WorkerOptions, identity: bytes, link: _Link):
        super().__init__(name="ding-zmq-heartbeat", daemon=True)
        self.context, self.options, self.identity, self.link = context, options, identity, link
        self.stop = threading.Event()
        self.started_at = time.monotonic()

    def run(self) -> None:
        link = self.link
        sock = _socket(self.context, self.options, self.identity + HEARTBEAT_SUFFIX)
        try:
            while not self.stop.is_set():
                with contextlib.suppress(zmq.Again):
                    sock.send(encode(HEARTBEAT), zmq.NOBLOCK)
                deadline = time.monotonic() + link.interval
                while (left := deadline - time.monotonic()) > 0 and not self.stop.is_set():
                    if sock.poll(int(min(left, 0.05) * 1000) + 1):  # short slices: stop is noticed quickly
                        with contextlib.suppress(zmq.Again, MalformedMessage):
                            if decode(sock.recv_multipart(zmq.NOBLOCK), TO_WORKER).kind == PING:
                                link.heard = time.monotonic()
                self._check(time.monotonic())
        finally:
            sock.close(0)

    def _check(self, now: float) -> None:
        link = self.link
        if not link.ever_welcomed:
            if now - self.started_at > self.options.connect_timeout and link.gone is None:
                logger.error(
                    "no manager answered at %s within %.1f s; exiting",
                    self.options.endpoint,
                    self.options.connect_timeout,
                )
                link.gone = EXIT_NO_MANAGER
            return
        silent = now - link.heard
        if silent > link.timeout and link.gone is None:
            logger.error("the manager has been silent for %.1f s (timeout %.1f s); exiting", silent, link.timeout)
            link.gone = EXIT_MANAGER_GONE
        if link.gone is not None and silent > 2 * link.timeout + 1.0:
            os._exit(link.gone)  # the main thread is stuck in env code and cannot close itself


def handle_request(group: Worker, message: bytes) -> bytes:
    """Serve one request (a step, with raw rows for private buffers, or a pickled command) and return the reply.

    A ``close`` command closes the group's envs (the worker goes on serving its other groups).
    """
    reply = group.respond(message)
    if reply is None:
        group.close()
        return DATA_ONLY.dumps(None)
    return reply


def build_group(payload: bytes) -> tuple[Worker | None, bytes]:
    """Build an assigned env group; returns the group and the startup reply (its spaces, or the failure).

    The manager's payload is code (the constructors): a worker trusts the manager whose key it pinned. Its
    answers are data only (:data:`~ding.envs.env_manager.core.codec.DATA_ONLY`): the manager trusts no peer's code.
    """
    import cloudpickle

    env_ids, blob, layout = pickle.loads(payload)
    try:  # unpickling the constructors on this host may fail too
        group = Worker(env_ids, cloudpickle.loads(blob), DATA_ONLY)
    except Exception as exc:
        return None, DATA_ONLY.dumps(Failure.capture(env_ids[0], "build", exc))
    startup = group.start(layout)
    if not group.started:
        group.close()
        return None, startup
    return group, startup


def default_identity() -> bytes:
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}".encode()


def serve(options: WorkerOptions) -> int:
    """Run a worker until the manager closes it or goes away; returns the exit status."""
    identity = options.identity or default_identity()
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    link = _Link(heard=time.monotonic())
    if options.manager_timeout is not None:
        link.timeout = options.manager_timeout
    sock = _socket(context, options, identity)
    sock.setsockopt(zmq.RCVTIMEO, int(link.interval * 1000))
    heartbeat = _Heartbeat(context, options, identity, link)
    heartbeat.start()
    groups: dict[int, Worker] = {}
    hello = encode(HELLO, encode_json({"host": socket.gethostname(), "pid": os.getpid(), "version": VERSION}))
    hello_due = 0.0
    budget = SpinBudget(options.spin_limit)
    status = EXIT_CLOSED
    try:
        while link.gone is None:
            now = time.monotonic()
            if not link.welcomed and now >= hello_due:
                with contextlib.suppress(zmq.Again):
                    sock.send(hello, zmq.NOBLOCK)
                hello_due = now + link.interval
            idle_since = time.perf_counter()
            budget.spin(lambda: bool(cast(int, sock.getsockopt(_EVENTS)) & _POLLIN))
            try:  # a blocking receive with a timeout (RCVTIMEO): no poller to build per message
                frames = [sock.recv()]
                while sock.getsockopt(_RCVMORE):
                    frames.append(sock.recv())
            except zmq.Again:
                continue
            link.heard = time.monotonic()
            try:
                message = decode(frames, TO_WORKER)
            except MalformedMessage as err:
                logger.warning("dropped a malformed message from the manager: %s", err)
                continue
            kind, slot = message.kind, message.slot
            if kind == REQUEST:
                budget.observe(time.perf_counter() - idle_since)
                group = groups.get(slot)
                if group is None:
                    logger.warning("dropped a request for env group %d, which this worker does not hold", slot)
                    continue
                reply = handle_request(group, message.payload)
                sock.send(encode(REPLY, reply, slot, message.request_id))
            elif kind == ASSIGN:
                old = groups.pop(slot, None)
                if old is not None:
                    old.close()
                group, reply = build_group(message.payload)
                if group is not None:
                    groups[slot] = group
                sock.send(encode(REPLY, reply, slot, message.request_id))
            elif kind == WELCOME:
                settings = decode_json(message.payload, ["heartbeat_interval", "heartbeat_timeout"])
                link.interval = float(settings["heartbeat_interval"])
                sock.setsockopt(zmq.RCVTIMEO, max(1, int(link.interval * 1000)))
                if options.manager_timeout is None:
                    link.timeout = float(settings["heartbeat_timeout"])
                link.welcomed = link.ever_welcomed = True
                logger.info("registered with the manager at %s as %s", options.endpoint, identity.decode())
            elif kind == FORGET:
                logger.warning("the manager dropped this worker (it was silent too long); registering afresh")
                _close_groups(groups)
                link.welcomed, hello_due = False, 0.0
            elif kind == CLOSE:
                break
        else:
            status = link.gone
    except KeyboardInterrupt:
        status = EXIT_CLOSED
    finally:
        _close_groups(groups)
        heartbeat.stop.set()
        heartbeat.join()
        sock.close(0)
        context.term()
    return status


def _close_groups(groups: dict[int, Worker]) -> None:
    for group in groups.values():
        group.close()
    groups.clear()


def local_worker_main(options: WorkerOptions, parent_pid: int) -> None:
    """Entry point of a worker process a manager starts on its own host."""
    if prepare_worker_process(parent_pid):
        serve(options)
