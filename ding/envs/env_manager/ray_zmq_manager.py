"""``RayZmqEnvManager``: the ray manager's ``"zmq"`` transport, Ray for the processes and zmq for the data.

Ray places, starts and restarts the worker processes: one actor
(:class:`~ding.envs.env_manager.ray_zmq_worker.RayZmqWorker`) per group of ``envs_per_worker`` envs, with
the requested resources and ``max_restarts``. Each actor runs ding's zmq worker loop, which connects
back to the manager's tcp endpoint with a CURVE key pair the manager made in memory (the manager
admits that key only), so steps travel over zmq, as in :class:`~ding.envs.env_manager.zmq_manager.ZmqEnvManager`,
and never through Ray calls. Actors that share the manager's host (and network namespace) connect to a
second, abstract ``ipc`` address of the same socket instead, with the same keys: no tcp stack per message.

Faults: the hub drops a worker as soon as its connection closes (a killed actor), after
``heartbeat_timeout`` of silence, or when it does not answer within ``step_timeout`` (then the
actor is killed with ``ray.kill`` so that Ray restarts it). The episodes in flight on it end with
abnormal timesteps and its envs are built again on the actor's next incarnation, which registers
as a new worker; an actor Ray will not bring back is replaced by a new one.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ding.envs.env_manager import ray_cluster
from ding.envs.env_manager.ray_manager import (
    CLOSE_GRACE,
    EXIT_WAIT,
    RayEnvManager,
    _pid_running,
    actor_options,
    check_ray_config,
    resource_request,
)
from ding.envs.env_manager.ray_zmq_worker import RayZmqWorker
from ding.envs.env_manager.zmq_hub import Hub
from ding.envs.env_manager.zmq_keys import WorkerKeys, ephemeral_keys
from ding.envs.env_manager.zmq_manager import ZmqEnvManager, check_link_config
from ding.envs.env_manager.zmq_socket import local_ipc_address
from ding.errors import ConfigError, WorkerDiedError, WorkerTimeoutError


class RayZmqEnvManager(ZmqEnvManager):
    """Envs in Ray actors that talk zmq with the manager; ``step`` returns when every stepped env has its result.

    Built by ``create_env_manager({"type": "ray", "transport": "zmq", ...}, env_fns)``.
    """

    manager_type = "ray"
    config: ClassVar[dict[str, Any]] = RayEnvManager.config

    def __init__(self, env_fn: Sequence[Any], cfg: Mapping[str, Any] | None = None) -> None:
        cfg = dict(cfg or {})
        if cfg.get("transport", "zmq") != "zmq":
            raise ConfigError(
                f"RayZmqEnvManager runs transport 'zmq', got {cfg['transport']!r}; build the ray manager with "
                f"create_env_manager({{'type': 'ray', 'transport': {cfg['transport']!r}}}, env_fns)"
            )
        super().__init__(env_fn, {**cfg, "transport": "zmq"})
        self._ray = ray_cluster.import_ray()
        self._actor_class: Any = None
        self._actors: list[Any] = []  # one actor handle per env group
        self._prefix = f"ray-{os.getpid()}-{secrets.token_hex(4)}"
        self._keys: WorkerKeys | None = None
        self._retired: set[bytes] = set()  # workers replaced after a fault: never given envs again
        self._connected = False
        weakref.finalize(self, ray_cluster.kill_actors, self._actors)

    def _configure(self) -> None:
        check_ray_config(self._cfg)
        check_link_config(self._cfg)
        endpoint = self._cfg.endpoint
        if endpoint is not None and not (isinstance(endpoint, str) and endpoint.startswith("tcp://")):
            raise ConfigError(
                f"env.manager.endpoint must be None (this node's Ray address) or 'tcp://HOST:PORT' for the ray "
                f"manager's zmq transport, got {endpoint!r}"
            )
        self._local_count = 0

    @property
    def worker_actors(self) -> list[Any]:
        """The Ray actor handles, one per group of ``envs_per_worker`` envs (None where there is none)."""
        return [self._actors[w] if w < len(self._actors) else None for w in range(len(self._groups))]

    # ----- actors --------------------------------------------------------------------------------
    def _make_hub(self) -> Hub:
        if not self._connected:
            init_kwargs = {"include_dashboard": False, **dict(self._cfg.init_kwargs)}
            self._connected = ray_cluster.connect(self._cfg.address, init_kwargs)
            self._actor_class = self._ray.remote(RayZmqWorker)
        manager_keys, self._keys = ephemeral_keys()
        cfg = self._cfg
        return Hub(
            cfg.endpoint or self._default_endpoint(),
            manager_keys,
            self._keys,
            float(cfg.heartbeat_interval),
            float(cfg.heartbeat_timeout),
            int(cfg.max_message_bytes),
            drop_on_disconnect=True,  # Ray restarts the process: a closed connection means a dead one
            local_address=local_ipc_address(),  # actors on this host connect here: no tcp stack per message
        )

    def _default_endpoint(self) -> str:
        """tcp on this node's address as Ray reports it; loopback when every node of the cluster is this one."""
        here = self._ray.util.get_node_ip_address()
        nodes = [node for node in self._ray.nodes() if node.get("Alive")]
        host = "127.0.0.1" if all(node.get("NodeManagerAddress") == here for node in nodes) else here
        return f"tcp://{host}:*"

    def _new_actor(self, w: int, hub: Hub) -> Any:
        assert self._keys is not None
        options = actor_options(self._cfg)
        options.pop("max_task_retries")  # no method of this actor is retried or replayed anyway
        return self._actor_class.options(**options).remote(
            hub.endpoint, self._keys, f"{self._prefix}-{w}", int(self._cfg.max_message_bytes), hub.local_endpoint
        )

    def _actor_index(self, identity: bytes) -> int | None:
        head = f"{self._prefix}-".encode()
        if not identity.startswith(head):
            return None
        return int(identity[len(head) :].split(b"-")[0])

    def _start_workers(self, hub: Hub) -> None:
        """Create one actor per env group and wait until each has registered."""
        self._actors.extend(self._new_actor(w, hub) for w in range(len(self._groups)))
        timeout = float(self._launch_timeout() or 60.0)
        try:
            hub.wait_for(
                lambda: len(hub.peers) >= len(self._actors), timeout, f"{len(self._actors)} actors registering"
            )
        except WorkerTimeoutError:
            with hub.lock:
                registered = {self._actor_index(identity) for identity in hub.peers}
            w = min(set(range(len(self._actors))) - registered)
            asks = resource_request(self._cfg)
            raise WorkerTimeoutError(
                f"actor {w} (pid None, envs {self._groups[w]}) did not start within {timeout} s; can Ray place it? "
                f"It asks for {asks or 'no resources'}, the cluster has {self._ray.cluster_resources()}"
            ) from None

    def _idle_worker_of(self, w: int, hub: Hub) -> bytes | None:
        with hub.lock:
            return next(
                (
                    peer.identity
                    for peer in hub.peers.values()
                    if not peer.slots and peer.identity not in self._retired and self._actor_index(peer.identity) == w
                ),
                None,
            )

    def _choose_worker(self, w: int, hub: Hub) -> bytes:
        """Actor ``w``'s worker: registered already, registering after Ray's restart, or a replacement actor."""
        timeout = float(self._launch_timeout() or 60.0)
        deadline = time.monotonic() + timeout
        watch = ray_cluster.ActorWatch(self._ray, self._actors[w])
        while (identity := self._idle_worker_of(w, hub)) is None:
            if time.monotonic() >= deadline:
                self.close()
                raise WorkerDiedError(
                    f"actor {w} (envs {self._groups[w]}) has no worker registered within {timeout} s after a "
                    f"fault (max_restarts={self._cfg.max_restarts})"
                )
            if watch.gave_up() is not None:  # Ray will not bring it back: start a new actor
                self._actors[w] = self._new_actor(w, hub)
                watch = ray_cluster.ActorWatch(self._ray, self._actors[w])
            hub.wait_idle(0.02)
        return identity

    def _kill_worker(self, w: int) -> None:
        """Drop the worker of group ``w`` after a fault; one still connected (hung) is killed for Ray to restart."""
        hub = self._hub
        peer = hub.peer_of(w) if hub is not None else None
        super()._kill_worker(w)
        if peer is not None and w < len(self._actors):
            self._retired.add(peer.identity)
            with contextlib.suppress(Exception):
                self._ray.kill(self._actors[w], no_restart=False)

    def _close_envs(self) -> None:
        ray = self._ray
        hub = self._hub
        registered: set[int | None] = set()
        if hub is not None:
            with hub.lock:
                registered = {
                    self._actor_index(p.identity) for p in hub.peers.values() if p.identity not in self._retired
                }
        actors = list(self._actors)
        try:
            super()._close_envs()  # the hub tells every worker to close its envs
            if actors and ray.is_initialized():
                self._stop_actors(actors, registered)
            self._actors.clear()
        finally:
            if self._connected:
                self._connected = False
                ray_cluster.release()

    def _stop_actors(self, actors: list[Any], registered: set[int | None]) -> None:
        """Give the workers that were told to close ``CLOSE_GRACE`` s, kill every actor, await their exit here."""
        ray = self._ray
        refs = []
        for w, actor in enumerate(actors):
            if w in registered:
                with contextlib.suppress(Exception):
                    refs.append(actor.join.remote(CLOSE_GRACE))
        ready: list[Any] = []
        with contextlib.suppress(Exception):
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=CLOSE_GRACE + 1.0)
        pids = []
        with contextlib.suppress(Exception):
            here = ray.get_runtime_context().get_node_id()
            for ref in ready:
                with contextlib.suppress(Exception):
                    pid, node, _ = ray.get(ref)
                    if node == here:
                        pids.append(pid)
        for actor in actors:
            with contextlib.suppress(Exception):
                ray.kill(actor, no_restart=True)
        deadline = time.monotonic() + EXIT_WAIT
        while any(_pid_running(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.01)
