"""``ThreadEnvManager`` (manager type ``thread``): the batch core over threads of the calling process.

Choose it for simulators that release the GIL while they step (MuJoCo, C++ or GPU simulators): the groups step in
parallel with no worker process, no pickled constructors and no process start. For pure-Python envs the GIL lets
one thread run at a time, so a process manager (``subprocess``) is faster. See
:mod:`~ding.envs.env_manager.channels.threads` for what a thread can and cannot do when an env hangs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ding.envs.env_manager.channels.threads import ThreadChannel
from ding.envs.env_manager.core.batch_core import BatchCore
from ding.envs.env_manager.core.channel import Channel
from ding.envs.probe import read_spaces
from ding.envs.values.spaces import EnvSpaces
from ding.errors import ConfigError
from ding.utils.accepts import redeclare


class ThreadEnvManager(BatchCore):
    """Env groups (``envs_per_worker`` envs each) stepped by threads of this process.

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
    config: ClassVar[dict[str, Any]] = redeclare(BatchCore.config, {"context": None})

    def __init__(self, env_fn: Sequence[Any], cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(env_fn, cfg)
        if self._cfg.context is not None:
            raise ConfigError(
                f"env.manager.context is {self._cfg.context!r}, but the thread manager starts no processes; "
                "leave it None"
            )

    def _make_channel(self) -> Channel:
        return ThreadChannel()

    def _probe_spaces(self) -> EnvSpaces:
        """Spaces of envs that do not declare them, read from one env built in this process (``env_ref``)."""
        return read_spaces(self.env_ref)
