"""Adaptive spin-waiting: poll briefly before blocking, when recent waits were short.

Blocking on a pipe costs a scheduler wake-up (tens to hundreds of microseconds on a VM); polling
for a short window catches quick answers without it. The window follows the typical recent wait
and switches off when waits are long, so slow envs are waited for without burning a core.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

SPIN_LIMIT = 300e-6
"""Longest spin window in seconds; waits typically longer than this block at once."""


def free_core_for_spinning(workers: int) -> bool:
    """True when ``workers`` busy workers still leave a core free, so a spinning process steals nothing.

    With every core taken by a worker, spinning would slow the very workers being waited for.
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return workers < cores


class SpinBudget:
    """Tracks typical wait times and gives the spin window to use next.

    >>> budget = SpinBudget(limit=1e-3)
    >>> for _ in range(20):
    ...     budget.observe(5e-3)
    >>> budget.window()
    0.0
    """

    def __init__(self, limit: float = SPIN_LIMIT) -> None:
        """``limit`` 0 turns spinning off."""
        self.limit = limit
        self.typical = limit / 2

    def window(self) -> float:
        return 0.0 if self.typical > self.limit else min(self.limit, 2.0 * self.typical)

    def observe(self, waited: float) -> None:
        self.typical = 0.8 * self.typical + 0.2 * waited


def spin_until(ready: Callable[[], bool], window: float) -> bool:
    """Call ``ready`` until it returns True or ``window`` seconds pass, yielding the CPU in between."""
    if window <= 0.0:
        return ready()
    deadline = time.perf_counter() + window
    while True:
        if ready():
            return True
        if time.perf_counter() >= deadline:
            return False
        os.sched_yield()
