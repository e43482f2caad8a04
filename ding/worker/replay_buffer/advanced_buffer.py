"""DI-engine's ``AdvancedReplayBuffer`` (compatibility): ding's prioritized buffer with DI-engine's constructor,
``default_config()`` and calls.

``default_config()`` holds DI-engine's keys at the values ding has: ``replay_buffer_size`` 4096, ``alpha``,
``beta`` and ``anneal_step`` (the priority rule of :mod:`ding.worker.priority`); ``max_use`` and ``max_staleness``
infinite, ``deepcopy`` and ``enable_track_used_data`` False; ``thruput_controller``'s push/sample rate limits open
(``max`` inf, ``min`` 0) and ``sample_min_limit_ratio`` 1 (a batch is drawn once ``size`` samples are stored).
Another value of these is refused with the reason; ``monitor``, ``periodic_thruput_seconds`` and
``thruput_controller.window_seconds`` (its logs) are dropped with one line. Sampled data carry DI-engine's keys
``replay_buffer_idx``, ``replay_unique_id`` and ``IS``; ``update(info)`` takes the learner's new priorities as
DI-engine's ``{'replay_buffer_idx', 'replay_unique_id', 'priority'}``.

Example:
    >>> cfg = AdvancedReplayBuffer.default_config()
    >>> cfg.replay_buffer_size, cfg.alpha, cfg.max_use
    (4096, 0.6, inf)
    >>> buffer = AdvancedReplayBuffer(cfg)
    >>> buffer.push([{'x': i} for i in range(4)], cur_collector_envstep=4)
    >>> sorted(buffer.sample(2, cur_learner_iter=0)[0])
    ['IS', 'replay_buffer_idx', 'replay_unique_id', 'x']
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from ding.config.policy_sections import PRIORITY_KEYS, REPLAY_BUFFER
from ding.utils.accepts import fixed, redeclare
from ding.worker.prioritized_buffer import PrioritizedReplayBuffer
from ding.worker.priority import PriorityRule
from ding.worker.replay_buffer.buffer_config import NO_DEEPCOPY, NO_TRACKING
from ding.worker.replay_buffer.naive_buffer import DIEngineBufferCalls

NO_LIMIT = "ding's buffer does not limit how often a sample is used or how old it may be"
NO_RATE_LIMIT = "ding's buffer does not limit the push/sample rate"


class AdvancedReplayBuffer(DIEngineBufferCalls, PrioritizedReplayBuffer):
    """ding's :class:`~ding.worker.prioritized_buffer.PrioritizedReplayBuffer` with DI-engine's config and calls."""

    config: ClassVar[dict[str, Any]] = {
        "type": fixed("advanced", note="DI-engine's name of this buffer"),
        "replay_buffer_size": redeclare(REPLAY_BUFFER, {"replay_buffer_size": 4096})["replay_buffer_size"],
        "max_use": fixed(math.inf, note=NO_LIMIT),
        "max_staleness": fixed(math.inf, note=NO_LIMIT),
        **PRIORITY_KEYS,
        "enable_track_used_data": fixed(False, note=NO_TRACKING),
        "deepcopy": fixed(False, note=NO_DEEPCOPY),
        "thruput_controller": {
            "push_sample_rate_limit": {
                "max": fixed(math.inf, note=NO_RATE_LIMIT),
                "min": fixed(0, note=NO_RATE_LIMIT),
            },
            "sample_min_limit_ratio": fixed(1, note="a batch is drawn once as many samples are stored"),
        },
    }

    def _ding_arguments(self) -> tuple[Any, ...]:
        """ding's prioritized buffer's capacity and priority rule, from :attr:`cfg`."""
        rule = PriorityRule(float(self.cfg.alpha), float(self.cfg.beta), int(self.cfg.anneal_step))
        return (self.cfg.replay_buffer_size, rule)
