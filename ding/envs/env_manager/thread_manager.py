"""``ThreadEnvManager`` (manager type ``thread``): the batch core over threads of the calling process.

Choose it for simulators that release the GIL while they step (MuJoCo, C++ or GPU simulators): the groups step in
parallel with no worker process, no pickled constructors and no process start. For pure-Python envs the GIL lets
one thread run at a time, so a process manager (``subprocess``) is faster. See
:mod:`~ding.envs.env_manager.channels.threads` for what a thread can and cannot do when an env hangs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ding.envs.env_manager.base_manager import BaseEnvManager
from ding.envs.env_manager.channels.threads import ThreadChannel
from ding.envs.env_manager.core.batch_core import WORKER_CONFIG, worker_engine
from ding.envs.env_manager.core.channel import Channel
from ding.envs.env_manager.core.groups import EnvGroups
from ding.envs.env_manager.engine import EngineFactory
from ding.envs.env_manager.settings import ManagerSettings
from ding.errors import ConfigError
from ding.utils.accepts import redeclare


def check_no_context(settings: Mapping[str, Any]) -> None:
    """The thread manager starts no processes: ``context`` stays None.

    >>> check_no_context({'context': 'fork'})
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: env.manager.context is 'fork', but the thread manager starts no processes; leave it None
    """
    if settings["context"] is not None:
        raise ConfigError(
            f"env.manager.context is {settings['context']!r}, but the thread manager starts no processes; leave it None"
        )


def threads(settings: ManagerSettings, groups: EnvGroups) -> Channel:
    """One thread of this process per env group."""
    return ThreadChannel()


class ThreadEnvManager(BaseEnvManager):
    """Env groups (``envs_per_worker`` envs each) stepped by threads of this process.

    Spaces that the constructors do not declare are read from one env built in this process (``env_ref``).

    Example:
        >>> from functools import partial
        >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
        >>> fns = [partial(CartPoleEnv, cfg={}) for _ in range(4)]
        >>> with ThreadEnvManager(fns, {'envs_per_worker': 2, 'episode_num': 1}) as manager:
        ...     manager.seed(0)
        ...     manager.launch()
        ...     while not manager.done:
        ...         _ = manager.step({i: 1 for i in manager.ready_obs_id})
        ...     manager.worker_pids      # no worker processes
        [None, None]
    """

    manager_type = "thread"
    config: ClassVar[dict[str, Any]] = redeclare(WORKER_CONFIG, {"context": None})
    settings_checks: ClassVar[tuple[Callable[[Mapping[str, Any]], None], ...]] = (check_no_context,)
    make_engine: ClassVar[EngineFactory] = worker_engine(threads, probe_in_caller=True)
