"""``AsyncSubprocessEnvManager``: ``step`` returns as soon as ``wait_num`` envs have results.

Envs whose workers are still busy when ``step`` returns stay in flight; their results are
delivered by a later ``step`` call, exactly once. While in flight an env (and every env sharing
its worker) is not in ``ready_obs``. Calling ``step`` with no actions collects in-flight results.
A step that would leave no env to act on while some are in flight waits for one more result
(as DI-engine's does), so ``ready_obs`` is empty after ``step`` only when nothing is in flight.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from ding.envs.env_manager import async_api
from ding.envs.env_manager.commands import Command
from ding.envs.env_manager.state import EnvState
from ding.envs.env_manager.subprocess_manager import SyncSubprocessEnvManager, WorkerFault
from ding.envs.timestep import BaseEnvTimestep
from ding.errors import EnvManagerError, ManagerStateError


class AsyncSubprocessEnvManager(SyncSubprocessEnvManager):
    """Subprocess manager returning partial batches: ``wait_num`` envs or ``step_wait_timeout`` seconds.

    Example:
        >>> from functools import partial
        >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
        >>> fns = [partial(CartPoleEnv, cfg={}) for _ in range(4)]
        >>> with AsyncSubprocessEnvManager(fns, {'wait_num': 2, 'episode_num': 1}) as manager:
        ...     manager.launch()
        ...     while not manager.done:
        ...         _ = manager.step({i: 0 for i in manager.ready_obs_id})
    """

    manager_type = "async_subprocess"
    partial_batches = True
    config: ClassVar[dict[str, Any]] = {**SyncSubprocessEnvManager.config, "wait_num": 2, "step_wait_timeout": 0.01}

    def __init__(self, env_fn: Any, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(env_fn, cfg)
        self._in_flight: dict[int, tuple[float, dict[int, Any]]] = {}  # worker -> (sent at, its actions)

    @property
    def ready_obs_id(self) -> list[int]:
        return [i for i in super().ready_obs_id if self._worker_of[i] not in self._in_flight]

    @property
    def in_flight_env_ids(self) -> list[int]:
        """Envs stepped by an earlier call whose results have not been delivered yet."""
        return sorted(i for _, actions in self._in_flight.values() for i in actions)

    @property
    def done(self) -> bool:
        return not self._in_flight and super().done

    def step(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        """Step the given envs and return the results available after at most ``step_wait_timeout``.

        With an empty ``actions`` it only collects results of envs already in flight.
        """
        self._check_launched()
        async_api.check_idle(self, "step")
        if actions:
            busy = [i for i in actions if isinstance(i, int) and self._worker_of.get(i) in self._in_flight]
            if busy:
                raise ValueError(
                    f"envs {busy} are still in flight (their worker has not answered); ready: {self.ready_obs_id}"
                )
            checked = self._check_actions(actions)
            sent, faults = self._dispatch_step(checked)
            now = time.monotonic()
            for w in sent:
                self._in_flight[w] = (now, {i: a for i, a in checked.items() if self._worker_of[i] == w})
            for w in faults:
                self._in_flight[w] = (now, {i: a for i, a in checked.items() if self._worker_of[i] == w})
            for env_id in checked:
                self._ready_obs.pop(env_id, None)
            early = {w: fault for w, fault in faults.items()}
        else:
            if not self._in_flight:
                raise ValueError(f"step() got no actions and no env is in flight; ready env ids: {self.ready_obs_id}")
            early = {}
        in_flight = len(self.in_flight_env_ids)
        wanted = in_flight if self._wait_num is None or self._wait_num == math.inf else int(self._wait_num)
        timesteps = self._receive(early, min(wanted, in_flight), self._step_wait_timeout)
        while self._in_flight and not self.ready_obs_id:  # nothing to act on: wait for one more result
            timesteps.update(self._receive({}, 1, None))
        self._raise_fatal()
        return timesteps

    def _receive(
        self, early: dict[int, WorkerFault], wait_num: int, wait_timeout: float | None
    ) -> dict[int, BaseEnvTimestep]:
        """Collect results until ``wait_num`` envs have them (``wait_timeout`` caps the wait once one has)."""
        start = time.monotonic()
        replies: dict[int, Any] = dict(early)
        while True:
            got = sum(len(self._in_flight[w][1]) for w in replies)
            pending = [w for w in self._in_flight if w not in replies]
            if not pending or got >= wait_num:
                break
            now = time.monotonic()
            budget = None if wait_timeout is None else wait_timeout - (now - start)
            if budget is not None and budget <= 0 and got > 0:
                break
            step_deadline = min(self._in_flight[w][0] for w in pending) + (self._step_timeout or 1e9) - now
            timeout = max(0.0, step_deadline if budget is None or got == 0 else min(budget, step_deadline))
            replies.update(self._collect_any(pending, timeout))
        timesteps: dict[int, BaseEnvTimestep] = {}
        for w, reply in replies.items():
            _, actions = self._in_flight.pop(w)
            timesteps.update(self._gather(actions, {w: reply}))
        for env_id, timestep in timesteps.items():
            if env_id in self._failures and not timestep.info.get("abnormal", False):
                del self._failures[env_id]
            self._after_step(env_id, timestep)
        return timesteps

    def _collect_any(self, workers: list[int], timeout: float) -> dict[int, Any]:
        """Replies of whichever workers answer within ``timeout``; overdue workers become faults."""
        from multiprocessing import connection

        handles = {w: self._workers[w] for w in workers}
        waitables: dict[Any, int] = {}
        for w, handle in handles.items():
            assert handle is not None
            waitables[handle.conn] = w
            waitables[handle.process.sentinel] = w
        ready = connection.wait(list(waitables), timeout)
        answered = sorted({waitables[obj] for obj in ready})
        results: dict[int, Any] = dict(self._collect(answered, 0.5)) if answered else {}
        if not ready and self._step_timeout is not None:
            now = time.monotonic()
            overdue = [w for w in workers if now - self._in_flight[w][0] >= self._step_timeout]
            results.update(self._collect(overdue, 0.0))
        return results

    def _async_dispatch(self, actions: Mapping[int, Any]) -> None:
        if self._in_flight:
            raise ManagerStateError(
                f"send() cannot run while envs {self.in_flight_env_ids} are in flight from step(); collect them "
                "with step({}) first"
            )
        super()._async_dispatch(actions)

    def _reset_envs(self, params: Mapping[int, dict[str, Any]]) -> None:
        busy = sorted(i for i in params if self._worker_of[i] in self._in_flight)
        if busy:
            self._drain(busy)
        super()._reset_envs(params)

    def _drain(self, env_ids: list[int]) -> None:
        """Wait for in-flight steps of the workers holding ``env_ids``; their results are discarded as lost."""
        for w in sorted({self._worker_of[i] for i in env_ids}):
            if w in self._in_flight:
                _, actions = self._in_flight.pop(w)
                reply = self._collect([w], self._step_timeout)[w]
                for env_id, timestep in self._gather(actions, {w: reply}).items():
                    if timestep.done:
                        self._env_states[env_id] = EnvState.RESET

    def _request(self, w: int, command: Command, timeout: float | None = None) -> Any:
        if w in getattr(self, "_in_flight", {}):
            raise EnvManagerError(
                f"envs {self._groups[w]} have a step in flight; collect its results with step({{}}) before "
                f"{command.name!r}"
            )
        return super()._request(w, command, timeout)

    def close(self) -> None:
        getattr(self, "_in_flight", {}).clear()
        super().close()

    def ready_obs_batch(self):  # type: ignore[no-untyped-def]
        if self._in_flight:
            raise EnvManagerError("ready_obs_batch is only available when no env is in flight")
        return super().ready_obs_batch()
