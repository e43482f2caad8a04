"""Adaptive spin-waiting: poll briefly before blocking, when recent waits were short.

Blocking on a pipe costs a scheduler wake-up (tens to hundreds of microseconds on a VM); polling
for a short window catches quick answers without it. The window follows the typical recent wait
and, for long waits, starts only shortly before the answer is due, so slow envs are waited for
mostly blocked, without burning a core.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable
from typing import Protocol

SPIN_LIMIT = 300e-6
"""Longest spin window in seconds; waits typically longer than this block at once."""


class SpinBudget:
    """Tracks typical wait times and gives the spin window to use next.

    >>> budget = SpinBudget(limit=1e-3)
    >>> for _ in range(20):
    ...     budget.observe(5e-3)
    >>> round(budget.pre_block(), 6) > 0, budget.window() == budget.limit
    (True, True)
    """

    def __init__(self, limit: float = SPIN_LIMIT) -> None:
        """``limit`` 0 turns spinning off."""
        self.limit = limit
        self.typical = limit / 2

    def window(self) -> float:
        """How long to spin: about twice a typical short wait, or ``limit`` after :meth:`pre_block` for long ones."""
        if self.limit <= 0.0:
            return 0.0
        return self.limit if self.typical > self.limit else min(self.limit, 2.0 * self.typical)

    def pre_block(self) -> float:
        """For typically long waits: how long to block first, waking a little before the answer is due."""
        if self.limit <= 0.0 or self.typical <= self.limit:
            return 0.0
        return self.typical - self.limit / 2

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


class HasFileno(Protocol):
    def fileno(self) -> int: ...


def readable(conn: HasFileno) -> Callable[[], bool]:
    """A check, without waiting, whether ``conn`` has data to read (or its other end closed): one ``poll`` system
    call on a poller made once. ``multiprocessing``'s ``Connection.poll`` builds a selector on every call, which
    costs several microseconds each time a spinning process looks.

    >>> import multiprocessing
    >>> here, there = multiprocessing.Pipe()
    >>> ready = readable(here)
    >>> ready(), there.send_bytes(b'x'), ready()
    (False, None, True)
    """
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN)
    return lambda: bool(poller.poll(0))
