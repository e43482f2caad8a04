"""The zmq channel: the batch core's messages over one CURVE-secured ROUTER socket, to workers wherever they run.

Workers register with the channel's :class:`~ding.envs.env_manager.channels.zmq.hub.Hub`; each env group
(``w``) is assigned to one registered worker with ``ASSIGN`` (its constructors and buffer layout), and every
later message is a ``REQUEST`` answered by one ``REPLY``. Which workers exist and which one takes a group is the
placement's business (:mod:`~ding.envs.env_manager.channels.zmq.placement`). A worker that dies, goes silent
past ``heartbeat_timeout`` or loses its connection is dropped by the hub; its groups answer with a
:class:`~ding.envs.env_manager.core.failure.Failure`, and the core restarts them (``stop`` then ``start``) on
another worker.
"""

from __future__ import annotations

import logging
import os
import pickle
import time
from collections.abc import Sequence
from typing import Any

from ding.envs.env_manager.channels.zmq.hub import Hub
from ding.envs.env_manager.channels.zmq.keys import manager_keys
from ding.envs.env_manager.channels.zmq.placement import ZmqPlacement
from ding.envs.env_manager.channels.zmq.protocol import ASSIGN, REQUEST
from ding.envs.env_manager.channels.zmq.refusals import CountedLog
from ding.envs.env_manager.channels.zmq.registry import Peer
from ding.envs.env_manager.core.channel import Reply, WorkerSetup
from ding.envs.env_manager.core.codec import DATA_ONLY, Codec
from ding.envs.env_manager.core.failure import Failure
from ding.envs.env_manager.core.spin import CoreYield, SpinBudget
from ding.errors import EnvManagerError


