"""The subprocess env managers: the batch core over pipes to local worker processes, with shared memory.

A worker owns ``envs_per_worker`` envs and is woken once per batch step with a one-byte message; actions,
observations, rewards and end flags cross in shared memory laid out from the envs' declared spaces before any
worker starts. Only info dicts and failures are pickled, and only when there are any. Everything else (faults,
restarts, probing, exactly-once accounting) is the core's: :mod:`ding.envs.env_manager.core`. Both managers are
configurations of :class:`~ding.envs.env_manager.base_manager.BaseEnvManager`: a declared config and an engine.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ding.envs.env_manager.base_manager import BaseEnvManager
from ding.envs.env_manager.channels.affinity import AFFINITY_TEXT, accepts_cores, resolve_cores
from ding.envs.env_manager.channels.in_caller import InCallerChannel
from ding.envs.env_manager.channels.pipe import LocalProcesses, PipeChannel
from ding.envs.env_manager.core.batch_core import WORKER_CONFIG, worker_engine
from ding.envs.env_manager.core.channel import Channel
from ding.envs.env_manager.core.groups import EnvGroups
from ding.envs.env_manager.engine import EngineFactory
from ding.envs.env_manager.settings import ManagerSettings
from ding.utils.accepts import redeclare, satisfying


def local_processes(settings: ManagerSettings, groups: EnvGroups) -> Channel:
    """Pipes to worker processes of this host; with ``step_in_caller`` the calling process steps group 0 itself."""
    pipes = PipeChannel(LocalProcesses(settings.rest.context, resolve_cores(settings.rest.cpu_affinity)))
    return InCallerChannel(pipes) if settings.rest.step_in_caller else pipes


class SyncSubprocessEnvManager(BaseEnvManager):
    """Run envs in worker processes; ``step`` returns once every stepped env has its result.

    Example:
        >>> from functools import partial
        >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
        >>> fns = [partial(CartPoleEnv, cfg={}) for _ in range(4)]
        >>> with SyncSubprocessEnvManager(fns, {'envs_per_worker': 2, 'episode_num': 1}) as manager:
        ...     manager.seed(0)
        ...     manager.launch()
        ...     while not manager.done:
        ...         _ = manager.step({i: 1 for i in manager.ready_obs_id})
    """

    manager_type = "subprocess"
    config: ClassVar[dict[str, Any]] = redeclare(
        WORKER_CONFIG,
        {
            "step_in_caller": False,  # the calling process steps env group 0 itself while workers step the others
            "cpu_affinity": satisfying(AFFINITY_TEXT, accepts_cores, default=None, note="each worker on one core"),
        },
    )
    make_engine: ClassVar[EngineFactory] = worker_engine(local_processes)


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
    config: ClassVar[dict[str, Any]] = redeclare(
        SyncSubprocessEnvManager.config, {"wait_num": 2, "step_wait_timeout": 0.01}
    )
