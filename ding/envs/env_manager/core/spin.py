"""Adaptive spin-waiting: poll briefly before blocking, when recent waits were short and the cores are free.

Blocking on a pipe costs a scheduler wake-up (tens to hundreds of microseconds on a VM); polling for a short window
catches quick answers without it. The window follows the typical recent wait and, for long waits, starts only
shortly before the answer is due, so slow envs are waited for mostly blocked, without burning a core. A spin that
loses its core for long (another program, or the caller's own work, wants the cores) makes the next waits block at
once (:class:`SpinBudget`). A caller that never has to wait (its replies are always in) gives its core up once per
batch instead (:class:`CoreYield`), so the workers that share its core are not starved.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable
from typing import Protocol

SPIN_LIMIT = 300e-6
"""Longest spin window in seconds; waits typically longer than this block at once."""


LOST_CORE = 1e-3
"""A spin off the CPU for longer than this lost its core to a process that keeps it (a time slice of another
program, or the caller's own work), not to a worker of the batch, which hands it back within its step."""
CROWDED_BACKOFF = 64
"""Most waits in a row that block at once after spins that lost their core (see :meth:`SpinBudget.spin`)."""


class SpinBudget:
    """Tracks typical wait times and gives the spin window to use next; spins only while a core is free for it.

    A spin that lost its core for longer than :data:`LOST_CORE` shows that another program (or the caller's own
    work) wants the cores; spinning then only delays it, so the next waits block at once: 1, then 3, 7, ... up to
    :data:`CROWDED_BACKOFF` waits while the spins keep losing their core, none once a spin keeps it.

    >>> budget = SpinBudget(limit=1e-3)
    >>> for _ in range(20):
    ...     budget.observe(5e-3)
    >>> round(budget.pre_block(), 6) > 0, budget.window() == budget.limit
    (True, True)
    >>> budget.spun(off_cpu=2e-3); budget.window(), budget.window() == budget.limit  # one wait blocks at once
    (0.0, True)
    """

    def __init__(self, limit: float = SPIN_LIMIT) -> None:
        """``limit`` 0 turns spinning off."""
        self.limit = limit
        self.typical = limit / 2
        self.backoff = 0
        """How many waits block at once after the next spin that loses its core."""
        self.blocking = 0
        """Waits left that block at once (the last spins lost their core)."""

    def window(self) -> float:
        """How long to spin (one call per wait): about twice a typical short wait, or ``limit`` after
        :meth:`pre_block` for long ones; 0 while the cores are wanted elsewhere."""
        if self.limit <= 0.0:
            return 0.0
        if self.blocking:
            self.blocking -= 1
            return 0.0
        return self.limit if self.typical > self.limit else min(self.limit, 2.0 * self.typical)

    def pre_block(self) -> float:
        """For typically long waits: how long to block first, waking a little before the answer is due."""
        if self.limit <= 0.0 or self.typical <= self.limit:
            return 0.0
        return self.typical - self.limit / 2

    def observe(self, waited: float) -> None:
        self.typical = 0.8 * self.typical + 0.2 * waited

    def spin(self, ready: Callable[[], bool]) -> bool:
        """Call ``ready`` until it returns True or this wait's :meth:`window` passes (yielding the CPU in between),
        and learn from the spin whether the cores are wanted elsewhere."""
        window = self.window()
        if window <= 0.0:
            return ready()
        wall, cpu = time.perf_counter(), time.thread_time()
        found = spin_until(ready, window)
        self.spun((time.perf_counter() - wall) - (time.thread_time() - cpu))
        return found

    def spun(self, off_cpu: float) -> None:
        """A spin spent ``off_cpu`` seconds off the CPU: past :data:`LOST_CORE` the next waits block at once."""
        if off_cpu > LOST_CORE:
            self.backoff = min(2 * self.backoff + 1, CROWDED_BACKOFF)
            self.blocking = self.backoff
        else:
            self.backoff = 0


SLEPT = 30e-6
"""A wait for replies that spent longer than this off the CPU slept; a shorter one found them in (or worked)."""
QUICK_REPLY = 300e-6
"""Replies that typically come within this of their ``send`` are quick: a core handed to their worker comes back
soon (:class:`CoreYield`)."""


class CoreYield:
    """A caller that keeps finding its replies in gives its core up once after each batch it hands over.

    Such a caller (``recv`` finds its batch without waiting: quick envs, more of them than a batch) never blocks, so
    a worker rung on the caller's core waits for the kernel to preempt the caller, while the workers on the other
    cores answer again and again: their envs' rows pile up, the others' fall behind, and the throughput drops (on two
    cores, 4 workers of a cheap env through ``send`` / ``recv``: 1.8× the env steps/s, and every env's rows alike,
    with the yield; ``bench/bench_fairness.py``). So when its replies are quick (:data:`QUICK_REPLY`) and it has not
    slept since it handed over the last batch, it yields its core (``sched_yield``) after this one: a worker rung on
    it steps now, and gives the core back soon. A caller of slow envs keeps its core: a worker given it would keep it
    for a whole step, and the caller sleeps while it waits for its replies anyway.

    >>> core = CoreYield()
    >>> core.handed_over(quick=True); core.handed_over(quick=True); core.yields  # no sleep in between: a yield
    1
    >>> core.handed_over(quick=False); core.yields  # slow replies: the caller keeps its core
    1
    >>> since = core.clock(); time.sleep(0.001); core.waited(since); core.handed_over(quick=True); core.yields
    1
    """

    def __init__(self) -> None:
        self.slept = True
        """Whether the caller slept waiting for replies since it last handed a batch over."""
        self.yields = 0
        """How often the caller gave its core up."""

    @staticmethod
    def clock() -> tuple[float, float]:
        """Now, as wall time and this thread's CPU time (the start of a wait, for :meth:`waited`)."""
        return time.perf_counter(), time.thread_time()

    def waited(self, since: tuple[float, float]) -> None:
        """The caller waited for replies from ``since`` (:meth:`clock`) to now: it slept if it was off the CPU for
        longer than :data:`SLEPT` meanwhile."""
        wall, cpu = since
        self.off_cpu((time.perf_counter() - wall) - (time.thread_time() - cpu))

    def off_cpu(self, seconds: float) -> None:
        """The caller spent ``seconds`` off the CPU waiting for replies: it slept if that is longer than
        :data:`SLEPT`."""
        if seconds > SLEPT:
            self.slept = True

    def handed_over(self, quick: bool) -> None:
        """The caller has sent a batch of steps and goes back to its own work; ``quick``: its replies are quick."""
        if quick and not self.slept:
            self.yields += 1
            os.sched_yield()
        self.slept = False


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
