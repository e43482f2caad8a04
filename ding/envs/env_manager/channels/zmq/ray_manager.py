"""``RayZmqEnvManager``: the ray manager's ``"zmq"`` transport, the zmq channel with Ray actors as its placement.

Ray places, starts and restarts the workers (:mod:`~ding.envs.env_manager.channels.zmq.ray_actors`); steps
travel over the zmq channel as for :class:`~ding.envs.env_manager.channels.zmq.manager.ZmqEnvManager`, never
through Ray calls. Ray is imported when a manager is built, so ding imports without it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from ding.envs.env_manager.channels.ray.config import check_ray_config
from ding.envs.env_manager.channels.ray.manager import RayEnvManager, actor_handles, connection, ray_manager_config
from ding.envs.env_manager.channels.zmq.channel import ZmqChannel
from ding.envs.env_manager.channels.zmq.manager import ZmqEnvManager, check_link_config, start_timeout, zmq_channel
from ding.envs.env_manager.channels.zmq.ray_actors import RayActors
from ding.envs.env_manager.core.batch_core import worker_engine
from ding.envs.env_manager.core.groups import EnvGroups
from ding.envs.env_manager.engine import EngineFactory
from ding.envs.env_manager.env_fn import EnvFn
from ding.envs.env_manager.settings import ManagerSettings
from ding.errors import ConfigError


def check_ray_endpoint(settings: Mapping[str, Any]) -> None:
    """The zmq transport binds on this node's Ray address (None) or on a ``tcp://`` endpoint.

    >>> check_ray_endpoint({'endpoint': 'ipc'})
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: env.manager.endpoint must be None (this node's Ray address) or 'tcp://HOST:PORT' for \
the ray manager's zmq transport, got 'ipc'
    """
    endpoint = settings["endpoint"]
    if endpoint is not None and not (isinstance(endpoint, str) and endpoint.startswith("tcp://")):
        raise ConfigError(
            f"env.manager.endpoint must be None (this node's Ray address) or 'tcp://HOST:PORT' for the ray "
            f"manager's zmq transport, got {endpoint!r}"
        )


def ray_actors(settings: ManagerSettings, groups: EnvGroups) -> ZmqChannel:
    """The zmq channel over Ray actors that connect back to this manager."""
    placement = RayActors(connection(settings), settings.rest, start_timeout(settings), groups.groups)
    return zmq_channel(settings, placement, None)


class RayZmqEnvManager(ZmqEnvManager):
    """Envs in Ray actors that talk zmq with the manager; ``step`` returns when every stepped env has its result.

    Built by ``create_env_manager({"type": "ray", "transport": "zmq", ...}, env_fns)``. A finite ``wait_num``
    makes ``step`` return partial batches.
    """

    manager_type = "ray"
    transport: ClassVar[str] = "zmq"
    """The value of ``env.manager.transport`` this class runs."""
    config: ClassVar[dict[str, Any]] = RayEnvManager.config
    settings_checks: ClassVar[tuple[Callable[[Mapping[str, Any]], None], ...]] = (
        check_ray_config,  # the ray manager's settings, not the zmq manager's own: Ray places the workers
        check_link_config,
        check_ray_endpoint,
    )
    make_engine: ClassVar[EngineFactory] = worker_engine(ray_actors)

    def __init__(self, env_fn: Sequence[EnvFn], cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(env_fn, ray_manager_config(type(self), self.transport, cfg))

    @property
    def worker_actors(self) -> list[Any]:
        """The Ray actor handles, one per group of ``envs_per_worker`` envs (None where there is none)."""
        return actor_handles(self._engine)
