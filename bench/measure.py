"""Measuring helpers: CPU time of a process tree read from ``/proc``, timed windows, and their statistics."""

from __future__ import annotations

import dataclasses
import os
import statistics
import time
from collections.abc import Iterable, Sequence

import numpy as np

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _read(path: str) -> str | None:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return None


def _stat_fields(pid: int) -> list[str] | None:
    """Fields of ``/proc/<pid>/stat`` from the state on (field 3 is index 0), or None when gone."""
    text = _read(f"/proc/{pid}/stat")
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
        text = _read(f"/proc/{pid}/task/{tid}/schedstat")
        if text:
            total_ns += int(text.split()[0])
            found = True
    if found:
        return total_ns / 1e9
    fields = _stat_fields(pid)
    if fields is None:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def tree_cpu_seconds(child_pids: Iterable[int]) -> float:
    """CPU seconds of this process plus the given live children."""
    return time.process_time() + sum(process_cpu_seconds(pid) for pid in child_pids)


def system_busy_seconds() -> float:
    """CPU seconds every core of the machine has spent busy since boot (``/proc/stat``)."""
    text = _read("/proc/stat") or "cpu 0 0 0 0"
    ticks = [int(v) for v in text.splitlines()[0].split()[1:]]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
    return (sum(ticks[:8]) - idle) / CLOCK_TICKS


def process_state(pid: int) -> str | None:
    """The one-letter state of a process (``Z`` for a zombie), or None when it no longer exists."""
    fields = _stat_fields(pid)
    return fields[0] if fields else None


def is_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    state = process_state(pid)
    return state is not None and state != "Z"


def children_of(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (scanning ``/proc``)."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = _stat_fields(int(name))
            if fields is not None and int(fields[1]) == pid:
                out.append(int(name))
    return sorted(out)


def shm_entries(prefixes: Sequence[str]) -> list[str]:
    """Names in ``/dev/shm`` starting with any of ``prefixes``."""
    try:
        names = os.listdir("/dev/shm")
    except OSError:
        return []
    return sorted(name for name in names if name.startswith(tuple(prefixes)))


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
