"""The actors that hold a ray manager's envs: what each asks Ray for, and watching, killing and outliving them.

>>> actor_options({"resources_per_worker": {"GPU": 0.5, "disk": 1}, "num_cpus_per_worker": 1, "max_restarts": -1})
{'max_restarts': -1, 'max_task_retries': 0, 'num_gpus': 0.5, 'num_cpus': 1, 'resources': {'disk': 1}}
>>> resource_request({"resources_per_worker": {}, "num_cpus_per_worker": None, "max_restarts": 3})
{}
>>> node_can_take({"CPU": 2.0, "remote_envs": 4.0}, {"num_cpus": 1, "resources": {"remote_envs": 1}})
True
>>> node_can_take({"CPU": 2.0}, {"resources": {"remote_envs": 1}})
False
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterable, Mapping
from typing import Any

EXIT_WAIT = 5.0
"""Seconds ``close`` waits for the processes of killed actors on this node to exit."""
_RESOURCE_FIELDS = {"CPU": "num_cpus", "GPU": "num_gpus", "memory": "memory"}


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


def node_can_take(resources: Mapping[str, float], request: Mapping[str, Any]) -> bool:
    """Whether a node with ``resources`` (its totals, in Ray's names) can ever hold an actor asking for ``request``."""
    needs = {name: request[field] for name, field in _RESOURCE_FIELDS.items() if field in request}
    needs.update(request.get("resources", {}))
    return all(resources.get(name, 0.0) >= amount for name, amount in needs.items())


def no_node_can_take(ray: Any, request: Mapping[str, Any]) -> str | None:
    """Why no alive node of the cluster can take an actor asking for ``request`` (its nodes were lost, or never had
    what it asks for), or None when one can."""
    alive = {node["NodeManagerAddress"]: node.get("Resources", {}) for node in ray.nodes() if node.get("Alive")}
    if any(node_can_take(resources, request) for resources in alive.values()):
        return None
    alive = {address: named_resources(resources) for address, resources in alive.items()}
    asks = dict(request) or "no resources"
    return f"no node of the cluster can take it: it asks for {asks}, the alive nodes have {alive}"


def node_address(ray: Any, node_id: str | None) -> str:
    """The address of Ray node ``node_id`` (its id when Ray no longer lists it), for error messages."""
    node = next((n for n in ray.nodes() if n.get("NodeID") == node_id), None) if node_id else None
    if node is None:
        return f"node {(node_id or '?')[:12]}"
    return f"node {node['NodeManagerAddress']}" + ("" if node.get("Alive") else ", which Ray reports dead")


def named_resources(resources: Mapping[str, float]) -> dict[str, float]:
    """A node's resources without the ``node:<address>`` markers Ray adds to every node.

    >>> named_resources({"CPU": 2.0, "node:10.0.0.6": 1.0, "env_node": 100.0})
    {'CPU': 2.0, 'env_node': 100.0}
    """
    return {name: amount for name, amount in resources.items() if not name.startswith("node:")}


def kill_actors(actors: Iterable[Any]) -> None:
    """Kill Ray actors for good (None entries are skipped); nothing happens once this process left Ray.

    Also the last-resort cleanup of a manager collected without ``close``, so it imports nothing.
    """
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return
    for actor in actors:
        if actor is not None:
            with contextlib.suppress(Exception):  # already gone, or Ray is shutting down: nothing left to kill
                ray.kill(actor, no_restart=True)


def pid_exists(pid: int) -> bool:
    """Whether process ``pid`` exists: running, or exited but not yet reaped by its parent (Ray's raylet).

    >>> import os
    >>> pid_exists(os.getpid())
    True
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def wait_for_exit(ray: Any, processes: Iterable[tuple[int | None, str | None]]) -> None:
    """Wait (up to :data:`EXIT_WAIT`) until the ``(pid, node id)`` processes on this node are gone.

    Ray kills actors asynchronously, and the raylet, their parent, reaps them; a manager waits for both so that
    ``close`` leaves no env process behind here. Once this process has left Ray (a manager collected at exit, after
    the connection closed) it does nothing: asking Ray for the node would start a new local Ray.
    """
    if not ray.is_initialized():
        return
    here = ray.get_runtime_context().get_node_id()
    pids = [pid for pid, node in processes if pid is not None and node == here]
    deadline = time.monotonic() + EXIT_WAIT
    while any(pid_exists(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.01)


class ActorWatch:
    """While waiting for a restarted actor's worker: is Ray bringing the actor back, or has it given it up?

    :meth:`gave_up` pings the actor (one call in flight at a time, none once it answered) without blocking.
    """

    def __init__(self, ray: Any, actor: Any) -> None:
        self._ray = ray
        self._actor = actor
        self._ping: Any = None
        self._alive = False

    def gave_up(self) -> str | None:
        """Why Ray will not bring the actor back, or None (running, restarting, or no answer yet).

        Errors other than the actor's death (an actor Ray cannot schedule, say) propagate.
        """
        ray = self._ray
        if self._alive:
            return None
        if self._ping is None:
            self._ping = self._actor.ping.remote()
        if not ray.wait([self._ping], timeout=0)[0]:
            return None
        ping, self._ping = self._ping, None
        try:
            ray.get(ping)
            self._alive = True  # running: its worker is on the way
        except ray.exceptions.ActorUnavailableError:
            pass  # restarting: ask again
        except ray.exceptions.RayActorError as err:
            return first_line(err)
        return None


def first_line(err: BaseException) -> str:
    """The first line of an error's text (Ray's are long), or its class name.

    >>> first_line(RuntimeError("the actor died\\nmore details"))
    'the actor died'
    """
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
