"""``ZmqEnvManager``: the subprocess manager's batches, run by workers that talk ZeroMQ.

Workers are started by the manager on its own host (over ``ipc://`` by default) or by hand on
other hosts (``ding -m worker --connect tcp://HOST:PORT --keys DIR``); both register with the
manager, which assigns them groups of ``envs_per_worker`` envs and sends the constructors. The
manager's semantics (seeds, auto-reset, retries, faults) are the subprocess manager's; only the
transport differs. Step inputs and results travel inside the messages, as raw array bytes, when
remote workers may take part (``keys_dir`` set); a manager whose workers are all its own (no ``keys_dir``) lets them
use shared memory for them, as the subprocess manager does (``shared_memory``: None chooses so).

Every connection is CURVE-authenticated and encrypted. With ``keys_dir`` the manager uses the
keys made by ``ding -m keygen DIR`` and admits the worker keys listed there; its local workers get
an ephemeral key admitted in memory. Without ``keys_dir`` all keys are ephemeral and only local
workers can connect.

When a worker dies, hangs past ``step_timeout`` / ``reset_timeout``, is cut off for
``heartbeat_timeout`` seconds or becomes unreachable, the episodes it was running end with
abnormal timesteps and its groups move to an idle registered worker, to a fresh local worker (when
the manager runs local workers), or to the least loaded worker; with no worker left the manager closes and
raises :class:`~ding.errors.WorkerDiedError`.
"""

from __future__ import annotations

import pickle
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ding.envs.env_manager.subprocess_manager import SyncSubprocessEnvManager, WorkerFault
from ding.envs.env_manager.zmq_hub import Fault, Hub
from ding.envs.env_manager.zmq_keys import ephemeral_keys, load_manager_keys
from ding.envs.env_manager.zmq_protocol import ASSIGN, REQUEST
from ding.errors import ConfigError, WorkerDiedError

ENDPOINT_FORMS = "'ipc', 'tcp', 'ipc:///path' or 'tcp://HOST:PORT'"
_LINK_SECONDS = ("heartbeat_interval", "heartbeat_timeout")


