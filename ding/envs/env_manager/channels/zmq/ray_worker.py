"""The Ray actor of the ray manager's ``"zmq"`` transport: a zmq env worker that Ray places and restarts.

:class:`RayZmqWorker` runs ding's zmq worker loop (:func:`~ding.envs.env_manager.channels.zmq.worker.serve`) in a
thread, connected back to the manager; steps never go through Ray calls. Ray re-runs ``__init__`` when it
restarts the actor, which starts a new loop that registers as a new worker.

This module imports nothing from Ray at import time: the manager wraps the class with ``ray.remote``.
"""

from __future__ import annotations

import os
import threading

from ding.envs.env_manager.channels.zmq.keys import WorkerKeys
from ding.envs.env_manager.channels.zmq.socket import ipc_reachable
from ding.envs.env_manager.channels.zmq.worker import WorkerOptions, serve
from ding.envs.env_manager.core.worker import single_thread_numerics


class RayZmqWorker:
    """A zmq env worker inside a Ray actor: it registers with the manager at ``endpoint`` and serves it.

    Each incarnation (Ray re-runs ``__init__`` when it restarts the actor) registers under a routing
    id of its own, ``<prefix>-<pid>``, so the manager sees a restarted actor as a new, idle worker.
    An actor that sees the manager's ``local_endpoint`` (an abstract ``ipc`` socket: same host and
    network namespace) connects there instead of ``endpoint``.
    """

    def __init__(
        self, endpoint: str, keys: WorkerKeys, prefix: str, max_message_bytes: int, local_endpoint: str | None = None
    ) -> None:
        single_thread_numerics()
        self.identity = f"{prefix}-{os.getpid()}".encode()
        if local_endpoint is not None and ipc_reachable(local_endpoint):
            endpoint = local_endpoint
        self.endpoint = endpoint
        options = WorkerOptions(endpoint, keys, self.identity, max_message_bytes=max_message_bytes)
        self._status: int | None = None
        self._thread = threading.Thread(target=self._serve, args=(options,), name="ding-ray-zmq-worker", daemon=True)
        self._thread.start()

    def _serve(self, options: WorkerOptions) -> None:
        self._status = serve(options)

    def join(self, timeout: float) -> tuple[int, str, int | None]:
        """Wait up to ``timeout`` s for the worker loop to end; ``(pid, node id, exit status or None)``."""
        import ray

        self._thread.join(timeout)
        return os.getpid(), ray.get_runtime_context().get_node_id(), self._status

    def ping(self) -> int:
        """The actor's process id (the call fails once Ray will not bring the actor back)."""
        return os.getpid()

    def assigned_resources(self) -> dict[str, float]:
        """The resources Ray reserved for this actor (CPU, GPU, custom)."""
        import ray

        return dict(ray.get_runtime_context().get_assigned_resources())
