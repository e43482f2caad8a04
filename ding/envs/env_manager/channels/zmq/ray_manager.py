"""``RayZmqEnvManager``: the ray manager's ``"zmq"`` transport, the zmq channel with Ray actors as its placement.

Ray places, starts and restarts the workers (:mod:`~ding.envs.env_manager.channels.zmq.ray_actors`); steps
travel over the zmq channel as for :class:`~ding.envs.env_manager.channels.zmq.manager.ZmqEnvManager`, never
through Ray calls. Ray is imported when a manager is built, so ding imports without it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ding.envs.env_manager.channels.ray.cluster import Connection, import_ray
from ding.envs.env_manager.channels.ray.config import check_transport
from ding.envs.env_manager.channels.ray.manager import RayEnvManager
from ding.envs.env_manager.channels.zmq.manager import ZmqEnvManager, check_link_config
from ding.envs.env_manager.channels.zmq.ray_actors import RayActors
from ding.envs.env_manager.core.channel import Channel
from ding.errors import ConfigError


class RayZmqEnvManager(ZmqEnvManager):
    """Envs in Ray actors that talk zmq with the manager; ``step`` returns when every stepped env has its result.

    Built by ``create_env_manager({"type": "ray", "transport": "zmq", ...}, env_fns)``. A finite ``wait_num``
    makes ``step`` return partial batches.
    """

    manager_type = "ray"
    transport: ClassVar[str] = "zmq"
    """The value of ``env.manager.transport`` this class runs."""
    config: ClassVar[dict[str, Any]] = RayEnvManager.config

    def __init__(self, env_fn: Sequence[Any], cfg: Mapping[str, Any] | None = None) -> None:
        cfg = dict(cfg or {})
        check_transport(type(self).__name__, self.transport, cfg)
        super().__init__(env_fn, {**cfg, "transport": self.transport})
        import_ray()  # without Ray, fail here with the extra to install
        self._actors: RayActors | None = None

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any], *, partial_batches: bool | None = None) -> None:
        """The ray manager's settings (not the zmq manager's own: Ray places the workers)."""
        RayEnvManager.check_settings(settings, partial_batches=partial_batches)
        check_link_config(settings)
        endpoint = settings["endpoint"]
        if endpoint is not None and not (isinstance(endpoint, str) and endpoint.startswith("tcp://")):
            raise ConfigError(
                f"env.manager.endpoint must be None (this node's Ray address) or 'tcp://HOST:PORT' for the ray "
                f"manager's zmq transport, got {endpoint!r}"
            )

    def _configure(self) -> None:
        return None  # Ray places the workers: nothing is left open

    @property
    def worker_actors(self) -> list[Any]:
        """The Ray actor handles, one per group of ``envs_per_worker`` envs (None where there is none)."""
        actors = self._actors.actors if self._actors is not None else []
        return [actors[w] if w < len(actors) else None for w in range(len(self._groups))]

    def _make_channel(self) -> Channel:
        connection = Connection(self._cfg.address, self._cfg.init_kwargs)
        self._actors = RayActors(connection, self._cfg, self._start_timeout(), self._groups)
        return self._zmq_channel(self._actors, None)