class ZmqChannel:
    """The channel protocol (:mod:`~ding.envs.env_manager.core.channel`) over a zmq hub; see the module docstring.

    ``keys_dir``: None for ephemeral keys (only workers the placement starts can connect), else a directory made
    by ``ding -m keygen DIR`` whose worker keys are admitted too. The heartbeat settings are announced to every
    worker; ``max_message_bytes`` caps one message both ways. Workers answer in data only
    (:data:`~ding.envs.env_manager.core.codec.DATA_ONLY`): a worker key lets a peer send data, never code.
    """

    codec: Codec = DATA_ONLY

    def __init__(
        self,
        placement: ZmqPlacement,
        keys_dir: str | os.PathLike[str] | None = None,
        heartbeat_interval: float = 1.0,
        heartbeat_timeout: float = 5.0,
        max_message_bytes: int = 64 << 20,
    ) -> None:
        self.placement = placement
        self.keys_dir = keys_dir
        self.heartbeat_interval, self.heartbeat_timeout = heartbeat_interval, heartbeat_timeout
        self.max_message_bytes = max_message_bytes
        self.hub: Hub | None = None
        self.env_ids: list[list[int]] = []  # each group's env ids, as its last setup gave them
        self.refusals = CountedLog(logging.getLogger("ding.zmq"), "refused connections and messages")
        """Connections and messages refused over every launch (counted by reason and address)."""
        self._late_before = 0  # late replies the hubs of earlier launches dropped
        self.core = CoreYield()
        """Whether the caller, finding its replies in, should give its core up after a batch (see ``handed_over``)."""

    @property
    def late_replies(self) -> int:
        """Replies the hub dropped as late or repeated (their request timed out, or their worker was replaced)."""
        hub = self.hub
        return self._late_before + (sum(hub.late.counts.values()) if hub is not None else 0)

    @property
    def endpoint(self) -> str | None:
        """The address workers connect to while the channel is open, e.g. ``tcp://127.0.0.1:40123``."""
        return self.hub.endpoint if self.hub is not None else None

    def open(self, group_count: int) -> None:
        """Bind the hub with the channel's keys where the placement says, and bring up the placement's workers."""
        self.env_ids = [[] for _ in range(group_count)]
        binding = self.placement.prepare()
        keys, own_keys = manager_keys(self.keys_dir)
        self.hub = Hub(
            binding.endpoint,
            keys,
            own_keys,
            self.heartbeat_interval,
            self.heartbeat_timeout,
            self.max_message_bytes,
            drop_on_disconnect=binding.drop_on_disconnect,
            local_address=binding.local_address,
            refusals=self.refusals,
        )
        self.placement.bring_up(self.hub, group_count)

    def start(self, setup: WorkerSetup) -> None:
        """Give group ``setup.index`` to the worker the placement chooses; its startup reply follows.

        When no worker can take it, the failure is the group's startup reply.
        """
        hub = self._open_hub()
        self.env_ids[setup.index] = list(setup.env_ids)
        choice = self.placement.choose(hub, setup)
        if isinstance(choice, Failure):
            hub.fail(setup.index, choice)
            return
        payload = pickle.dumps((setup.env_ids, setup.env_fns_blob, setup.layout), protocol=pickle.HIGHEST_PROTOCOL)
        hub.request(setup.index, ASSIGN, payload, identity=choice)  # a failure to send is the startup reply

    def send(self, w: int, message: bytes) -> Failure | None:
        return self._open_hub().request(w, REQUEST, message)

    def handed_over(self, quick: bool) -> None:
        """``send`` sent its requests: a caller that keeps finding its quick replies in yields its core
        (``CoreYield``), so local workers rung on it step now (4 local workers of a cheap env on 2 cores: the
        fewest / most rows of an env 0.51-0.53 without, 0.86-0.90 with, at the same env steps/s)."""
        self.core.handed_over(quick)

    def poll(self, workers: Sequence[int], timeout: float | None) -> list[int]:
        since = self.core.clock()
        ready = self._open_hub().answered(workers, timeout)
        self.core.waited(since)
        return ready

    def receive(
        self, workers: Sequence[int], timeout: float | None, spin: SpinBudget | None = None
    ) -> dict[int, Reply]:
        hub = self._open_hub()
        since = self.core.clock()
        replies = hub.collect(workers, timeout, spin)
        if spin is not None:
            spin.observe(time.perf_counter() - since[0])
        self.core.waited(since)
        return replies

    def stop(self, w: int) -> None:
        """Drop the worker holding group ``w`` (a local one is killed); the placement hears of it."""
        hub = self.hub
        if hub is None:
            return
        peer = hub.peer_of(w)
        hub.drop_slot_peer(w, f"replaced after a fault of env group {w}")
        if peer is not None:
            self.placement.dropped(w, peer.identity)

    def close(self) -> None:
        """Tell every worker to close, shut the hub down, then let the placement stop what it started."""
        hub, self.hub = self.hub, None
        told: list[bytes] = []
        try:
            if hub is not None:
                told = hub.shutdown()
                self.refusals.close()
                self._late_before += sum(hub.late.counts.values())
        finally:
            self.placement.close(told)

    def pids(self) -> list[int | None]:
        """The process id of the worker holding each group (a remote worker's pid on its host)."""
        return [peer.pid if peer is not None else None for peer in self._peers()]

    def hosts(self) -> list[str | None]:
        """The host name of the worker holding each group."""
        return [peer.host if peer is not None else None for peer in self._peers()]

    def workers(self) -> list[dict[str, Any]]:
        """Every registered worker: routing id, host, pid, whether started here, the env ids it holds."""
        hub = self.hub
        if hub is None:
            return []
        with hub.lock:
            return [
                {
                    "id": peer.identity.decode(errors="replace"),
                    "host": peer.host,
                    "pid": peer.pid,
                    "local": peer.process is not None,
                    "env_ids": sorted(i for w in peer.slots for i in self.env_ids[w]),
                }
                for peer in hub.peers.values()
            ]

    def _peers(self) -> list[Peer | None]:
        hub = self.hub
        return [hub.peer_of(w) if hub is not None else None for w in range(len(self.env_ids))]

    def _open_hub(self) -> Hub:
        if self.hub is None:
            raise EnvManagerError("the zmq channel is not open: launch() the manager first")
        return self.hub
