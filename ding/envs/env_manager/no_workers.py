"""What an engine with no worker processes reports about workers: none, no channel, no shared memory, no replies.

The engines that run their envs without workers of ding's (:class:`~ding.envs.env_manager.in_process.InProcessEngine`
in the calling process, :class:`~ding.envs.env_manager.envpool.engine.PoolEngine` in envpool's C++ threads) take
these answers of the engine protocol's monitoring properties from :class:`NoWorkers`.
"""

from __future__ import annotations

from ding.envs.env_manager.core.channel import Channel

__all__ = ["NoWorkers"]


class NoWorkers:
    """The monitoring properties of an engine without workers (see the module docstring).

    Example:
        >>> NoWorkers().channel, NoWorkers().worker_pids, NoWorkers().late_results
        (None, [], 0)
    """

    __slots__ = ()

    @property
    def channel(self) -> Channel | None:
        """No channel: the envs are reached without one."""
        return None

    @property
    def worker_pids(self) -> list[int | None]:
        """No worker processes."""
        return []

    @property
    def shared_memory_names(self) -> list[str]:
        """No shared-memory step buffers."""
        return []

    @property
    def late_results(self) -> int:
        """No step is given up on, so no result comes late."""
        return 0

    @property
    def refused_replies(self) -> int:
        """No worker replies to refuse."""
        return 0
