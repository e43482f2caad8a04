"""``RayEnvManager``: the subprocess manager's semantics with Ray actors as workers.

Each actor (:class:`~ding.envs.env_manager.ray_worker.RayEnvWorker`) holds ``envs_per_worker`` envs
and steps them as one batch per call, because a Ray round trip costs about a millisecond: actions go
out as one message per actor, results come back as one message per actor. Ray places the actors
(``num_cpus_per_worker``, ``resources_per_worker``) on the cluster at ``address``, or on a local Ray.

Faults use Ray's own machinery: actors are created with ``max_restarts`` and no task retries, so a
dead actor (its process killed, or the env exiting the process) is restarted by Ray, which builds its
envs anew; a hung one is killed with ``ray.kill`` after ``step_timeout`` and restarted the same way.
The manager maps that onto ding's semantics: the episodes in flight on that actor end with abnormal
timesteps, each spending one of its env's ``max_retry``, the actor's other envs start new episodes,
and envs on other actors keep their steps. Env exceptions are handled as in every manager.

Ray is imported when a manager is built, so ding imports without it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import numbers
import pickle
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ding.envs.env_manager import ray_cluster
from ding.envs.env_manager.commands import Command, CommandKind
from ding.envs.env_manager.ray_worker import RESTARTED, RayEnvWorker
from ding.envs.env_manager.subprocess_manager import SyncSubprocessEnvManager, WorkerFault
from ding.errors import ConfigError, EnvManagerError, WorkerDiedError, WorkerTimeoutError

CLOSE_GRACE = 2.0
"""Seconds actors get to close their envs before they are killed."""
EXIT_WAIT = 5.0
"""Seconds ``close`` waits for the processes of killed actors on this node to exit."""
_RESOURCE_FIELDS = {"CPU": "num_cpus", "GPU": "num_gpus", "memory": "memory"}


@dataclasses.dataclass
class RayActor:
    """The manager's side of one actor."""

    index: int
    env_ids: list[int]
    actor: Any
    pid: int | None = None
    node_id: str | None = None
    pending: Any = None  # the reference of the call in flight

    def describe(self) -> str:
        return f"actor {self.index} (pid {self.pid}, envs {self.env_ids})"


def check_ray_config(cfg: Mapping[str, Any]) -> None:
    """Reject settings of the ray manager outside their accepted values, naming key and value."""
    transport, shared = cfg.get("transport", "ray"), cfg["shared_memory"]
    if transport == "shm" and shared not in (None, True):
        raise ConfigError(
            f"env.manager.shared_memory must be None or True for the ray manager's transport 'shm' (its actors "
            f"share this node's memory), got {shared!r}"
        )
    if transport != "shm" and shared not in (None, False):
        raise ConfigError(
            f"env.manager.shared_memory must be None or False for the ray manager's transport {transport!r} "
            f"(actors may run on other hosts; transport 'shm' keeps them on this node), got {shared!r}"
        )
    if cfg["context"] is not None:
        raise ConfigError(
            f"env.manager.context does not apply to the ray manager (Ray starts the actor processes); "
            f"leave it None, got {cfg['context']!r}"
        )
    address = cfg["address"]
    if address is not None and not isinstance(address, str):
        raise TypeError(f"env.manager.address must be a str such as 'host:6379' or None, got {address!r}")
    cpus = cfg["num_cpus_per_worker"]
    if cpus is not None and (isinstance(cpus, bool) or not isinstance(cpus, numbers.Real) or cpus < 0):
        raise ConfigError(f"env.manager.num_cpus_per_worker must be a number >= 0 or None, got {cpus!r}")
    resources = cfg["resources_per_worker"]
    for name, amount in resources.items():
        if isinstance(amount, bool) or not isinstance(amount, numbers.Real) or amount < 0:
            raise ConfigError(f"env.manager.resources_per_worker[{name!r}] must be a number >= 0, got {amount!r}")
    if "CPU" in resources and cpus is not None:
        raise ConfigError("env.manager: give CPUs either as num_cpus_per_worker or as resources_per_worker['CPU']")
    restarts = cfg["max_restarts"]
    if isinstance(restarts, bool) or not isinstance(restarts, int) or restarts < -1:
        raise ConfigError(f"env.manager.max_restarts must be an int >= -1 (-1: unlimited), got {restarts!r}")
    if "address" in cfg["init_kwargs"]:
        raise ConfigError("env.manager.init_kwargs may not hold 'address'; set env.manager.address instead")


