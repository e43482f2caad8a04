"""What a training run shows people, the same from ``ding -m serial`` and from ``serial_pipeline(...)`` in a script.

A run logs its events (evaluations, checkpoints, training statistics) to the ``ding.serial`` :mod:`logging`
logger and draws its status line (:class:`~ding.worker.logger.ProgressLine`) on stderr. :func:`log_on_stderr`
shows those log lines on stderr, clearing a status line drawn on a terminal first; the ``ding`` command does
that for every training run, and :func:`pipeline_output` does it for a pipeline called from Python when nothing
else configured logging (no handler on ``ding.serial`` or above it: a script's ``logging.basicConfig`` wins),
then prints the run's summary line on stdout, as the command does. :func:`seed_table` is the summary across
seeds the command prints after several ``-s``.
"""

from __future__ import annotations

import contextlib
import logging
import math
import sys
from collections.abc import Iterator, Sequence
from typing import Protocol

SERIAL_LOGGER = "ding.serial"


class RunSummary(Protocol):
    """What the output needs of a run's result (``SerialResult``)."""

    @property
    def seed(self) -> int: ...
    @property
    def best_eval_return(self) -> float | None: ...
    @property
    def last_eval_return(self) -> float | None: ...
    @property
    def env_step(self) -> int: ...
    @property
    def wall_time(self) -> float: ...
    def summary(self) -> str: ...


class LineHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A stream handler that first clears a status line drawn in place on a terminal."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if self.stream.isatty():
                self.stream.write("\r\x1b[K")
        except (AttributeError, ValueError, OSError):  # a stream that cannot tell: write the record plainly
            pass
        super().emit(record)


@contextlib.contextmanager
def log_on_stderr() -> Iterator[None]:
    """Show a training run's log lines (the ``ding.serial`` logger at INFO) on stderr during the block."""
    logger = logging.getLogger(SERIAL_LOGGER)
    handler = LineHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def print_result(result: RunSummary) -> None:
    """The run's summary line on stdout."""
    print(result.summary(), flush=True)


@contextlib.contextmanager
def pipeline_output() -> Iterator[bool]:
    """Within a pipeline call: log on stderr unless logging is configured; yield whether this block shows it.

    Where it does, the caller prints the result with :func:`print_result` (the ``ding`` command prints it
    itself, so a pipeline it runs shows nothing twice).
    """
    if logging.getLogger(SERIAL_LOGGER).hasHandlers():
        yield False
        return
    with log_on_stderr():
        yield True


def seed_table(results: Sequence[RunSummary]) -> str:
    """A table of the runs' final and best eval returns, env steps and wall times, with their mean and std.

    >>> import dataclasses
    >>> @dataclasses.dataclass
    ... class R:
    ...     seed: int; best_eval_return: float; last_eval_return: float; env_step: int; wall_time: float
    ...     def summary(self) -> str: return ''
    >>> print(seed_table([R(0, 200.0, 190.0, 9000, 12.0), R(1, 180.0, 170.0, 11000, 14.0)]))
    seed  final eval return  best eval return  env steps  wall time (s)
    0                190.00            200.00       9000           12.0
    1                170.00            180.00      11000           14.0
    mean             180.00            190.00      10000           13.0
    std               10.00             10.00       1000            1.0
    """
    columns = ("final eval return", "best eval return", "env steps", "wall time (s)")
    rows = [
        (
            str(r.seed),
            _number(r.last_eval_return, 2),
            _number(r.best_eval_return, 2),
            str(r.env_step),
            f"{r.wall_time:.1f}",
        )
        for r in results
    ]
    for name, stat in (("mean", _mean), ("std", _std)):
        rows.append(
            (
                name,
                _number(stat([r.last_eval_return for r in results]), 2),
                _number(stat([r.best_eval_return for r in results]), 2),
                _number(stat([float(r.env_step) for r in results]), 0),
                _number(stat([r.wall_time for r in results]), 1),
            )
        )
    widths = [max(len("seed"), *(len(row[0]) for row in rows))]
    widths += [max(len(title), *(len(row[i + 1]) for row in rows)) for i, title in enumerate(columns)]
    lines = ["  ".join([f"{'seed':<{widths[0]}}", *(f"{t:>{w}}" for t, w in zip(columns, widths[1:], strict=True))])]
    for row in rows:
        cells = [f"{row[0]:<{widths[0]}}", *(f"{cell:>{w}}" for cell, w in zip(row[1:], widths[1:], strict=True))]
        lines.append("  ".join(cells))
    return "\n".join(lines)


def _number(value: float | None, digits: int) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _known(values: Sequence[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None]


def _mean(values: Sequence[float | None]) -> float | None:
    known = _known(values)
    return sum(known) / len(known) if known else None


def _std(values: Sequence[float | None]) -> float | None:
    """The population standard deviation (numpy's default), of the known values."""
    known = _known(values)
    if not known:
        return None
    mean = sum(known) / len(known)
    return math.sqrt(sum((v - mean) ** 2 for v in known) / len(known))
