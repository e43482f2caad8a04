"""Measuring throughput: CPU time of processes read from ``/proc``, timed windows of batches, and their statistics.

``ding -m bench`` and the benchmarks in ``bench/`` time their contenders with these: windows of batches
(:func:`time_batches`), taken in turn over every contender (:func:`rotated`), summed up per contender
(:class:`CellResult`: the median rate and the spread of the repeats).

Example:
    >>> cursor_seen = []
    >>> steps, wall, latencies, cursor = time_batches(lambda i: cursor_seen.append(i) or 4, 0.0, 3, cursor=10)
    >>> steps, cursor, cursor_seen, len(latencies)
    (12, 13, [10, 11, 12], 3)
    >>> rotated(['a', 'b', 'c'], 1)
    ['b', 'c', 'a']
    >>> cell = CellResult('base', 'cartpole', 2, [Window(100, 1.0, 1.0, []), Window(300, 1.0, 1.0, [])])
    >>> cell.median_rate, cell.spread
    (200.0, 0.5)
"""

from __future__ import annotations

import dataclasses
import os
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

import numpy as np

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
T = TypeVar("T")


def read_proc_file(path: str) -> str | None:
    """The text of a ``/proc`` file, or None when it cannot be read (the process is gone)."""
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return None


def stat_fields(pid: int) -> list[str] | None:
    """Fields of ``/proc/<pid>/stat`` from the state on (field 3 is index 0), or None when gone."""
    text = read_proc_file(f"/proc/{pid}/stat")
    if text is None:
        return None
    return text[text.rindex(")") + 2 :].split()


def process_cpu_seconds(pid: int) -> float:
    """CPU seconds a live process has used (all its threads; nanosecond schedstat where available)."""
    total_ns = 0
    found = False
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        tids = []
    for tid in tids:
        text = read_proc_file(f"/proc/{pid}/task/{tid}/schedstat")
        if text:
            total_ns += int(text.split()[0])
            found = True
    if found:
        return total_ns / 1e9
    fields = stat_fields(pid)
    if fields is None:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def children_of(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (scanning ``/proc``)."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = stat_fields(int(name))
            if fields is not None and int(fields[1]) == pid:
                out.append(int(name))
    return sorted(out)


def descendants_of(pid: int) -> list[int]:
    """Every process below ``pid``: its children, theirs, and so on."""
    found: list[int] = []
    level = children_of(pid)
    while level:
        found += level
        level = [child for parent in level for child in children_of(parent)]
    return found


def tree_cpu_seconds(child_pids: Iterable[int]) -> float:
    """CPU seconds of this process plus the given live children."""
    return time.process_time() + sum(process_cpu_seconds(pid) for pid in child_pids)


def system_busy_seconds() -> float:
    """CPU seconds every core of the machine has spent busy since boot (``/proc/stat``)."""
    text = read_proc_file("/proc/stat") or "cpu 0 0 0 0"
    ticks = [int(v) for v in text.splitlines()[0].split()[1:]]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
    return (sum(ticks[:8]) - idle) / CLOCK_TICKS


class BackgroundLoad:
    """How busy other processes kept the machine's cores while this process and its descendants ran a measurement.

    Example:
        >>> load = BackgroundLoad()
        >>> load.cores() >= 0.0
        True
    """

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.system = system_busy_seconds()
        self.own = tree_cpu_seconds(descendants_of(os.getpid()))

    def cores(self) -> float:
        """Cores busy with other work, on average since construction (call it while the descendants still run)."""
        wall = time.perf_counter() - self.started
        own = tree_cpu_seconds(descendants_of(os.getpid())) - self.own
        return max(0.0, (system_busy_seconds() - self.system - own) / wall) if wall > 0 else 0.0


def time_batches(
    step: Callable[[int], int], seconds: float, min_batches: int, cursor: int = 0
) -> tuple[int, float, list[float], int]:
    """Call ``step(cursor)`` (one batch; it returns the env steps delivered), advancing the cursor, for at least
    ``seconds`` and ``min_batches`` calls. Returns the env steps, the wall seconds, each call's latency and the
    next cursor."""
    latencies: list[float] = []
    steps = 0
    start = last = time.perf_counter()
    deadline = start + seconds
    while last < deadline or len(latencies) < min_batches:
        steps += step(cursor)
        now = time.perf_counter()
        latencies.append(now - last)
        last = now
        cursor += 1
    return steps, last - start, latencies, cursor


def rotated(items: Sequence[T], repeat: int) -> list[T]:
    """``items`` in the order of the ``repeat``-th round of interleaved windows: each round starts one further on,
    so slow drift of a shared machine hits every contender alike."""
    if not items:
        return []
    shift = repeat % len(items)
    return [*items[shift:], *items[:shift]]


@dataclasses.dataclass
class Window:
    """One timed run: env steps delivered, wall seconds, CPU seconds, per-batch latencies and background load.

    ``background_cores`` is the machine's busy CPU time not spent by the contender, per wall second.
    """

    steps: int
    seconds: float
    cpu_seconds: float
    latencies: list[float]
    background_cores: float = 0.0
    parent_cpu_seconds: float = 0.0

    @property
    def rate(self) -> float:
        return self.steps / self.seconds if self.seconds > 0 else 0.0


@dataclasses.dataclass
class CellResult:
    """Every window of one contender on one env and batch size, with what went wrong, if anything."""

    contender: str
    case: str
    n: int
    windows: list[Window] = dataclasses.field(default_factory=list)
    startup_seconds: float | None = None
    error: str | None = None
    anomalies: list[str] = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.windows)

    @property
    def rates(self) -> list[float]:
        return [w.rate for w in self.windows]

    @property
    def median_rate(self) -> float:
        return statistics.median(self.rates) if self.windows else 0.0

    @property
    def spread(self) -> float:
        """Half the range of the repeats' rates, relative to their median."""
        rates = self.rates
        median = self.median_rate
        return (max(rates) - min(rates)) / 2 / median if rates and median > 0 else 0.0

    def latency_ms(self, q: float) -> float:
        values = [lat for w in self.windows for lat in w.latencies]
        return float(np.percentile(values, q)) * 1e3 if values else float("nan")

    @property
    def background_cores(self) -> float:
        return statistics.median(w.background_cores for w in self.windows) if self.windows else float("nan")

    @property
    def cpu_us_per_step(self) -> float:
        steps = sum(w.steps for w in self.windows)
        return sum(w.cpu_seconds for w in self.windows) / steps * 1e6 if steps else float("nan")

    @property
    def parent_cpu_us_per_step(self) -> float:
        steps = sum(w.steps for w in self.windows)
        return sum(w.parent_cpu_seconds for w in self.windows) / steps * 1e6 if steps else float("nan")


__all__ = [
    "BackgroundLoad",
    "CellResult",
    "Window",
    "children_of",
    "descendants_of",
    "process_cpu_seconds",
    "read_proc_file",
    "rotated",
    "stat_fields",
    "system_busy_seconds",
    "time_batches",
    "tree_cpu_seconds",
]
