"""The Ray actor of transport ``"shm"``: a pipe worker that Ray starts, connected back to the manager.

:class:`RayShmWorker` connects to the manager over a local (abstract ``AF_UNIX``) socket, authenticated with a
key the manager passes in the actor's arguments, says which env group it serves, receives that group's
:class:`~ding.envs.env_manager.core.channel.WorkerSetup` and then runs the pipe worker's loop
(:func:`~ding.envs.env_manager.core.worker.serve_connection`) in a thread: one-byte wake-ups on the socket, actions and
results in the manager's shared memory. Ray re-runs ``__init__`` when it restarts the actor, so a restarted actor
connects again and the manager sets it up afresh.

This module imports nothing from Ray at import time: the placement wraps the class with ``ray.remote``.
"""

from __future__ import annotations

import os
import pickle
import threading
from multiprocessing import connection

from ding.envs.env_manager.core.channel import WorkerSetup
from ding.envs.env_manager.core.worker import serve_connection, single_thread_numerics
from ding.envs.env_state import use_state_key


class RayShmWorker:
    """An env worker inside a Ray actor on the manager's node, for env group ``index``."""

    def __init__(self, address: str, authkey: bytes, index: int) -> None:
        import ray

        single_thread_numerics()
        conn = connection.Client(address, family="AF_UNIX", authkey=authkey)
        node = ray.get_runtime_context().get_node_id()
        conn.send_bytes(pickle.dumps((index, os.getpid(), node), protocol=pickle.HIGHEST_PROTOCOL))
        self._thread = threading.Thread(target=self._serve, args=(conn,), name="ding-ray-shm-worker", daemon=True)
        self._thread.start()

    @staticmethod
    def _serve(conn: connection.Connection) -> None:
        try:
            setup: WorkerSetup = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):  # the manager went away before setting this worker up
            conn.close()
            return
        use_state_key(setup.state_key)  # this actor restores the env states its trainer's processes took
        serve_connection(setup.env_ids, setup.env_fns_blob, conn, setup.layout, setup.spin_limit, setup.doorbell)

    def ping(self) -> int:
        """The actor's process id (the call fails once Ray will not bring the actor back)."""
        return os.getpid()

    def assigned_resources(self) -> dict[str, float]:
        """The resources Ray reserved for this actor (CPU, GPU, custom)."""
        import ray

        return dict(ray.get_runtime_context().get_assigned_resources())
