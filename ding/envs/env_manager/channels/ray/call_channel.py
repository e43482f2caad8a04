"""Transport ``"ray"``: a channel that reaches each worker, a Ray actor, with one Ray call per message.

Each actor (:class:`~ding.envs.env_manager.channels.ray.call_worker.RayEnvWorker`) holds ``envs_per_worker`` envs
and steps them as one batch per call, because a Ray round trip costs about a millisecond: a message is one
``handle`` call, its answer the call's result. Ray places the actors (``num_cpus_per_worker``,
``resources_per_worker``) anywhere in the cluster, so step rows travel inside the messages (private buffers).

Faults use Ray's own machinery: actors are created with ``max_restarts`` and no task retries, so a dead actor
(its process killed, or an env exiting the process) is restarted by Ray, which builds its envs anew; a hung one is
killed with ``ray.kill`` when the core stops it, and Ray restarts it the same way. Starting a stopped worker calls
``startup`` again on that actor, retried while Ray reports it unavailable (restarting); an actor Ray does not
bring back fails that startup.
"""

from __future__ import annotations

import collections
import dataclasses
import pickle
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ding.envs.env_manager.channels.pipe import CLOSE_GRACE
from ding.envs.env_manager.channels.ray.actors import (
    actor_options,
    first_line,
    kill_actors,
    no_node_can_take,
    node_address,
    resource_request,
    wait_for_exit,
)
from ding.envs.env_manager.channels.ray.call_worker import RESTARTED, RayEnvWorker
from ding.envs.env_manager.channels.ray.cluster import Connection, import_ray
from ding.envs.env_manager.core.channel import Reply, WorkerSetup
from ding.envs.env_manager.core.codec import TRUSTED, Codec
from ding.envs.env_manager.core.commands import Command, CommandKind
from ding.envs.env_manager.core.failure import Failure
from ding.envs.env_manager.core.shm import BufferLayout
from ding.envs.env_manager.core.spin import SpinBudget

RESTART_WAIT = 60.0
"""Seconds a restarted actor's startup is retried while Ray reports it unavailable, when no timeout is given."""
_RETRY_PAUSE = 0.05


@dataclasses.dataclass(frozen=True)
class Call:
    """One Ray call in flight: its result's reference, and whether it is the actor's startup."""

    ref: Any
    startup: bool = False


@dataclasses.dataclass
class RayActor:
    """The channel's side of one actor."""

    index: int
    env_ids: list[int]
    actor: Any
    pid: int | None = None
    node_id: str | None = None
    calls: collections.deque[Call] = dataclasses.field(default_factory=collections.deque)  # in flight, in order
    layout: BufferLayout | None = None  # what its startup attaches
    restarted: bool = False  # started again after a stop: Ray restarts the actor, or has given it up
    unavailable: bool = False  # Ray reported it unavailable (restarting) on its last call
    faulted: bool = False  # its last call failed and it is not set up again: nothing to close gracefully
    doomed: bool = False  # alive but hung or broken: stopping it kills it, for Ray to restart

    def describe(self) -> str:
        return f"actor {self.index} (pid {self.pid}, envs {self.env_ids})"


