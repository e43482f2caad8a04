"""The subprocess env managers: the batch core over pipes to local worker processes, with shared memory.

A worker owns ``envs_per_worker`` envs and is woken once per batch step with a one-byte message; actions,
observations, rewards and end flags cross in shared memory laid out from the envs' declared spaces before any
worker starts. Only info dicts and failures are pickled, and only when there are any. Everything else (faults,
restarts, probing, exactly-once accounting) is the core's: :mod:`ding.envs.env_manager.core`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ding.envs.env_manager.channels.in_caller import InCallerChannel
from ding.envs.env_manager.channels.pipe import LocalProcesses, PipeChannel
from ding.envs.env_manager.core.batch_core import BatchCore
from ding.envs.env_manager.core.channel import Channel
from ding.utils.accepts import redeclare


class SyncSubprocessEnvManager(BatchCore):
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
        BatchCore.config,
        {"step_in_caller": False},  # the calling process steps env group 0 itself while workers step the others
    )

    def __init__(self, env_fn: Sequence[Any], cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(env_fn, cfg)

    def _make_channel(self) -> Channel:
        pipes = PipeChannel(LocalProcesses(self._cfg.context))
        return InCallerChannel(pipes) if self._cfg.step_in_caller else pipes


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
