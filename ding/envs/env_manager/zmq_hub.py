"""The manager's end of the zmq transport: one ROUTER socket, the registry of workers, liveness.

Workers (DEALER sockets) register with ``HELLO`` and are welcomed; the manager assigns env groups
(``slots``) to them and exchanges requests and replies tagged with a request id, so a reply that
arrives late or twice is dropped. Liveness: every message from a worker counts as a sign of life,
workers send heartbeats from a thread, the manager pings them; a worker silent for
``heartbeat_timeout`` seconds, unreachable, or (started locally) exited is dropped, and the groups
it held report a fault at their next use. A dropped worker that speaks again is told to forget
its groups and register afresh.

The socket is used by the caller's thread during manager calls and by a background thread in
between (heartbeats, registrations); a lock hands it from one to the other.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import logging
import os
import secrets
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from multiprocessing import resource_tracker
from multiprocessing.process import BaseProcess
from typing import Any, cast

import zmq

from ding.envs.env_manager.spin import spin_until
from ding.envs.env_manager.zmq_keys import ManagerKeys, WorkerKeys, start_authenticator
from ding.envs.env_manager.zmq_protocol import (
    CLOSE,
    FORGET,
    HEARTBEAT,
    HEARTBEAT_SUFFIX,
    HELLO,
    PING,
    TO_MANAGER,
    VERSION,
    WELCOME,
    MalformedMessage,
    Message,
    decode,
    decode_json,
    encode,
    encode_json,
)
from ding.envs.env_manager.zmq_socket import MONITORED_EVENTS, bind_router, log_connection_events, resolve_endpoint
from ding.envs.env_manager.zmq_worker import WorkerOptions, local_worker_main
from ding.errors import WorkerDiedError, WorkerTimeoutError

logger = logging.getLogger("ding.zmq")
PROBE_WINDOW = 1.0
"""Seconds after a closed connection during which a hub that drops disconnected workers looks for them."""
PROBE_INTERVAL = 0.02
# plain ints: zmq's flag enums cost an object per use on the per-step path
_NOBLOCK, _NOBLOCK_MORE = int(zmq.NOBLOCK), int(zmq.NOBLOCK | zmq.SNDMORE)
_EVENTS, _POLLIN, _RCVMORE = int(zmq.EVENTS), int(zmq.POLLIN), int(zmq.RCVMORE)


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


@dataclasses.dataclass(frozen=True)
class Fault:
    """Why a slot has no reply: ``kind`` is ``died`` or ``timeout``."""

    kind: str
    message: str

    def error(self) -> WorkerDiedError | WorkerTimeoutError:
        return WorkerTimeoutError(self.message) if self.kind == "timeout" else WorkerDiedError(self.message)


class Hub:
    """A bound ROUTER socket with its workers; every method is safe to call from the manager's thread."""

    def __init__(
        self,
        endpoint: str,
        keys: ManagerKeys,
        local_keys: WorkerKeys,
        heartbeat_interval: float,
        heartbeat_timeout: float,
        max_message_bytes: int,
        drop_on_disconnect: bool = False,
        local_address: str | None = None,
    ) -> None:
        """``local_address``: a second address to bind (an abstract ``ipc`` one) for workers on this host."""
        self.interval, self.timeout, self.max_bytes = heartbeat_interval, heartbeat_timeout, max_message_bytes
        self.drop_on_disconnect = drop_on_disconnect
        self._probe_until = 0.0  # while a connection closed recently: look for the worker that lost it
        self.local_keys = local_keys
        self.lock = threading.Lock()
        self.peers: dict[bytes, Peer] = {}
        self.dropped: dict[bytes, float] = {}  # identity -> when it was last told to forget
        self.slot_peer: dict[int, bytes] = {}
        self.slot_fault: dict[int, str] = {}
        self.expected: dict[int, int] = {}
        self.arrived: dict[int, bytes] = {}
        self.unsent: dict[int, tuple[bytes, bytes]] = {}  # slot -> (worker, frames) while it reconnects
        self.pending_local: dict[bytes, BaseProcess] = {}
        self._request_ids = itertools.count(1)
        self._closed = False
        self._next_ping = 0.0
        self.context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        self.auth = start_authenticator(self.context, keys)
        address, self.ipc_dir = resolve_endpoint(endpoint)
        self.router = self.context.socket(zmq.ROUTER)
        try:
            self.endpoint = bind_router(self.router, address, keys, max_message_bytes)
            self.local_endpoint: str | None = None
            if local_address is not None:
                self.router.bind(local_address)
                self.local_endpoint = self.router.get_string(zmq.LAST_ENDPOINT)
            self.monitor = self.router.get_monitor_socket(MONITORED_EVENTS)
        except BaseException:
            self.shutdown()
            raise
        self.poller = zmq.Poller()
        self.poller.register(self.router, zmq.POLLIN)
        self.poller.register(self.monitor, zmq.POLLIN)
        self._sentinels: dict[int, bytes] = {}
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._background, name="ding-zmq-hub", daemon=True)
        self._thread.start()

    # ----- workers -------------------------------------------------------------------------------
    def start_local(self, context: Any, count: int) -> list[bytes]:
        """Start ``count`` worker processes on this host; they register like any other worker."""
        started = []
        resource_tracker.ensure_running()  # forked workers then share it: segments they attach stay the manager's
        with self.lock:
            for _ in range(count):
                identity = f"local-{os.getpid()}-{secrets.token_hex(4)}".encode()
                options = WorkerOptions(self.endpoint, self.local_keys, identity, max_message_bytes=self.max_bytes)
                process = context.Process(
                    target=local_worker_main, args=(options, os.getpid()), name="ding-zmq-worker", daemon=True
                )
                process.start()
                self.pending_local[identity] = process
                self._watch(process, identity)
                started.append(identity)
        return started

    def wait_for(self, ready: Callable[[], bool], timeout: float, what: str) -> None:
        """Handle messages until ``ready()``; a local worker that exits first, or the timeout, raises."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while not ready():
                for process in self.pending_local.values():
                    if not process.is_alive():
                        raise WorkerDiedError(
                            f"local worker pid {process.pid} exited ({process.exitcode}) before {what}"
                        )
                left = deadline - time.monotonic()
                if left <= 0:
                    raise WorkerTimeoutError(
                        f"{what} did not happen within {timeout} s; registered workers: {len(self.peers)} "
                        f"at {self.endpoint}"
                    )
                self._pump(min(left, self.interval))

    def idle_peer(self) -> bytes | None:
        """A registered worker holding no group (the longest registered first)."""
        with self.lock:
            self._pump(0.0)
            return next((p.identity for p in self.peers.values() if not p.slots), None)

    def wait_idle(self, timeout: float) -> bytes | None:
        """Handle traffic for up to ``timeout`` s; a registered worker holding no group, if one is there."""
        with self.lock:
            self._pump(timeout)
            return next((p.identity for p in self.peers.values() if not p.slots), None)

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

    # ----- requests ------------------------------------------------------------------------------
    def request(self, slot: int, kind: int, payload: bytes, identity: bytes | None = None) -> Fault | None:
        """Send a request about ``slot`` (to ``identity``, which then holds it); None when sent."""
        with self.lock:
            if identity is not None:
                old = self.peer_of(slot)
                if old is not None:
                    old.slots.discard(slot)
                if identity not in self.peers:  # dropped since it was chosen
                    self.slot_fault[slot] = f"the worker chosen for env group {slot} was dropped before it got it"
                    self.slot_peer.pop(slot, None)
                    return self._fault_of(slot)
                self.slot_peer[slot] = identity
                self.slot_fault.pop(slot, None)
                self.peers[identity].slots.add(slot)
            fault = self._fault_of(slot)
            if fault is not None:
                return fault
            peer = self.peer_of(slot)
            assert peer is not None
            request_id = next(self._request_ids)
            self.expected[slot] = request_id
            self.arrived.pop(slot, None)
            frame = encode(kind, payload, slot, request_id)
            if not self._send(peer.identity, frame):  # not connected right now: resent once it reconnects
                self.unsent[slot] = (peer.identity, frame)
            return None

    def collect(
        self, slots: Sequence[int], timeout: float | None, spin: float = 0.0, pre_block: float = 0.0
    ) -> dict[int, bytes | Fault]:
        """One reply per slot; a worker that is gone, or silent past ``timeout``, gives a :class:`Fault`.

        With ``spin``, replies are first polled for that long without blocking (after blocking for
        ``pre_block`` seconds when answers typically take longer than the spin window).
        """
        results: dict[int, bytes | Fault] = {}
        pending = list(slots)
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.lock:
            if pre_block > 0.0:
                self._pump(pre_block)
            if spin > 0.0:
                spin_until(lambda: self._poll_arrived(pending), spin)
            while True:
                for slot in list(pending):
                    if slot in self.arrived:
                        results[slot] = self.arrived.pop(slot)
                        pending.remove(slot)
                        continue
                    fault = self._fault_of(slot)
                    if fault is not None:
                        results[slot] = fault
                        self.expected.pop(slot, None)
                        pending.remove(slot)
                if not pending:
                    return results
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    for slot in pending:
                        self.expected.pop(slot, None)
                        self.unsent.pop(slot, None)
                        peer = self.peer_of(slot)
                        who = peer.describe() if peer is not None else "its worker"
                        results[slot] = Fault("timeout", f"{who} did not answer within {timeout} s")
                    return results
                wait = min(self.interval / 2, self.timeout / 4)
                self._pump(wait if deadline is None else min(wait, deadline - now))

    def answered(self, slots: Sequence[int], timeout: float | None) -> list[int]:
        """The slots among ``slots`` whose reply (or fault) is in, handling traffic up to ``timeout`` s for one."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.lock:
            while True:
                self._poll_arrived(())
                ready = [slot for slot in slots if slot in self.arrived or self._fault_of(slot) is not None]
                now = time.monotonic()
                if ready or (deadline is not None and now >= deadline):
                    return ready
                wait = min(self.interval / 2, self.timeout / 4)
                self._pump(wait if deadline is None else min(wait, deadline - now))

    # ----- internals (lock held) -----------------------------------------------------------------
    def _readable(self) -> bool:
        return bool(cast(int, self.router.getsockopt(_EVENTS)) & _POLLIN)

    def _poll_arrived(self, slots: Sequence[int]) -> bool:
        """One cheap look for replies (no system call unless a message is waiting)."""
        if self._readable():
            self._drain(time.monotonic())
        return all(slot in self.arrived for slot in slots)

    def _fault_of(self, slot: int) -> Fault | None:
        if slot in self.slot_fault:
            return Fault("died", self.slot_fault[slot])
        peer = self.peer_of(slot)
        if peer is None:
            return Fault("died", f"env group {slot} has no worker")
        return None  # a local worker's exit is seen through its process sentinel in _pump

    def _send(self, identity: bytes, frame: bytes) -> bool:
        try:
            self.router.send(identity, _NOBLOCK_MORE)
            self.router.send(frame, _NOBLOCK)
        except zmq.ZMQError:  # EHOSTUNREACH (not connected) or EAGAIN (its queue is full)
            return False
        return True

    def _drop(self, peer: Peer, reason: str) -> None:
        logger.warning("dropping %s: %s", peer.describe(), reason)
        self.peers.pop(peer.identity, None)
        self.dropped[peer.identity] = 0.0
        for slot in peer.slots:
            self.unsent.pop(slot, None)
            self.slot_fault[slot] = reason
            self.expected.pop(slot, None)
            self.slot_peer.pop(slot, None)
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
            self._send(identity, encode(FORGET))

    def _watch(self, process: BaseProcess, identity: bytes) -> None:
        self._sentinels[process.sentinel] = identity
        self.poller.register(process.sentinel, zmq.POLLIN)

    def _unwatch(self, process: BaseProcess) -> None:
        with contextlib.suppress(KeyError, ValueError, OSError):
            self.poller.unregister(process.sentinel)
        self._sentinels.pop(process.sentinel, None)

    def _pump(self, timeout: float) -> None:
        """Wait up to ``timeout`` s for traffic and handle it; send pings and expire silent workers."""
        for slot, (identity, frame) in list(self.unsent.items()):
            if self._send(identity, frame):
                del self.unsent[slot]
        probing = self._probe_until > 0.0
        events = dict(self.poller.poll(max(0, int((min(timeout, PROBE_INTERVAL) if probing else timeout) * 1000))))
        if events:
            now = time.monotonic()
            if self.router in events:
                self._drain(now)
            closed = self.monitor in events and log_connection_events(self.monitor, self.max_bytes)
            if closed and self.drop_on_disconnect:
                self._probe_until = now + PROBE_WINDOW
            for fd in [fd for fd in events if fd in self._sentinels]:
                self._local_exit(self._sentinels[fd])
        now = time.monotonic()
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
                    self._send(peer.identity + HEARTBEAT_SUFFIX, encode(PING))

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
            try:
                self.router.send(peer.identity, _NOBLOCK_MORE)
                self.router.send(encode(PING), _NOBLOCK)
            except zmq.ZMQError as err:
                if err.errno == zmq.EHOSTUNREACH:
                    self._drop(
                        peer, f"{peer.describe()} lost its connection (its process exited, or the network failed)"
                    )

    def _drain(self, now: float) -> None:
        router = self.router
        while self._readable():  # cheaper than waiting for zmq.Again
            try:
                frames = [router.recv(_NOBLOCK)]
                while router.getsockopt(_RCVMORE):
                    frames.append(router.recv(_NOBLOCK))
            except zmq.Again:
                return
            identity = frames[0]
            try:
                message = decode(frames[1:], TO_MANAGER)
            except MalformedMessage as err:
                logger.warning("dropped a malformed message from %r: %s", identity[:64], err)
                continue
            if message.kind == HEARTBEAT:
                base = identity[: -len(HEARTBEAT_SUFFIX)] if identity.endswith(HEARTBEAT_SUFFIX) else identity
                if base in self.peers:
                    self.peers[base].last_seen = now
                elif base in self.dropped:
                    self._forget(base, now)
                continue
            if message.kind == HELLO:
                self._hello(identity, message, now)
                continue
            peer = self.peers.get(identity)
            if peer is None:
                if identity in self.dropped:
                    self._forget(identity, now)
                else:
                    logger.warning("dropped a reply from %r, which never registered", identity[:64])
                continue
            peer.last_seen = now
            slot = message.slot
            if self.expected.get(slot) == message.request_id and self.slot_peer.get(slot) == identity:
                del self.expected[slot]
                self.arrived[slot] = message.payload
            else:
                logger.info("dropped a late or repeated reply (env group %d, request %d)", slot, message.request_id)

    def _hello(self, identity: bytes, message: Message, now: float) -> None:
        try:
            info = decode_json(message.payload, ["host", "pid", "version"])
            if not isinstance(info["host"], str) or isinstance(info["pid"], bool) or not isinstance(info["pid"], int):
                raise MalformedMessage(f"host must be a string and pid an int, got {info!r:.200}")
            if info["version"] != VERSION:
                raise MalformedMessage(f"worker speaks protocol version {info['version']!r}, this manager {VERSION}")
        except MalformedMessage as err:
            logger.warning("dropped a malformed HELLO from %r: %s", identity[:64], err)
            return
        if identity.endswith(HEARTBEAT_SUFFIX):
            logger.warning("dropped a HELLO from %r: that routing id is reserved for heartbeats", identity[:64])
            return
        if identity not in self.peers:
            process = self.pending_local.pop(identity, None)
            pid = process.pid if process is not None and process.pid is not None else info["pid"]
            self.peers[identity] = Peer(identity, info["host"], pid, now, process)
            self.dropped.pop(identity, None)
            logger.info("registered %s", self.peers[identity].describe())
        self.peers[identity].last_seen = now
        settings = {"heartbeat_interval": self.interval, "heartbeat_timeout": self.timeout}
        self._send(identity, encode(WELCOME, encode_json(settings)))

    def _local_exit(self, identity: bytes) -> None:
        peer = self.peers.get(identity)
        if peer is not None and peer.process is not None and peer.process.exitcode is not None:
            self._drop(peer, f"{peer.describe()} died (exit code {peer.process.exitcode})")
        process = self.pending_local.get(identity)
        if process is not None:
            self._unwatch(process)  # wait_for reports it

    def _background(self) -> None:
        while not self._stopping.wait(min(self.interval / 2, self.timeout / 4)):
            if self.lock.acquire(blocking=False):
                try:
                    if not self._closed:
                        self._pump(0.0)
                except zmq.ZMQError:
                    return
                finally:
                    self.lock.release()

    # ----- shutdown ------------------------------------------------------------------------------
    def shutdown(self, grace: float = 2.0) -> None:
        """Close every worker (local ones are joined, then killed), the socket and the context."""
        stopping = getattr(self, "_stopping", None)
        if stopping is not None:
            stopping.set()
            self._thread.join()
        with self.lock:
            if self._closed:
                return
            self._closed = True
            router = getattr(self, "router", None)
            processes = [p.process for p in self.peers.values() if p.process is not None]
            processes += list(self.pending_local.values())
            if router is not None:
                for peer in self.peers.values():
                    self._send(peer.identity, encode(CLOSE))
            deadline = time.monotonic() + grace
            for process in processes:
                process.join(max(0.0, deadline - time.monotonic()))
                if process.is_alive():
                    process.kill()
                process.join()
            self.peers.clear()
            self.pending_local.clear()
            monitor = getattr(self, "monitor", None)
            if monitor is not None:
                with contextlib.suppress(zmq.ZMQError):
                    router.disable_monitor()  # type: ignore[union-attr]
                monitor.close(0)
            if router is not None:
                router.close()
            self.auth.stop()
            self.context.term()
            if self.ipc_dir is not None:
                shutil.rmtree(self.ipc_dir, ignore_errors=True)
