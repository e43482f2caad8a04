"""What a worker's step or reset reply carries besides the step rows: infos and failures, by env id.

>>> StepReply().infos, StepReply().steps is None
({}, True)
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ding.envs.env_manager.core.failure import Failure


@dataclasses.dataclass
class StepReply:
    """What a step or reset leaves besides shared memory: info dicts and failures, by env id."""

    infos: dict[int, dict[str, Any]] = dataclasses.field(default_factory=dict)
    failures: dict[int, Failure] = dataclasses.field(default_factory=dict)
    steps: dict[int, tuple[Any, Any]] | None = None  # pickled layouts: (obs, reward) of each step
    ready: dict[int, Any] | None = None  # pickled layouts: the first obs of each reset
    seq: int | None = None  # a step's reply: the number of the step it answers (:mod:`.sequence`)
