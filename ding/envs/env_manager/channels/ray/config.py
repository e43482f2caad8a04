"""The ray manager's settings: their defaults (shared by every transport) and the checks that name bad values.

>>> check_ray_config({**RAY_CONFIG, "shared_memory": None, "context": None, "transport": "shm"})
>>> check_ray_config({**RAY_CONFIG, "shared_memory": True, "context": None})
Traceback (most recent call last):
...
ding.errors.ConfigError: env.manager.shared_memory must be None or False for the ray manager's transport 'ray' \
(actors may run on other hosts; transport 'shm' keeps them on this node), got True
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

from ding.errors import ConfigError

RAY_CONFIG: dict[str, Any] = {
    "context": None,  # not applicable: Ray starts the actor processes
    "envs_per_worker": 4,
    "shared_memory": None,  # None: what the transport uses (True for "shm", False for "ray" and "zmq")
    "address": None,  # None: the Ray this process uses, else start a local one (or join RAY_ADDRESS)
    "num_cpus_per_worker": None,  # None: Ray's default (holds no CPU; one if resources_per_worker names a resource)
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
"""The ray manager's keys over the worker managers' ones: one set for every transport (``create_env_manager``
picks the class by ``transport``)."""


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


def check_transport(cls_name: str, transport: str, cfg: Mapping[str, Any]) -> None:
    """A manager class runs one transport: refuse a config that asks the class for another.

    >>> check_transport("RayShmEnvManager", "shm", {"transport": "zmq"})
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: RayShmEnvManager runs transport 'shm', got 'zmq'; build the ray manager with \
create_env_manager({'type': 'ray', 'transport': 'zmq'}, env_fns)
    """
    asked = cfg.get("transport", transport)
    if asked != transport:
        raise ConfigError(
            f"{cls_name} runs transport {transport!r}, got {asked!r}; build the ray manager with "
            f"create_env_manager({{'type': 'ray', 'transport': {asked!r}}}, env_fns)"
        )