def actor_options(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """``ActorClass.options(...)`` of the manager's actors: resources, restarts, no task retries."""
    resources = dict(cfg["resources_per_worker"])
    options: dict[str, Any] = {"max_restarts": cfg["max_restarts"], "max_task_retries": 0}
    for name, field in _RESOURCE_FIELDS.items():
        if name in resources:
            options[field] = resources.pop(name)
    if cfg["num_cpus_per_worker"] is not None:
        options["num_cpus"] = cfg["num_cpus_per_worker"]
    if resources:
        options["resources"] = resources
    return options


def resource_request(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """What each actor asks Ray for (its placement options without the restart settings), for error messages."""
    return {k: v for k, v in actor_options(cfg).items() if k not in ("max_restarts", "max_task_retries")}


def _pid_running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def _kill_actors(actors: list[RayActor | None]) -> None:
    """Last-resort cleanup of a manager that was never closed: kill its actors."""
    ray_cluster.kill_actors([handle.actor if handle is not None else None for handle in actors])


class RayEnvManager(SyncSubprocessEnvManager):
    """Run envs in Ray actors, ``envs_per_worker`` per actor; ``step`` returns when every stepped env has its result.

    Example (not run as a doctest: it starts Ray)::

        manager = create_env_manager({"type": "ray", "envs_per_worker": 4}, [partial(CartPoleEnv, cfg={})] * 8)
        manager.seed(0)
        manager.launch()  # connects to (or starts) Ray and creates 2 actors
        while not manager.done:
            manager.step({i: 0 for i in manager.ready_obs_id})
        manager.close()  # kills the actors
    """

    manager_type = "ray"
    config: ClassVar[dict[str, Any]] = {
        **SyncSubprocessEnvManager.config,
        "context": None,  # not applicable: Ray starts the actor processes
        "envs_per_worker": 4,
        "shared_memory": None,  # None: what the transport uses (True for "shm", False for "ray" and "zmq")
        "address": None,  # None: the Ray this process uses, else start a local one (or join RAY_ADDRESS)
        "num_cpus_per_worker": None,  # None: Ray's default for actors (placed on a CPU node, hold none while running)
        "resources_per_worker": {},  # extra Ray resources per actor, e.g. {"GPU": 0.25} or custom ones
        "max_restarts": -1,  # Ray restarts of a dead actor (-1: unlimited; max_retry still bounds the faults)
        "init_kwargs": {},  # keyword arguments of ray.init when the manager connects (num_cpus, runtime_env, ...)
        "transport": "ray",  # "ray": one Ray call per actor per batch; "zmq": actors connect back over zmq (steps
        # skip Ray); "shm": actors on this node step through shared memory, as subprocess workers do
        "endpoint": None,  # transport "zmq": None binds tcp on this node's Ray IP (127.0.0.1 alone); or "tcp://HOST:PORT"
        "heartbeat_interval": 1.0,  # transport "zmq": seconds between heartbeats, both ways
        "heartbeat_timeout": 5.0,  # transport "zmq": seconds of silence after which an actor's worker is dropped
        "max_message_bytes": 64 << 20,  # transport "zmq": larger messages are refused by the socket
    }
    """The keys of every ray transport (``create_env_manager`` picks the class by ``transport``)."""

    def __init__(self, env_fn: Sequence[Any], cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(env_fn, cfg)
        check_ray_config(self._cfg)
        if type(self) is RayEnvManager and self._cfg.get("transport", "ray") != "ray":
            raise ConfigError(
                f"RayEnvManager runs transport 'ray', got {self._cfg['transport']!r}; build the ray manager with "
                f"create_env_manager({{'type': 'ray', 'transport': {self._cfg['transport']!r}}}, env_fns)"
            )
        self._ray = ray_cluster.import_ray()
        self._actor_class: Any = None
        self._actors: list[RayActor | None] = [None] * len(self._groups)
        self._to_kill: set[int] = set()  # actors that are alive but must be replaced (hung, broken)
        self._unavailable: set[int] = set()  # actors Ray reported unavailable (restarting) on their last call
        self._faulted: set[int] = set()  # actors whose last call failed and that are not set up again yet
        self._connected = False
        weakref.finalize(self, _kill_actors, self._actors)

    @property
    def worker_pids(self) -> list[int | None]:
        """Process ids of the actors (None before launch and after close)."""
        return [handle.pid if handle is not None else None for handle in self._actors]

    @property
    def worker_actors(self) -> list[Any]:
        """The Ray actor handles, one per group of ``envs_per_worker`` envs (None where there is none)."""
        return [handle.actor if handle is not None else None for handle in self._actors]

    # ----- actor lifecycle -----------------------------------------------------------------------
    def _create_envs(self) -> None:
        self._to_kill.clear()
        self._unavailable.clear()
        self._faulted.clear()
        if not self._connected:
            init_kwargs = {"include_dashboard": False, **dict(self._cfg.init_kwargs)}
            self._connected = ray_cluster.connect(self._cfg.address, init_kwargs)
            self._actor_class = self._ray.remote(RayEnvWorker)
        super()._create_envs()

    def _start_worker(self, w: int) -> None:
        options = actor_options(self._cfg)
        actor = self._actor_class.options(**options).remote(self._groups[w], self._blobs[w])
        handle = RayActor(w, self._groups[w], actor)
        self._actors[w] = handle
        handle.pending = actor.startup.remote(self._layout)

    def _await_startup(self, w: int) -> Any:
        result = self._collect([w], self._launch_timeout())[w]
        if isinstance(result, WorkerFault):
            raise result.error
        return self._started(w, result)

    def _started(self, w: int, reply: bytes) -> Any:
        handle = self._actors[w]
        assert handle is not None
        handle.pid, handle.node_id, startup = pickle.loads(reply)
        return startup

    def _restart_worker(self, w: int) -> None:
        """Let Ray restart actor ``w`` (killing it first if it is alive but hung), then set its envs up again."""
        handle = self._actors[w]
        assert handle is not None
        if w in self._to_kill:
            self._to_kill.discard(w)
            with contextlib.suppress(Exception):
                self._ray.kill(handle.actor, no_restart=False)
        deadline = time.monotonic() + float(self._launch_timeout() or 60.0)
        while True:  # Ray queues calls while it restarts the actor; "unavailable" means try again
            handle.pending = handle.actor.startup.remote(self._layout)
            result = self._collect([w], max(0.0, deadline - time.monotonic()))[w]
            if w not in self._unavailable or time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        if isinstance(result, WorkerFault):
            self.close()
            raise type(result.error)(
                f"{result.error}; Ray did not bring the actor back (max_restarts={self._cfg.max_restarts})"
            )
        self._faulted.discard(w)
        self._check_startup(self._started(w, result))
        ids = self._groups[w]
        if any(i in self._seeds for i in ids):
            self._apply_seeds(ids)
        if self._replay_dirs is not None:
            self._apply_replay(ids)

    def _await_exit(self, handles: Sequence[RayActor]) -> None:
        """Wait until the processes of killed actors on this node have exited (Ray kills asynchronously)."""
        with contextlib.suppress(Exception):
            here = self._ray.get_runtime_context().get_node_id()
            pids = [h.pid for h in handles if h.pid is not None and h.node_id == here]
            deadline = time.monotonic() + EXIT_WAIT
            while any(_pid_running(pid) for pid in pids) and time.monotonic() < deadline:
                time.sleep(0.01)

    def _close_envs(self) -> None:
        try:
            handles = [h for h in self._actors if h is not None]
            if handles and self._ray.is_initialized():
                message = pickle.dumps(Command(CommandKind.CLOSE))
                refs = []
                for handle in handles:
                    if handle.index in self._faulted:
                        continue  # dead, restarting or hung: nothing to close gracefully
                    with contextlib.suppress(Exception):
                        refs.append(handle.actor.handle.remote(message))
                with contextlib.suppress(Exception):
                    self._ray.wait(refs, num_returns=len(refs), timeout=CLOSE_GRACE)
                for handle in handles:
                    with contextlib.suppress(Exception):
                        self._ray.kill(handle.actor, no_restart=True)
                self._await_exit(handles)
            self._actors[:] = [None] * len(self._actors)
            self._free_buffers()
        finally:
            if self._connected:
                self._connected = False
                ray_cluster.release()

    # ----- messaging -----------------------------------------------------------------------------
    def _send(self, w: int, message: bytes) -> WorkerFault | None:
        handle = self._actors[w]
        assert handle is not None
        handle.pending = handle.actor.handle.remote(message)
        return None

    def _collect(
        self, workers: Sequence[int], timeout: float | None, spin: bool = False
    ) -> dict[int, bytes | WorkerFault]:
        """Wait for the call in flight on each actor; a dead, restarted or silent actor yields a fault."""
        ray = self._ray
        refs: dict[Any, int] = {}
        self._unavailable.difference_update(workers)
        for w in workers:
            handle = self._actors[w]
            assert handle is not None and handle.pending is not None
            refs[handle.pending] = w
            handle.pending = None
        if not refs:
            return {}
        pending = list(refs)
        deadline = None if timeout is None else time.monotonic() + timeout
        try:  # the common case, in one call: every actor answers in time
            values = ray.get(pending, timeout=timeout)
            return {refs[ref]: self._fault_or(refs[ref], value) for ref, value in zip(pending, values, strict=True)}
        except ray.exceptions.RayError:  # a fault or a timeout: wait out the others, then sort the answers out
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, late = ray.wait(pending, num_returns=len(pending), timeout=remaining)
        results: dict[int, bytes | WorkerFault] = {refs[ref]: self._reply(refs[ref], ref) for ref in ready}
        self._faulted.update(w for w, result in results.items() if isinstance(result, WorkerFault))
        self._faulted.update(refs[ref] for ref in late)
        for ref in late:
            w = refs[ref]
            self._to_kill.add(w)
            handle = self._actors[w]
            assert handle is not None
            message = f"{handle.describe()} did not answer within {timeout} s"
            if handle.pid is None:  # never started: most often a request the cluster cannot satisfy
                asks = resource_request(self._cfg)
                message = (
                    f"{handle.describe()} did not start within {timeout} s; can Ray place it? It asks for "
                    f"{asks or 'no resources'}, the cluster has {ray.cluster_resources()}"
                )
            results[w] = WorkerFault(w, WorkerTimeoutError(message))
        return results

    def _answered(self, workers: Sequence[int], timeout: float | None) -> list[int]:
        """The actors among ``workers`` whose call in flight has ended, waiting up to ``timeout`` for one."""
        refs: dict[Any, int] = {}
        for w in workers:
            handle = self._actors[w]
            assert handle is not None and handle.pending is not None
            refs[handle.pending] = w
        ready, _ = self._ray.wait(list(refs), num_returns=1, timeout=timeout)
        if ready:  # any others that are done too
            ready, _ = self._ray.wait(list(refs), num_returns=len(refs), timeout=0)
        return sorted(refs[ref] for ref in ready)

    def _fault_or(self, w: int, value: bytes) -> bytes | WorkerFault:
        if value == RESTARTED:
            handle = self._actors[w]
            assert handle is not None
            self._faulted.add(w)
            return WorkerFault(w, WorkerDiedError(f"{handle.describe()} died; Ray restarted it with new envs"))
        return value

    def _reply(self, w: int, ref: Any) -> bytes | WorkerFault:
        """One actor's answer, or the fault Ray reports for it."""
        ray = self._ray
        handle = self._actors[w]
        assert handle is not None
        try:
            return self._fault_or(w, ray.get(ref))
        except ray.exceptions.RayActorError as err:
            state = "dead"
            if isinstance(err, ray.exceptions.ActorUnavailableError):
                state = "unavailable"
                self._unavailable.add(w)
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            return WorkerFault(w, WorkerDiedError(f"{handle.describe()} died ({state}: {first})"))
        except ray.exceptions.RayError as err:  # the actor's code failed outside any env: replace the actor
            self._to_kill.add(w)
            return WorkerFault(w, EnvManagerError(f"{handle.describe()} failed: {type(err).__name__}: {err}"))