class RayCallChannel:
    """One Ray actor per env group, one Ray call per message (see the module docstring)."""

    codec: Codec = TRUSTED  # actors of the cluster the trainer joined: inside its trust domain

    def __init__(self, connection: Connection, cfg: Mapping[str, Any]) -> None:
        """``cfg``: the manager's ``num_cpus_per_worker``, ``resources_per_worker`` and ``max_restarts``."""
        self._ray = import_ray()
        self.connection = connection
        self.options = actor_options(cfg)
        self.request = resource_request(cfg)
        self.actors: list[RayActor | None] = []
        self._actor_class: Any = None
        self.late_replies = 0
        """Calls given up on when their actor was stopped: their results are never read."""

    # ----- workers -------------------------------------------------------------------------------
    def open(self, group_count: int) -> None:
        self.actors = [None] * group_count
        self.connection.open()
        self._actor_class = self._ray.remote(RayEnvWorker)

    def start(self, setup: WorkerSetup) -> None:
        """Create the group's actor; after :meth:`stop`, set up the actor Ray restarts instead."""
        handle = self.actors[setup.index]
        if handle is None:
            actor = self._actor_class.options(**self.options).remote(setup.env_ids, setup.env_fns_blob, setup.state_key)
            handle = RayActor(setup.index, setup.env_ids, actor)
            self.actors[setup.index] = handle
        handle.layout = setup.layout
        self._call_startup(handle)

    def _call_startup(self, handle: RayActor) -> None:
        handle.calls.append(Call(handle.actor.startup.remote(handle.layout), startup=True))

    def stop(self, w: int) -> None:
        """Drop the calls in flight; an actor that is alive but hung or broken is killed for Ray to restart."""
        handle = self.actors[w] if w < len(self.actors) else None
        if handle is None:
            return
        if handle.doomed:
            handle.doomed = False
            self._ray.kill(handle.actor, no_restart=False)
        self.late_replies += len(handle.calls)
        handle.calls.clear()
        handle.restarted = True

    def close(self) -> None:
        """Ask every actor still set up to close its envs, then kill every actor and wait for its process."""
        handles = [h for h in self.actors if h is not None]
        try:
            if handles and self._ray.is_initialized():
                message = pickle.dumps(Command(CommandKind.CLOSE))
                refs = [h.actor.handle.remote(message) for h in handles if not h.faulted]
                if refs:
                    self._ray.wait(refs, num_returns=len(refs), timeout=CLOSE_GRACE)
        finally:
            if handles and self._ray.is_initialized():
                kill_actors(h.actor for h in handles)
                wait_for_exit(self._ray, [(h.pid, h.node_id) for h in handles])
            self.actors = [None] * len(self.actors)
            self.connection.close()

    def pids(self) -> list[int | None]:
        return [h.pid if h is not None else None for h in self.actors]

    # ----- messages ------------------------------------------------------------------------------
    def _handle(self, w: int) -> RayActor:
        handle = self.actors[w]
        assert handle is not None, f"actor {w} is not running"
        return handle

    def send(self, w: int, message: bytes) -> Failure | None:
        handle = self._handle(w)
        handle.calls.append(Call(handle.actor.handle.remote(message)))
        return None

    def handed_over(self, quick: bool) -> None:
        """Nothing to do: each step is a Ray call, which the caller waits for in Ray."""

    def poll(self, workers: Sequence[int], timeout: float | None) -> list[int]:
        """The actors among ``workers`` whose oldest call in flight has ended, waiting up to ``timeout`` for one.

        An actor with no call in flight has nothing to answer (and its death shows at its next call).
        """
        refs = {handle.calls[0].ref: w for w in workers if (handle := self._handle(w)).calls}
        if not refs:
            if timeout:
                time.sleep(timeout)
            return []
        ready, _ = self._ray.wait(list(refs), num_returns=1, timeout=timeout)
        if ready:  # any others that are done too
            ready, _ = self._ray.wait(list(refs), num_returns=len(refs), timeout=0)
        return sorted(refs[ref] for ref in ready)

    def receive(
        self, workers: Sequence[int], timeout: float | None, spin: SpinBudget | None = None
    ) -> dict[int, Reply]:
        """The answer to each actor's oldest call; a restarting actor's startup is called again until it answers."""
        started = time.perf_counter()
        retry_until = time.monotonic() + (RESTART_WAIT if timeout is None else timeout)
        results = self._collect(workers, timeout)
        while retry := [w for w, (call, _) in results.items() if call.startup and self._restarting(w)]:
            if time.monotonic() >= retry_until:
                break
            time.sleep(_RETRY_PAUSE)
            for w in retry:
                self._call_startup(self._handle(w))
            results.update(self._collect(retry, max(0.0, retry_until - time.monotonic())))
        if spin is not None:
            spin.observe(time.perf_counter() - started)
        return {w: self._settle(w, call, value) for w, (call, value) in results.items()}

    def _restarting(self, w: int) -> bool:
        handle = self._handle(w)
        return handle.restarted and handle.unavailable

    def _settle(self, w: int, call: Call, value: Any) -> Reply:
        """A call's result as the core reads it: a startup's ``(pid, node, reply)`` is unpacked here."""
        handle = self._handle(w)
        if isinstance(value, Failure):
            handle.faulted = True
            if call.startup and handle.restarted:
                return dataclasses.replace(value, message=f"{value.message}; {self._why_not_back()}")
            return value
        if call.startup:
            handle.pid, handle.node_id, reply = value
            handle.faulted = handle.restarted = False
            return bytes(reply)
        if value == RESTARTED:
            handle.faulted = True
            return self._died(w, "dead", "Ray restarted it with new envs")
        return bytes(value)

    def _collect(self, workers: Sequence[int], timeout: float | None) -> dict[int, tuple[Call, Any]]:
        """Wait for each actor's oldest call: its result, or the failure of a dead or silent actor."""
        ray = self._ray
        calls: dict[int, Call] = {}
        for w in workers:
            handle = self._handle(w)
            assert handle.calls, f"actor {w} has no call in flight"
            calls[w] = handle.calls.popleft()
            handle.unavailable = False
        refs = {call.ref: w for w, call in calls.items()}
        pending = list(refs)
        deadline = None if timeout is None else time.monotonic() + timeout
        try:  # the common case, in one call: every actor answers in time
            values = ray.get(pending, timeout=timeout)
            return {refs[ref]: (calls[refs[ref]], value) for ref, value in zip(pending, values, strict=True)}
        except ray.exceptions.RayError:  # a fault or a timeout: wait out the others, then sort the answers out
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, late = ray.wait(pending, num_returns=len(pending), timeout=remaining)
        results = {refs[ref]: (calls[refs[ref]], self._result(refs[ref], ref)) for ref in ready}
        for ref in late:
            results[refs[ref]] = (calls[refs[ref]], self._silent(refs[ref], timeout))
        return results

    def _result(self, w: int, ref: Any) -> Any:
        """One finished call's result, or the failure Ray reports for it."""
        ray = self._ray
        handle = self._handle(w)
        try:
            return ray.get(ref)
        except ray.exceptions.RayActorError as err:
            state = "dead"
            if isinstance(err, ray.exceptions.ActorUnavailableError):
                state, handle.unavailable = "unavailable", True
            return self._died(w, state, first_line(err))
        except ray.exceptions.RayError as err:  # the actor's code failed outside any env: replace the actor
            handle.doomed = True
            return Failure.broken(f"{handle.describe()} failed: {type(err).__name__}: {err}")

    def _died(self, w: int, state: str, why: str) -> Failure:
        """Actor ``w``'s death, with the node its process ran on (the one it was last started on)."""
        handle = self._handle(w)
        return Failure.died(f"{handle.describe()} died ({state} on {node_address(self._ray, handle.node_id)}: {why})")

    def _silent(self, w: int, timeout: float | None) -> Failure:
        """The failure of an actor that did not answer within ``timeout``: it is killed when stopped."""
        handle = self._handle(w)
        handle.doomed = True
        if handle.pid is None:  # never started: most often a request the cluster cannot satisfy
            return Failure.timeout(
                f"{handle.describe()} did not start within {timeout} s; can Ray place it? It asks for "
                f"{self.request or 'no resources'}, the cluster has {self._ray.cluster_resources()}"
            )
        if handle.restarted:  # the reason follows (see _settle)
            return Failure.timeout(f"{handle.describe()} did not start again after its fault")
        return Failure.timeout(f"{handle.describe()} did not answer within {timeout} s")

    def _why_not_back(self) -> str:
        """Why Ray did not bring a restarted actor back: no node left that can take it, or its restarts spent."""
        lost = no_node_can_take(self._ray, self.request)
        return lost or f"Ray did not bring the actor back (max_restarts={self.options['max_restarts']})"
