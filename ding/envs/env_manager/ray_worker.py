"""The Ray actor of :class:`~ding.envs.env_manager.ray_manager.RayEnvManager`: several envs, stepped as a batch.

The actor wraps the subprocess manager's :class:`~ding.envs.env_manager.worker.Worker` with private
buffers and speaks the same byte messages (a step with its control and action rows as raw bytes, see
:mod:`~ding.envs.env_manager.rows`, or a pickled
:class:`~ding.envs.env_manager.commands.Command`), so one call steps every env the actor holds.

Ray re-runs ``__init__`` when it restarts a dead actor, which builds fresh envs; such an actor answers
every message with :data:`RESTARTED` until the manager calls :meth:`RayEnvWorker.startup` again, so a
step never lands silently on envs that lost their episode.

This module imports nothing from Ray: the manager wraps the class with ``ray.remote`` when it runs.
"""

from __future__ import annotations

import os
import pickle
from typing import Any, cast

from ding.envs.env_manager.commands import Command, CommandKind
from ding.envs.env_manager.shm import BufferLayout
from ding.envs.env_manager.worker import EnvFailure, Worker, _single_thread_numerics, is_step

RESTARTED = b"R"
"""Reply of an actor that Ray restarted and the manager has not started up again."""
CLOSED = b"c"
"""Reply to a ``close`` command: the envs are closed and the actor may be killed."""


class RayEnvWorker:
    """Holds the envs ``env_ids`` (built from a cloudpickled list of constructors) inside a Ray actor."""

    def __init__(self, env_ids: list[int], env_fns_blob: bytes) -> None:
        import cloudpickle

        _single_thread_numerics()
        self._env_ids = env_ids
        self._started = False
        self._build_error: EnvFailure | None = None
        self._worker = Worker(env_ids, cloudpickle.loads(env_fns_blob), cast(Any, None))
        try:
            for env_id in env_ids:
                self._worker.build(env_id)
        except Exception as exc:  # a constructor failed: reported by startup() with its traceback
            self._build_error = EnvFailure.capture(env_ids[0], "build", exc)

    def startup(self, layout: BufferLayout | None) -> bytes:
        """Attach the batch layout (private arrays) and report ``(pid, node id, spaces or failure)``."""
        import ray

        node = ray.get_runtime_context().get_node_id()
        if self._build_error is not None:
            return pickle.dumps((os.getpid(), node, self._build_error))
        if layout is not None:
            self._worker.attach(layout)
        self._started = True
        return pickle.dumps((os.getpid(), node, self._worker.spaces()), protocol=pickle.HIGHEST_PROTOCOL)

    def handle(self, message: bytes) -> bytes:
        """Answer one message of the manager: a step (with its rows) or a pickled command."""
        if not self._started:
            return RESTARTED
        worker = self._worker
        if is_step(message):
            return worker.answer_step(message)
        command: Command = pickle.loads(message)
        if command.kind is CommandKind.CLOSE:
            worker.close()
            self._started = False
            return CLOSED
        return worker.answer(command)

    def assigned_resources(self) -> dict[str, float]:
        """The resources Ray reserved for this actor (CPU, GPU, custom)."""
        import ray

        return dict(ray.get_runtime_context().get_assigned_resources())