def check_link_config(cfg: Mapping[str, Any], seconds: Sequence[str] = _LINK_SECONDS) -> None:
    """Reject heartbeat settings (and the other keys named in ``seconds``) that are not positive durations."""
    for key in seconds:
        value = cfg[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ConfigError(f"env.manager.{key} must be a positive number of seconds, got {value!r}")
    if cfg["heartbeat_timeout"] <= cfg["heartbeat_interval"]:
        raise ConfigError(
            f"env.manager.heartbeat_timeout ({cfg['heartbeat_timeout']!r}) must exceed heartbeat_interval "
            f"({cfg['heartbeat_interval']!r})"
        )
    value = cfg["max_message_bytes"]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1024:
        raise ConfigError(f"env.manager.max_message_bytes must be an int >= 1024, got {value!r}")


def check_zmq_config(cfg: Mapping[str, Any]) -> None:
    """Reject zmq manager settings outside their accepted values, naming the key and value."""
    endpoint = cfg["endpoint"]
    if not isinstance(endpoint, str) or not (endpoint in ("ipc", "tcp") or endpoint.startswith(("ipc://", "tcp://"))):
        raise ConfigError(f"env.manager.endpoint must be {ENDPOINT_FORMS}, got {endpoint!r}")
    if cfg["shared_memory"] not in (None, True, False):
        raise ConfigError(f"env.manager.shared_memory must be None (auto), True or False, got {cfg['shared_memory']!r}")
    if cfg["shared_memory"] and cfg["keys_dir"] is not None:
        raise ConfigError(
            "env.manager.shared_memory=True needs every worker on this host, but keys_dir admits remote workers; "
            "use None (auto) or False"
        )
    check_link_config(cfg, ("heartbeat_interval", "heartbeat_timeout", "worker_wait_timeout"))
    for key, low in (("local_workers", 0), ("remote_workers", 0)):
        value = cfg[key]
        if value is None and key == "local_workers":
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ConfigError(f"env.manager.{key} must be an int >= {low}, got {value!r}")
    if cfg["remote_workers"] and cfg["keys_dir"] is None:
        raise ConfigError(
            f"env.manager.remote_workers is {cfg['remote_workers']}, but keys_dir is None: remote workers need "
            "keys made by `ding -m keygen DIR`"
        )
    if cfg["keys_dir"] is not None and not isinstance(cfg["keys_dir"], str):
        raise ConfigError(f"env.manager.keys_dir must be a directory path or None, got {cfg['keys_dir']!r}")
    if cfg["local_workers"] == 0 and cfg["remote_workers"] == 0:
        raise ConfigError("env.manager.local_workers and remote_workers are both 0: no worker would run the envs")


class ZmqEnvManager(SyncSubprocessEnvManager):
    """Run envs in workers connected over ZeroMQ; ``step`` returns once every stepped env has its result.

    Example:
        >>> from functools import partial
        >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
        >>> fns = [partial(CartPoleEnv, cfg={}) for _ in range(4)]
        >>> with ZmqEnvManager(fns, {'envs_per_worker': 2, 'episode_num': 1}) as manager:
        ...     manager.seed(0)
        ...     manager.launch()
        ...     while not manager.done:
        ...         _ = manager.step({i: 1 for i in manager.ready_obs_id})
    """

    manager_type = "zmq"
    config: ClassVar[dict[str, Any]] = {
        **SyncSubprocessEnvManager.config,
        "shared_memory": None,  # None: shared memory when every worker is local (no keys_dir), else in the messages
        "endpoint": "ipc",  # "ipc" (a private 0700 directory), "tcp" (127.0.0.1, a free port), "tcp://HOST:PORT", ...
        "keys_dir": None,  # None: ephemeral in-memory CURVE keys (local workers only); else `ding -m keygen DIR`
        "local_workers": None,  # workers started on this host; None: one per env group unless remote_workers is set
        "remote_workers": 0,  # workers launch() waits for, started with `ding -m worker --connect ... --keys DIR`
        "worker_wait_timeout": 60.0,  # seconds launch() waits for every worker to register
        "heartbeat_interval": 1.0,  # seconds between heartbeats, both ways
        "heartbeat_timeout": 5.0,  # seconds of silence after which a worker (or, for a worker, the manager) is gone
        "max_message_bytes": 64 << 20,  # larger messages are refused by the socket (the peer is disconnected)
    }

    def __init__(self, env_fn: Sequence[Any], cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(env_fn, cfg)
        self._local_count = 0
        self._configure()
        self._hub: Hub | None = None

    def _configure(self) -> None:
        """Check the config and settle what it leaves open (shared memory, how many local workers)."""
        check_zmq_config(self._cfg)
        if self._cfg.shared_memory is None:  # auto: local workers only (ephemeral keys) can share this host's memory
            self._cfg.shared_memory = self._cfg.keys_dir is None
        local = self._cfg.local_workers
        self._local_count = len(self._groups) if local is None and not self._cfg.remote_workers else int(local or 0)

    @property
    def endpoint(self) -> str | None:
        """The address workers connect to (after ``launch``), e.g. ``tcp://127.0.0.1:40123``."""
        return self._hub.endpoint if self._hub is not None else None

    @property
    def worker_pids(self) -> list[int | None]:
        """Process id of the worker holding each env group (remote workers: the pid on their host)."""
        hub = self._hub
        if hub is None:
            return [None] * len(self._groups)
        peers = [hub.peer_of(w) for w in range(len(self._groups))]
        return [peer.pid if peer is not None else None for peer in peers]

    @property
    def worker_hosts(self) -> list[str | None]:
        """Host name of the worker holding each env group."""
        hub = self._hub
        peers = [hub.peer_of(w) if hub is not None else None for w in range(len(self._groups))]
        return [peer.host if peer is not None else None for peer in peers]

    @property
    def workers(self) -> list[dict[str, Any]]:
        """Every registered worker: routing id, host, pid, whether started locally, the env groups it holds."""
        hub = self._hub
        if hub is None:
            return []
        with hub.lock:
            return [
                {
                    "id": peer.identity.decode(errors="replace"),
                    "host": peer.host,
                    "pid": peer.pid,
                    "local": peer.process is not None,
                    "env_ids": sorted(i for w in peer.slots for i in self._groups[w]),
                }
                for peer in hub.peers.values()
            ]

    # ----- workers -------------------------------------------------------------------------------
    def _create_envs(self) -> None:
        try:
            hub = self._make_hub()
            self._hub = hub
            self._finalizer = weakref.finalize(self, hub.shutdown)
            self._start_workers(hub)
        except BaseException:
            self.close()
            raise
        super()._create_envs()

    def _make_hub(self) -> Hub:
        """Bind the manager's socket with its keys (the key directory's, or ephemeral ones)."""
        cfg = self._cfg
        manager_keys, local_keys = ephemeral_keys()
        if cfg.keys_dir is not None:
            manager_keys = load_manager_keys(cfg.keys_dir).admitting([local_keys.public])
            local_keys = type(local_keys)(local_keys.public, local_keys.secret, manager_keys.public)
        return Hub(
            cfg.endpoint,
            manager_keys,
            local_keys,
            float(cfg.heartbeat_interval),
            float(cfg.heartbeat_timeout),
            int(cfg.max_message_bytes),
        )

    def _start_workers(self, hub: Hub) -> None:
        """Start the local workers and wait until every expected worker (local and remote) has registered."""
        hub.start_local(self._context, self._local_count)
        wanted = self._local_count + int(self._cfg.remote_workers)
        hub.wait_for(
            lambda: len(hub.peers) >= wanted, float(self._cfg.worker_wait_timeout), f"{wanted} workers registering"
        )

    def _start_worker(self, w: int) -> None:
        """Give env group ``w`` to a worker and send it the constructors (the build reply follows)."""
        hub = self._hub
        assert hub is not None
        identity = self._choose_worker(w, hub)
        payload = pickle.dumps((self._groups[w], self._blobs[w], self._layout), protocol=pickle.HIGHEST_PROTOCOL)
        hub.request(w, ASSIGN, payload, identity=identity)  # a fault is reported by _await_startup

    def _choose_worker(self, w: int, hub: Hub) -> bytes:
        """The worker to run env group ``w``: an idle one, a fresh local one, or the least loaded one."""
        identity = hub.idle_peer()
        if identity is None and self._local_count:
            started = hub.start_local(self._context, 1)
            hub.wait_for(lambda: started[0] in hub.peers, float(self._launch_timeout() or 60.0), "a new local worker")
            identity = started[0]
        if identity is None:
            identity = hub.least_loaded_peer()
        if identity is None:
            self.close()
            raise WorkerDiedError(
                f"no worker left to run envs {self._groups[w]}: every worker died or was cut off; start more "
                f"workers with `ding -m worker --connect {hub.endpoint} --keys DIR`"
            )
        return identity

    def _kill_worker(self, w: int) -> None:
        """Drop the worker holding group ``w`` after it failed (a local one is killed)."""
        if self._hub is not None:
            self._hub.drop_slot_peer(w, f"replaced after a fault of env group {w}")

    def _close_envs(self) -> None:
        hub, self._hub = self._hub, None
        if hub is not None:
            hub.shutdown()
        if self._buffers is not None:
            self._buffers.close()
            self._buffers = None
        self._owned_buffers.clear()

    # ----- messaging -----------------------------------------------------------------------------
    def _send(self, w: int, message: bytes) -> WorkerFault | None:
        assert self._hub is not None
        fault = self._hub.request(w, REQUEST, message)
        return WorkerFault(w, fault.error()) if fault is not None else None

    def _answered(self, workers: Sequence[int], timeout: float | None) -> list[int]:
        assert self._hub is not None
        return self._hub.answered(workers, timeout)

    def _collect(
        self, workers: Sequence[int], timeout: float | None, spin: bool = False
    ) -> dict[int, bytes | WorkerFault]:
        hub = self._hub
        assert hub is not None
        started = time.perf_counter()
        spin_budget = self._spin
        replies = hub.collect(
            workers, timeout, spin_budget.window() if spin else 0.0, spin_budget.pre_block() if spin else 0.0
        )
        if spin:
            self._spin.observe(time.perf_counter() - started)
        return {w: WorkerFault(w, r.error()) if isinstance(r, Fault) else r for w, r in replies.items()}
