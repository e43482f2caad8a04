"""The ray managers: the batch core with Ray actors as workers, over one Ray call per message or over pipes.

- :class:`RayEnvManager` (transport ``"ray"``): actors anywhere in the cluster, one Ray call per actor per batch
  (:mod:`~ding.envs.env_manager.channels.ray.call_channel`).
- :class:`RayShmEnvManager` (transport ``"shm"``): actors on this node that connect back over a local socket and
  step through shared memory (:mod:`~ding.envs.env_manager.channels.ray.actor_pipe`).

The core does the rest, as for every worker manager: the episodes in flight on a dead or hung actor end with
abnormal timesteps, each spending one of its env's ``max_retry``, the actor's other envs start new episodes, and
envs on other actors keep their steps. A finite ``wait_num`` gives partial batches. Ray is imported when a manager
is built, so ding imports without it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ding.envs.env_manager.channels.pipe import PipeChannel
from ding.envs.env_manager.channels.ray.actor_pipe import RayActorsOnNode
from ding.envs.env_manager.channels.ray.call_channel import RayCallChannel
from ding.envs.env_manager.channels.ray.cluster import Connection, import_ray
from ding.envs.env_manager.channels.ray.config import RAY_CONFIG, check_ray_config, check_transport
from ding.envs.env_manager.core.batch_core import BatchCore
from ding.envs.env_manager.core.channel import Channel
from ding.utils.accepts import redeclare


class RayEnvManager(BatchCore):
    """Run envs in Ray actors, ``envs_per_worker`` per actor, stepped with one Ray call per actor per batch.

    Example (not run as a doctest: it starts Ray)::

        manager = create_env_manager({"type": "ray", "envs_per_worker": 4}, [partial(CartPoleEnv, cfg={})] * 8)
        manager.seed(0)
        manager.launch()  # connects to (or starts) Ray and creates 2 actors
        while not manager.done:
            manager.step({i: 0 for i in manager.ready_obs_id})
        manager.close()  # kills the actors
    """

    manager_type = "ray"
    partial_batches = True
    transport: ClassVar[str] = "ray"
    """The value of ``env.manager.transport`` this class runs."""
    config: ClassVar[dict[str, Any]] = redeclare(BatchCore.config, RAY_CONFIG)
    """The keys of every ray transport (``create_env_manager`` picks the class by ``transport``)."""

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any], *, partial_batches: bool | None = None) -> None:
        super().check_settings(settings, partial_batches=partial_batches)
        check_ray_config(settings)

    def __init__(self, env_fn: Sequence[Any], cfg: Mapping[str, Any] | None = None) -> None:
        cfg = dict(cfg or {})
        check_transport(type(self).__name__, self.transport, cfg)
        super().__init__(env_fn, {**cfg, "transport": self.transport})
        import_ray()  # without Ray, fail here with the extra to install
        self._calls: RayCallChannel | None = None

    def _connection(self) -> Connection:
        return Connection(self._cfg.address, self._cfg.init_kwargs)

    def _make_channel(self) -> Channel:
        self._calls = RayCallChannel(self._connection(), self._cfg)
        return self._calls

    @property
    def worker_actors(self) -> list[Any]:
        """The Ray actor handles, one per group of ``envs_per_worker`` envs (None where there is none)."""
        if self._calls is None:
            return [None] * len(self._groups)
        return [handle.actor if handle is not None else None for handle in self._calls.actors]


class RayShmEnvManager(RayEnvManager):
    """Envs in Ray actors on this node that step through shared memory, as subprocess workers do.

    Built by ``create_env_manager({"type": "ray", "transport": "shm", ...}, env_fns)``.
    """

    transport: ClassVar[str] = "shm"

    def __init__(self, env_fn: Sequence[Any], cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(env_fn, cfg)
        self._cfg.shared_memory = True
        self._placement: RayActorsOnNode | None = None

    def _make_channel(self) -> Channel:
        self._placement = RayActorsOnNode(self._connection(), self._cfg, self._launch_timeout())
        return PipeChannel(self._placement)

    @property
    def worker_actors(self) -> list[Any]:
        """The Ray actor handles, one per group of ``envs_per_worker`` envs (None before launch, after close)."""
        if self._placement is None:
            return [None] * len(self._groups)
        return list(self._placement.actors)

    @property
    def local_address(self) -> str | None:
        """The abstract ``AF_UNIX`` address the actors connect to (after ``launch``), starting with a NUL byte."""
        placement = self._placement
        return placement.address if placement is not None and placement.listening else None
