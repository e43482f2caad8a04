"""The Ray actor of transport ``"ray"``: several envs, stepped as one batch per call.

The actor wraps the subprocess worker's :class:`~ding.envs.env_manager.core.worker.Worker` with private buffers
and speaks the same byte messages (a step with its control and action rows as raw bytes, see
:mod:`~ding.envs.env_manager.core.rows`, or a pickled :class:`~ding.envs.env_manager.core.commands.Command`), so
one call steps every env the actor holds.

Ray re-runs ``__init__`` when it restarts a dead actor, which builds fresh envs; such an actor answers every
message with :data:`RESTARTED` until the channel calls :meth:`RayEnvWorker.startup` again, so a step never lands
silently on envs that lost their episode.

This module imports nothing from Ray: the channel wraps the class with ``ray.remote`` when it runs.
"""

from __future__ import annotations

import os
import pickle

from ding.envs.env_manager.core.shm import BufferLayout
from ding.envs.env_manager.core.worker import Worker, single_thread_numerics
from ding.envs.env_state import use_state_key

RESTARTED = b"R"
"""Reply of an actor that Ray restarted and the channel has not started up again."""
CLOSED = b"c"
"""Reply to a ``close`` command: the envs are closed and the actor may be killed."""


class RayEnvWorker:
    """Holds the envs ``env_ids`` (built from a cloudpickled list of constructors) inside a Ray actor."""

    def __init__(self, env_ids: list[int], env_fns_blob: bytes, state_key: bytes) -> None:
        import cloudpickle

        single_thread_numerics()
        use_state_key(state_key)  # this actor restores the env states its trainer's processes took
        self._worker = Worker(env_ids, cloudpickle.loads(env_fns_blob))
        self._started = False

    def startup(self, layout: BufferLayout | None) -> tuple[int, str, bytes]:
        """Build the envs and attach the batch layout (private arrays); report this process, its node and the reply.

        The startup reply is what every worker's first answer is: the pickled spaces of the built envs, or the
        pickled :class:`~ding.envs.env_manager.core.failure.Failure` of the env that could not be built.
        """
        import ray

        node = ray.get_runtime_context().get_node_id()
        worker = self._worker
        if worker.started:  # asked again by the same incarnation: the envs stay, the layout may be new
            if layout is not None:
                worker.attach(layout)
            reply = pickle.dumps(worker.spaces(), protocol=pickle.HIGHEST_PROTOCOL)
        else:
            reply = worker.start(layout)
        self._started = worker.started
        return os.getpid(), node, reply

    def handle(self, message: bytes) -> bytes:
        """Answer one message of the manager: a step (with its rows) or a pickled command."""
        if not self._started:
            return RESTARTED
        reply = self._worker.respond(message)
        if reply is None:  # close: the envs are closed and the actor may be killed
            self._worker.close()
            self._started = False
            return CLOSED
        return reply

    def assigned_resources(self) -> dict[str, float]:
        """The resources Ray reserved for this actor (CPU, GPU, custom)."""
        import ray

        return dict(ray.get_runtime_context().get_assigned_resources())
