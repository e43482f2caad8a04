"""The manager's end of the zmq channel: requests and replies of each env group, over one ROUTER socket.

The manager assigns env groups (``slots``) to registered workers (:mod:`.registry`) and exchanges requests and
replies tagged with a request id: a group may have several requests out, its replies come back in their order,
and a reply that arrives late (after its request timed out) or twice is dropped. A group whose worker is gone
answers with a :class:`~ding.envs.env_manager.core.failure.Failure` at its next use.

The socket (:class:`~ding.envs.env_manager.channels.zmq.socket.RouterSocket`) is used by the caller's
thread during manager calls and by a background thread in between (heartbeats, registrations); a lock
hands it from one to the other.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence

import zmq

from ding.envs.env_manager.channels.pipe import CLOSE_GRACE
from ding.envs.env_manager.channels.zmq.keys import ManagerKeys, WorkerKeys
from ding.envs.env_manager.channels.zmq.protocol import (
    CLOSE,
    HEARTBEAT,
    HELLO,
    TO_MANAGER,
    MalformedMessage,
    decode,
    encode,
)
from ding.envs.env_manager.channels.zmq.refusals import REFUSED_MESSAGE, REFUSED_UNREGISTERED, CountedLog
from ding.envs.env_manager.channels.zmq.registry import Registry
from ding.envs.env_manager.channels.zmq.socket import RouterSocket
from ding.envs.env_manager.core.channel import Reply
from ding.envs.env_manager.core.failure import Failure
from ding.envs.env_manager.core.spin import SpinBudget

logger = logging.getLogger("ding.zmq")


class Hub(Registry):
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
        refusals: CountedLog | None = None,
    ) -> None:
        """``local_keys``: the keys of the workers the manager starts itself (``keys`` admits them).

        ``drop_on_disconnect``: every worker runs under a supervisor that restarts it, so a closed connection
        means a dead process. ``local_address``: a second address to bind (an abstract ``ipc`` one) for
        workers on this host. ``refusals``: where refused connections and messages are counted.
        """
        self.max_bytes, self.local_keys = max_message_bytes, local_keys
        self.late = CountedLog(logger, "late or repeated replies dropped", logging.INFO)
        """Replies to requests given up on (timed out, or of a worker since replaced), and repeats."""
        super().__init__(
            RouterSocket(endpoint, keys, max_message_bytes, local_address, refusals),
            heartbeat_interval,
            heartbeat_timeout,
            drop_on_disconnect,
        )
        self.endpoint, self.local_endpoint = self.socket.endpoint, self.socket.local_endpoint
        # per slot, oldest first (a slot is a key only while its queue is not empty):
        self.expected: dict[int, deque[int]] = {}  # ids of the requests awaiting their reply
        self.arrived: dict[int, deque[bytes]] = {}  # replies not collected yet
        self.unsent: dict[int, deque[tuple[bytes, bytes]]] = {}  # (worker, frame) until the worker reconnects
        self._request_ids = itertools.count(1)
        self._closed = False
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._background, name="ding-zmq-hub", daemon=True)
        self._thread.start()

    # ----- workers -------------------------------------------------------------------------------
    def wait_for(self, ready: Callable[[], bool], timeout: float, what: str) -> Failure | None:
        """Handle messages until ``ready()``; a local worker that exits first, or the timeout, is the failure."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while not ready():
                for process in self.pending_local.values():
                    if not process.is_alive():
                        return Failure.died(f"local worker pid {process.pid} exited ({process.exitcode}) before {what}")
                left = deadline - time.monotonic()
                if left <= 0:
                    return Failure.timeout(
                        f"{what} did not happen within {timeout} s; registered workers: {len(self.peers)} "
                        f"at {self.endpoint}"
                    )
                self._pump(min(left, self.interval))
        return None

    def idle_peer(self, accept: Callable[[bytes], bool] = lambda identity: True, wait: float = 0.0) -> bytes | None:
        """A registered worker holding no group that ``accept`` takes (the longest registered first).

        Traffic is handled for up to ``wait`` s first.
        """
        with self.lock:
            self._pump(wait)
            return next((p.identity for p in self.peers.values() if not p.slots and accept(p.identity)), None)

    def fail(self, slot: int, failure: Failure) -> None:
        """Give ``slot`` no worker: its next reply is ``failure`` (a group that could not be placed)."""
        with self.lock:
            peer = self.peer_of(slot)
            if peer is not None:
                peer.slots.discard(slot)
            self._release(slot, failure)

    # ----- requests ------------------------------------------------------------------------------
    def request(self, slot: int, kind: int, payload: bytes, identity: bytes | None = None) -> Failure | None:
        """Send a request about ``slot`` (to ``identity``, which then holds it); None when sent."""
        with self.lock:
            if identity is not None:
                old = self.peer_of(slot)
                if old is not None:
                    old.slots.discard(slot)
                if identity not in self.peers:  # dropped since it was chosen
                    lost = Failure.died(f"the worker chosen for env group {slot} was dropped before it got it")
                    self._release(slot, lost)
                    return lost
                self.slot_peer[slot] = identity
                self.slot_failure.pop(slot, None)
                self.peers[identity].slots.add(slot)
                for pending in (self.expected, self.arrived, self.unsent):  # a fresh start: nothing is pending
                    pending.pop(slot, None)
            failure = self._failure_of(slot)
            if failure is not None:
                return failure
            peer = self.peer_of(slot)
            assert peer is not None
            request_id = next(self._request_ids)
            self.expected.setdefault(slot, deque()).append(request_id)
            frame = encode(kind, payload, slot, request_id)
            # not connected right now (or earlier requests still wait): sent in order once it reconnects
            if slot in self.unsent or not self.socket.send(peer.identity, frame):
                self.unsent.setdefault(slot, deque()).append((peer.identity, frame))
            return None

    def collect(self, slots: Sequence[int], timeout: float | None, spin: SpinBudget | None = None) -> dict[int, Reply]:
        """One reply per slot; a worker that is gone, or silent past ``timeout``, gives a :class:`Failure`.

        With ``spin``, replies are first polled without blocking for its window (after blocking for its
        ``pre_block`` when answers typically take longer than the window).
        """
        results: dict[int, Reply] = {}
        pending = list(slots)
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.lock:
            if spin is not None:
                pre_block = spin.pre_block()
                if pre_block > 0.0:
                    self._pump(pre_block)
                spin.spin(lambda: self._poll_arrived(pending))
            while True:
                for slot in list(pending):
                    if slot in self.arrived:
                        results[slot] = self._take(slot)
                        pending.remove(slot)
                        continue
                    failure = self._failure_of(slot)
                    if failure is not None:
                        results[slot] = failure
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
                        results[slot] = Failure.timeout(f"{who} did not answer within {timeout} s")
                    return results
                wait = min(self.interval / 2, self.timeout / 4)
                self._pump(wait if deadline is None else min(wait, deadline - now))

    def answered(self, slots: Sequence[int], timeout: float | None) -> list[int]:
        """The slots among ``slots`` whose reply (or failure) is in, handling traffic up to ``timeout`` s for one."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.lock:
            while True:
                self._poll_arrived(())
                ready = [slot for slot in slots if slot in self.arrived or self._failure_of(slot) is not None]
                now = time.monotonic()
                if ready or (deadline is not None and now >= deadline):
                    return ready
                wait = min(self.interval / 2, self.timeout / 4)
                self._pump(wait if deadline is None else min(wait, deadline - now))

    # ----- internals (lock held) -----------------------------------------------------------------
    def _take(self, slot: int) -> bytes:
        """The oldest reply of ``slot`` not collected yet."""
        replies = self.arrived[slot]
        reply = replies.popleft()
        if not replies:
            del self.arrived[slot]
        return reply

    def _poll_arrived(self, slots: Sequence[int]) -> bool:
        """One cheap look for replies (no system call unless a message is waiting)."""
        if self.socket.readable():
            self._drain(time.monotonic())
        return all(slot in self.arrived for slot in slots)

    def _failure_of(self, slot: int) -> Failure | None:
        failure = self.slot_failure.get(slot)
        if failure is not None:
            return failure
        if self.peer_of(slot) is None:
            return Failure.died(f"env group {slot} has no worker")
        return None  # a local worker's exit is seen through its process sentinel in _pump

    def _release(self, slot: int, failure: Failure) -> None:
        super()._release(slot, failure)
        self.unsent.pop(slot, None)
        self.expected.pop(slot, None)

    def _pump(self, timeout: float) -> None:
        """Wait up to ``timeout`` s for traffic and handle it; send pings and expire silent workers."""
        for slot, frames in list(self.unsent.items()):
            while frames and self.socket.send(*frames[0]):
                frames.popleft()
            if not frames:
                del self.unsent[slot]
        message_in, disconnected, exited = self.socket.wait(self._wait_slice(timeout))
        if message_in:
            self._drain(time.monotonic())
        self._exited(exited)
        self._check_liveness(time.monotonic(), disconnected)

    def _drain(self, now: float) -> None:
        while self.socket.readable():  # cheaper than waiting for zmq.Again
            received = self.socket.receive()
            if received is None:
                return
            identity, frames = received
            try:
                message = decode(frames, TO_MANAGER)
            except MalformedMessage as err:
                self.refusals.count(
                    REFUSED_MESSAGE, repr(identity[:64]), "dropped a malformed message from %r: %s", identity[:64], err
                )
                continue
            if message.kind == HEARTBEAT:
                self._heard(identity, now)
                continue
            if message.kind == HELLO:
                self._hello(identity, message, now)
                continue
            peer = self.peers.get(identity)
            if peer is None:
                if identity in self.dropped:
                    self._forget(identity, now)
                else:
                    self.refusals.count(
                        REFUSED_UNREGISTERED,
                        repr(identity[:64]),
                        "dropped a reply from %r, which never registered",
                        identity[:64],
                    )
                continue
            peer.last_seen = now
            slot = message.slot
            waiting = self.expected.get(slot)
            if waiting and waiting[0] == message.request_id and self.slot_peer.get(slot) == identity:
                waiting.popleft()
                if not waiting:
                    del self.expected[slot]
                self.arrived.setdefault(slot, deque()).append(message.payload)
            else:
                self.late.count(
                    f"env group {slot}",
                    repr(identity[:64]),
                    "dropped a late or repeated reply (env group %d, request %d)",
                    slot,
                    message.request_id,
                )

    def _background(self) -> None:
        while not self._stopping.wait(min(self.interval / 2, self.timeout / 4)):
            for log in (self.refusals, self.socket.closes, self.late):  # an interval's summary, off the step path
                log.flush()
            if self.lock.acquire(blocking=False):
                try:
                    if not self._closed:
                        self._pump(0.0)
                except zmq.ZMQError:
                    return
                finally:
                    self.lock.release()

    # ----- shutdown ------------------------------------------------------------------------------
    def shutdown(self, grace: float = CLOSE_GRACE) -> list[bytes]:
        """Close every worker (local ones are joined, then killed), the socket and the context.

        Returns the workers that were told to close (every registered one).
        """
        self._stopping.set()
        self._thread.join()
        with self.lock:
            if self._closed:
                return []
            self._closed = True
            told = list(self.peers)
            processes = [p.process for p in self.peers.values() if p.process is not None]
            processes += list(self.pending_local.values())
            for identity in told:
                self.socket.send(identity, encode(CLOSE))
            deadline = time.monotonic() + grace
            for process in processes:
                process.join(max(0.0, deadline - time.monotonic()))
                if process.is_alive():
                    process.kill()
                process.join()
            self.peers.clear()
            self.pending_local.clear()
            self.socket.close()
            self.late.close()
            return told
