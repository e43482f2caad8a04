"""Process helpers of the fault and leftover benchmarks: states and ``/dev/shm`` entries.

Timing and its statistics (CPU time from ``/proc``, timed windows, :class:`~ding.utils.measure.CellResult`) are
:mod:`ding.utils.measure`, which ``ding -m bench`` uses too.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from ding.utils.measure import stat_fields


def process_state(pid: int) -> str | None:
    """The one-letter state of a process (``Z`` for a zombie), or None when it no longer exists."""
    fields = stat_fields(pid)
    return fields[0] if fields else None


def is_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    state = process_state(pid)
    return state is not None and state != "Z"


def shm_entries(prefixes: Sequence[str]) -> list[str]:
    """Names in ``/dev/shm`` starting with any of ``prefixes``."""
    try:
        names = os.listdir("/dev/shm")
    except OSError:
        return []
    return sorted(name for name in names if name.startswith(tuple(prefixes)))
