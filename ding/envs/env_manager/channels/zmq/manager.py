"""``ZmqEnvManager``: the batch core over the zmq channel, with workers on this host and registering from anywhere.

Workers are started by the manager on its own host (over ``ipc://`` by default) or by hand on other hosts
(``ding -m worker --connect tcp://HOST:PORT --keys DIR``); both register with the manager, which assigns them
groups of ``envs_per_worker`` envs and sends the constructors. The manager's semantics (seeds, auto-reset,
retries, faults, partial batches) are the batch core's (:mod:`ding.envs.env_manager.core`); the transport is
the zmq channel (:mod:`~ding.envs.env_manager.channels.zmq.channel`) over the placement
:class:`~ding.envs.env_manager.channels.zmq.placement.LocalAndRemoteWorkers`. Step inputs and results travel
inside the messages, as raw array bytes, when remote workers may take part (``keys_dir`` set); a manager whose
workers are all its own (no ``keys_dir``) lets them use shared memory for them, as the subprocess manager does
(``shared_memory``: None chooses so).

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

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from ding.envs.env_manager.base_manager import BaseEnvManager
from ding.envs.env_manager.channels.zmq.channel import ZmqChannel
from ding.envs.env_manager.channels.zmq.placement import LocalAndRemoteWorkers, ZmqPlacement
from ding.envs.env_manager.channels.zmq.refusals import REFUSED_REPLY
from ding.envs.env_manager.core.batch_core import WORKER_CONFIG, BatchCore, core_of
from ding.envs.env_manager.core.groups import EnvGroups
from ding.envs.env_manager.engine import EngineFactory, EngineParts
from ding.envs.env_manager.settings import MAX_WORKER_NUM, ManagerSettings
from ding.errors import ConfigError
from ding.utils.accepts import count, optional

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
    if cfg["remote_workers"] and cfg["keys_dir"] is None:
        raise ConfigError(
            f"env.manager.remote_workers is {cfg['remote_workers']}, but keys_dir is None: remote workers need "
            "keys made by `ding -m keygen DIR`"
        )
    if cfg["keys_dir"] is not None and not isinstance(cfg["keys_dir"], str):
        raise ConfigError(f"env.manager.keys_dir must be a directory path or None, got {cfg['keys_dir']!r}")
    if cfg["local_workers"] == 0 and cfg["remote_workers"] == 0:
        raise ConfigError("env.manager.local_workers and remote_workers are both 0: no worker would run the envs")


def start_timeout(settings: ManagerSettings) -> float:
    """Seconds a fresh worker may take to start and register."""
    return float(settings.launch_timeout() or 60.0)


def zmq_channel(settings: ManagerSettings, placement: ZmqPlacement, keys_dir: str | None) -> ZmqChannel:
    """The zmq channel with the settings' link settings over ``placement``."""
    rest = settings.rest
    return ZmqChannel(
        placement,
        keys_dir,
        float(rest.heartbeat_interval),
        float(rest.heartbeat_timeout),
        int(rest.max_message_bytes),
    )


def local_and_remote_workers(settings: ManagerSettings, groups: EnvGroups) -> ZmqChannel:
    """The zmq channel over workers this manager starts on its host and workers registering from anywhere."""
    rest = settings.rest
    local = rest.local_workers
    placement = LocalAndRemoteWorkers(
        rest.endpoint,
        rest.context,
        local=len(groups) if local is None and not rest.remote_workers else int(local or 0),
        remote=int(rest.remote_workers),
        wait_timeout=float(rest.worker_wait_timeout),
        start_timeout=start_timeout(settings),
    )
    return zmq_channel(settings, placement, rest.keys_dir)


def zmq_engine(parts: EngineParts) -> BatchCore:
    """The batch core over :func:`local_and_remote_workers`; ``shared_memory`` None (auto) becomes whether every
    worker is local (no ``keys_dir``: ephemeral keys admit only this host's workers)."""
    rest = parts.settings.rest
    if rest.shared_memory is None:
        rest.shared_memory = rest.keys_dir is None
    return BatchCore(parts, local_and_remote_workers)


class ZmqEnvManager(BaseEnvManager):
    """Run envs in workers connected over ZeroMQ; ``step`` returns once every stepped env has its result.

    A finite ``wait_num`` makes ``step`` return partial batches (``wait_num`` envs, or what is in after
    ``step_wait_timeout``); the default ``wait_num`` (inf) returns whole batches.

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
    partial_batches = True
    config: ClassVar[dict[str, Any]] = {
        **WORKER_CONFIG,
        "shared_memory": None,  # None: shared memory when every worker is local (no keys_dir), else in the messages
        "endpoint": "ipc",  # "ipc" (a private 0700 directory), "tcp" (127.0.0.1, a free port), "tcp://HOST:PORT", ...
        "keys_dir": None,  # None: ephemeral in-memory CURVE keys (local workers only); else `ding -m keygen DIR`
        "local_workers": optional(
            count(low=0, high=MAX_WORKER_NUM),
            note="worker processes started on this host; None: one per env group unless remote_workers is set",
        ),
        "remote_workers": count(0, low=0),  # workers launch() waits for, started with `ding -m worker --connect ...`
        "worker_wait_timeout": 60.0,  # seconds launch() waits for every worker to register
        "heartbeat_interval": 1.0,  # seconds between heartbeats, both ways
        "heartbeat_timeout": 5.0,  # seconds of silence after which a worker (or, for a worker, the manager) is gone
        "max_message_bytes": 64 << 20,  # larger messages are refused by the socket (the peer is disconnected)
    }
    settings_checks: ClassVar[tuple[Callable[[Mapping[str, Any]], None], ...]] = (check_zmq_config,)
    make_engine: ClassVar[EngineFactory] = zmq_engine

    @property
    def _zmq(self) -> ZmqChannel | None:
        channel = self._engine.channel
        return channel if isinstance(channel, ZmqChannel) else None

    @property
    def endpoint(self) -> str | None:
        """The address workers connect to (after ``launch``), e.g. ``tcp://127.0.0.1:40123``."""
        return self._zmq.endpoint if self._zmq is not None else None

    @property
    def worker_hosts(self) -> list[str | None]:
        """Host name of the worker holding each env group."""
        return self._zmq.hosts() if self._zmq is not None else [None] * len(core_of(self._engine).groups)

    @property
    def refusals(self) -> dict[str, int]:
        """What the manager has turned away so far, by reason (for monitoring; the log has them by address too).

        ``handshake_failed`` (a peer without the keys, or not speaking ZMTP/CURVE), ``key_not_admitted``,
        ``malformed_message``, ``unregistered_peer`` and ``undecodable_reply`` (a registered worker's reply that
        is not data: the worker is dropped and its envs restart).
        """
        counts = self._zmq.refusals.counts if self._zmq is not None else {}
        refused = self._engine.refused_replies
        if refused:
            counts[REFUSED_REPLY] = counts.get(REFUSED_REPLY, 0) + refused
        return counts

    @property
    def workers(self) -> list[dict[str, Any]]:
        """Every registered worker: routing id, host, pid, whether started locally, the env ids it holds."""
        return self._zmq.workers() if self._zmq is not None else []
