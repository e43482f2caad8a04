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

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from ding.envs.env_manager.base_manager import BaseEnvManager
from ding.envs.env_manager.channels.pipe import PipeChannel
from ding.envs.env_manager.channels.ray.actor_pipe import RayActorsOnNode
from ding.envs.env_manager.channels.ray.call_channel import RayCallChannel
from ding.envs.env_manager.channels.ray.cluster import Connection, import_ray
from ding.envs.env_manager.channels.ray.config import RAY_CONFIG, check_ray_config, check_transport
from ding.envs.env_manager.core.batch_core import WORKER_CONFIG, BatchCore, core_of, worker_engine
from ding.envs.env_manager.core.channel import Channel
from ding.envs.env_manager.core.groups import EnvGroups
from ding.envs.env_manager.engine import Engine, EngineFactory, EngineParts
from ding.envs.env_manager.env_fn import EnvFn
from ding.envs.env_manager.settings import ManagerSettings
from ding.utils.accepts import redeclare


def connection(settings: ManagerSettings) -> Connection:
    """The Ray cluster the settings name (``address``, ``init_kwargs``)."""
    return Connection(settings.rest.address, settings.rest.init_kwargs)


def ray_calls(settings: ManagerSettings, groups: EnvGroups) -> Channel:
    """One Ray call per actor per batch, to actors anywhere in the cluster."""
    return RayCallChannel(connection(settings), settings.rest)


def actors_on_node(settings: ManagerSettings, groups: EnvGroups) -> Channel:
    """Pipes to Ray actors on this node, which step through shared memory."""
    return PipeChannel(RayActorsOnNode(connection(settings), settings.rest, settings.launch_timeout()))


def shm_engine(parts: EngineParts) -> BatchCore:
    """The batch core over :func:`actors_on_node`, always with shared memory."""
    parts.settings.rest.shared_memory = True
    return BatchCore(parts, actors_on_node)


def ray_manager_config(cls: type[BaseEnvManager], transport: str, cfg: Mapping[str, Any] | None) -> dict[str, Any]:
    """The config a ray manager class that runs ``transport`` is built with: refused when it asks for another
    transport; Ray must be installed (the extra to install is named otherwise)."""
    user = dict(cfg or {})
    check_transport(cls.__name__, transport, user)
    import_ray()
    return {**user, "transport": transport}


def actor_handles(engine: Engine) -> list[Any]:
    """The Ray actor handles of a ray manager's engine, one per env group (None where there is none)."""
    core = core_of(engine)
    channel = core.channel
    if isinstance(channel, RayCallChannel):
        actors = [handle.actor if handle is not None else None for handle in channel.actors]
    else:
        placement = getattr(channel, "placement", None)
        actors = list(getattr(placement, "actors", []))
    return [actors[w] if w < len(actors) else None for w in range(len(core.groups))]


class RayEnvManager(BaseEnvManager):
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
    config: ClassVar[dict[str, Any]] = redeclare(WORKER_CONFIG, RAY_CONFIG)
    """The keys of every ray transport (``create_env_manager`` picks the class by ``transport``)."""
    settings_checks: ClassVar[tuple[Callable[[Mapping[str, Any]], None], ...]] = (check_ray_config,)
    make_engine: ClassVar[EngineFactory] = worker_engine(ray_calls)

    def __init__(self, env_fn: Sequence[EnvFn], cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(env_fn, ray_manager_config(type(self), self.transport, cfg))

    @property
    def worker_actors(self) -> list[Any]:
        """The Ray actor handles, one per group of ``envs_per_worker`` envs (None where there is none)."""
        return actor_handles(self._engine)


class RayShmEnvManager(RayEnvManager):
    """Envs in Ray actors on this node that step through shared memory, as subprocess workers do.

    Built by ``create_env_manager({"type": "ray", "transport": "shm", ...}, env_fns)``.
    """

    transport: ClassVar[str] = "shm"
    make_engine: ClassVar[EngineFactory] = shm_engine

    @property
    def local_address(self) -> str | None:
        """The abstract ``AF_UNIX`` address the actors connect to (after ``launch``), starting with a NUL byte."""
        channel = self._engine.channel
        placement = channel.placement if isinstance(channel, PipeChannel) else None
        if isinstance(placement, RayActorsOnNode) and placement.listening:
            return placement.address
        return None
