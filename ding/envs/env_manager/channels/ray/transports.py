"""The transports of the ray manager, and the manager class that runs each."""

from __future__ import annotations

from typing import Any

from ding.envs.env_manager.base_manager import BaseEnvManager
from ding.envs.env_manager.channels.ray.manager import RayEnvManager, RayShmEnvManager
from ding.envs.env_manager.channels.zmq.ray_manager import RayZmqEnvManager
from ding.errors import ConfigError

TRANSPORTS: dict[str, type[BaseEnvManager]] = {
    "ray": RayEnvManager,  # one Ray call per actor per batch; actors anywhere in the cluster
    "zmq": RayZmqEnvManager,  # actors anywhere connect back over CURVE zmq; steps skip Ray
    "shm": RayShmEnvManager,  # actors on the manager's node step through shared memory, as subprocess workers
}
"""Values of ``env.manager.transport`` for the ray manager, with the class that runs each."""


def ray_transport_class(transport: Any) -> type[BaseEnvManager]:
    """The ray manager class that runs ``transport``.

    >>> ray_transport_class("shm").__name__
    'RayShmEnvManager'
    """
    if isinstance(transport, str) and transport in TRANSPORTS:
        return TRANSPORTS[transport]
    raise ConfigError(f"env.manager.transport must be one of {', '.join(map(repr, TRANSPORTS))}, got {transport!r}")
