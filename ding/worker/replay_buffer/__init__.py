"""DI-engine's ``ding.worker.replay_buffer`` (compatibility): ``NaiveReplayBuffer`` and ``AdvancedReplayBuffer``
(prioritized) with DI-engine's constructors, ``default_config()`` and calls, built on ding's buffers
(:mod:`ding.worker.naive_replay`, :mod:`ding.worker.prioritized_buffer`)."""

from ding.worker.replay_buffer.advanced_buffer import AdvancedReplayBuffer
from ding.worker.replay_buffer.naive_buffer import NaiveReplayBuffer

__all__ = ["AdvancedReplayBuffer", "NaiveReplayBuffer"]
