"""``ExperimentLogger``: an experiment's plain-text log, its CSV of evaluations and a tensorboard event file.

Under ``<exp_dir>/log/``:

- ``serial_logger.txt``: one timestamped line per event (evaluations, training statistics, checkpoints);
- ``eval.csv``: one row per evaluation (:data:`EVAL_CSV_COLUMNS`);
- ``serial/events.out.tfevents.*``: the same scalars for tensorboard, written when the ``tensorboard``
  package is installed (``pip install ding[torch]``); without it the text log says so and the rest is written.

Files that exist are appended to, never rewritten: a run that continues an earlier one in its directory adds its
lines and rows after the earlier ones (the CSV header only goes into a new file, and ``wall_time`` goes on from
the last row) and a new tensorboard event file beside the earlier ones.

Every line of the text log also goes to the ``ding.serial`` :mod:`logging` logger at INFO level, so
an application (the ``ding`` command) can show progress by configuring logging.

:class:`ProgressLine` is the one-line training status (env steps and their rate, episodes, train iterations,
last evaluation; with the run's limits the share done and an ETA) a training run writes on stderr.
"""

from __future__ import annotations

import csv
import logging
import math
import os
import pathlib
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from ding.worker.eval_result import EvalResult

LOGGER = logging.getLogger("ding.serial")

EVAL_CSV_COLUMNS = (
    "train_iter",
    "env_step",
    "wall_time",
    "eval_episode_return_mean",
    "eval_episode_return_std",
    "eval_episode_return_max",
    "eval_episode_return_min",
    "n_episode",
    "is_best",
    "stop_value_reached",
)


class ExperimentLogger:
    """Write an experiment's logs; ``close`` (or a ``with`` block) flushes and closes every file.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     with ExperimentLogger(tmp, tensorboard=False) as logger:
        ...         logger.info('hello')
        ...         logger.scalars('learner_iter', {'total_loss': 0.5}, step=1)
        ...     sorted(p.name for p in pathlib.Path(tmp, 'log').iterdir())
        ['eval.csv', 'serial_logger.txt']
    """

    def __init__(self, exp_dir: str | os.PathLike[str], tensorboard: bool = True) -> None:
        self.log_dir = pathlib.Path(exp_dir) / "log"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.text_path = self.log_dir / "serial_logger.txt"
        self.csv_path = self.log_dir / "eval.csv"
        self._start = time.monotonic() - _last_wall_time(self.csv_path)
        self._collector_mark = (time.monotonic(), 0, 0)
        self._text = self.text_path.open("a", encoding="utf-8")
        new_csv = not self.csv_path.exists() or self.csv_path.stat().st_size == 0
        self._csv_file = self.csv_path.open("a", encoding="utf-8", newline="")
        self._csv = csv.writer(self._csv_file)
        if new_csv:
            self._csv.writerow(EVAL_CSV_COLUMNS)
            self._csv_file.flush()
        self._tb: Any = None
        self.tb_dir: pathlib.Path | None = None
        if tensorboard:
            self._open_tensorboard()
        self._closed = False

    def _open_tensorboard(self) -> None:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as err:
            self.info(f"tensorboard is not installed ({err}); writing the text log and eval.csv only")
            return
        self.tb_dir = self.log_dir / "serial"
        self._tb = SummaryWriter(log_dir=str(self.tb_dir))

    @property
    def elapsed(self) -> float:
        """Seconds since the logger was opened, after the ``wall_time`` of the last row of an existing ``eval.csv``."""
        return time.monotonic() - self._start

    def info(self, message: str, echo: bool = True) -> None:
        """One line in the text log (and, with ``echo``, on the ``ding.serial`` logger)."""
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        self._text.write(f"[{stamp}] {message}\n")
        self._text.flush()
        if echo:
            LOGGER.info(message)

    def scalars(self, prefix: str, values: Mapping[str, float], step: int) -> None:
        """Record scalars as ``prefix/name`` at ``step`` in tensorboard and as one text line."""
        if self._tb is not None:
            for name, value in values.items():
                self._tb.add_scalar(f"{prefix}/{name}", value, step)
        text = ", ".join(f"{name}={_fmt(value)}" for name, value in values.items())
        self.info(f"{prefix} {step}: {text}")

    def mark_collector(self, env_step: int, episode_count: int) -> None:
        """Where the collector's counters stand now: :meth:`collector_scalars` measures its rates from here."""
        self._collector_mark = (time.monotonic(), env_step, episode_count)

    def collector_scalars(self, env_step: int, episode_count: int, values: Mapping[str, float]) -> None:
        """The collector's scalars at ``env_step``, with its rate since the last call (or :meth:`mark_collector`).

        Adds ``envstep_per_wall_sec`` (env steps collected since the last call per second of wall time since then:
        collection, training and evaluation together) to ``values`` and records them as ``collector_step/<name>``.
        """
        now = time.monotonic()
        since, step, _ = self._collector_mark
        rates: dict[str, float] = {}
        if now > since:
            rates["envstep_per_wall_sec"] = (env_step - step) / (now - since)
        self._collector_mark = (now, env_step, episode_count)
        self.scalars("collector_step", {**values, **rates}, env_step)

    def eval_result(self, result: EvalResult) -> None:
        """A row of ``eval.csv``, a text line and the evaluator scalars (per train iteration and per env step)."""
        self._csv.writerow(
            [
                result.train_iter,
                result.env_step,
                f"{self.elapsed:.3f}",
                result.mean,
                result.std,
                result.max,
                result.min,
                len(result.returns),
                int(result.is_best),
                int(result.stop),
            ]
        )
        self._csv_file.flush()
        if self._tb is not None:
            for axis, step in (("evaluator_iter", result.train_iter), ("evaluator_step", result.env_step)):
                self._tb.add_scalar(f"{axis}/eval_episode_return_mean", result.mean, step)
                self._tb.add_scalar(f"{axis}/eval_episode_return_std", result.std, step)
        best = ", new best" if result.is_best else ""
        stop = f", stop_value {result.stop_value} reached" if result.stop else ""
        self.info(
            f"evaluation at train iter {result.train_iter}, env step {result.env_step}: return "
            f"{result.mean:.2f} ± {result.std:.2f} (min {result.min:.2f}, max {result.max:.2f}) over "
            f"{len(result.returns)} episodes in {result.duration:.2f} s{best}{stop}"
        )

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._tb is not None:
            self._tb.close()
        self._csv_file.close()
        self._text.close()

    def __enter__(self) -> ExperimentLogger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ProgressLine:
    """A training run's status line: env steps and their rate, episodes, train iterations, the last eval return.

    ``max_env_step`` / ``max_train_iter`` (the run's limits) add the share done (``300/1000 (30%)``) and an ETA,
    the time the nearer limit takes at the rate so far (a run can end earlier, at its ``stop_value``). Rates
    count from the first :meth:`update` (the counters a resumed run starts from) and the line's creation.
    On a terminal the line is redrawn in place (``\\r``) at most every ``tty_interval`` seconds and
    :meth:`close` ends it with a newline; on anything else (a file, a pipe, a captured stream) a
    complete line is printed at most every ``interval`` seconds, the first one ``interval`` seconds
    after the start, so short runs and logs stay as they were. ``stream`` defaults to ``sys.stderr``
    at each write; ``clock`` is ``time.monotonic``.

    Example:
        >>> import io
        >>> now = [0.0]
        >>> out = io.StringIO()
        >>> progress = ProgressLine(out, interval=5, clock=lambda: now[0], max_env_step=1000)
        >>> progress.update(env_step=0, episodes=0, train_iter=0)
        >>> now[0] = 6.0
        >>> progress.update(env_step=300, episodes=12, train_iter=150, eval_return=21.5)
        >>> print(out.getvalue(), end='')
        env step 300/1000 (30%) | 50 steps/s | episodes 12 | train iter 150 | last eval return 21.50 | 6 s, ETA 14 s
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        interval: float = 5.0,
        tty_interval: float = 0.2,
        clock: Callable[[], float] = time.monotonic,
        tty: bool | None = None,
        max_env_step: int | None = None,
        max_train_iter: int | None = None,
    ) -> None:
        self._stream = stream
        self._clock = clock
        self._start = clock()
        self._tty = tty
        self._interval = tty_interval if self._is_tty() else interval
        self._last_write = self._start
        self._drawn = False  # a terminal line is shown and not yet ended
        self._limits = {"env_step": max_env_step, "train_iter": max_train_iter}
        self._origin: dict[str, int] | None = None  # the counters at the first update
        self.last_text = ""

    @property
    def drawn(self) -> bool:
        """Whether a terminal line is shown and not yet ended by :meth:`close`."""
        return self._drawn

    @property
    def stream(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stderr

    def _is_tty(self) -> bool:
        if self._tty is not None:
            return self._tty
        try:
            return bool(self.stream.isatty())
        except (AttributeError, ValueError):  # a closed or exotic stream
            return False

    @staticmethod
    def format(
        env_step: int,
        episodes: int,
        train_iter: int,
        eval_return: float | None,
        elapsed: float,
        *,
        steps_per_sec: float | None = None,
        max_env_step: int | None = None,
        max_train_iter: int | None = None,
        eta: float | None = None,
    ) -> str:
        """The status text.

        >>> ProgressLine.format(1200, 37, 600, None, 12.3)
        'env step 1200 | - steps/s | episodes 37 | train iter 600 | last eval return - | 12 s'
        >>> ProgressLine.format(1200, 37, 600, 9.5, 125, steps_per_sec=96.4, max_train_iter=2400, eta=375)
        'env step 1200 | 96 steps/s | episodes 37 | train iter 600/2400 (25%) | last eval return 9.50 | 2 min 05 s, \
ETA 6 min 15 s'
        """
        last = "-" if eval_return is None else f"{eval_return:.2f}"
        rate = "-" if steps_per_sec is None else f"{steps_per_sec:.0f}"
        times = duration_text(elapsed) + ("" if eta is None else f", ETA {duration_text(eta)}")
        return (
            f"env step {_of_limit(env_step, max_env_step)} | {rate} steps/s | episodes {episodes} | "
            f"train iter {_of_limit(train_iter, max_train_iter)} | last eval return {last} | {times}"
        )

    def update(
        self, env_step: int, episodes: int, train_iter: int, eval_return: float | None = None, force: bool = False
    ) -> None:
        """Show the current status if the interval has passed since the last write (or ``force``)."""
        now = self._clock()
        counters = {"env_step": env_step, "train_iter": train_iter}
        if self._origin is None:
            self._origin = counters
        if not force and now - self._last_write < self._interval:
            return
        self._last_write = now
        elapsed = now - self._start
        rates = {name: (counters[name] - self._origin[name]) / elapsed if elapsed > 0 else None for name in counters}
        self.last_text = self.format(
            env_step,
            episodes,
            train_iter,
            eval_return,
            elapsed,
            steps_per_sec=rates["env_step"],
            max_env_step=self._limits["env_step"],
            max_train_iter=self._limits["train_iter"],
            eta=self._eta(counters, rates),
        )
        try:
            if self._is_tty():
                self.stream.write(f"\r{self.last_text}\x1b[K")
                self._drawn = True
            else:
                self.stream.write(self.last_text + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # a closed stream must not end a training run
            pass

    def _eta(self, counters: Mapping[str, int], rates: Mapping[str, float | None]) -> float | None:
        """Seconds until the nearer limit at the rates so far; None without limits or progress."""
        etas = []
        for name, limit in self._limits.items():
            rate = rates[name]
            if limit is not None and rate is not None and rate > 0:
                etas.append(max(limit - counters[name], 0) / rate)
        return min(etas) if etas else None

    def close(self) -> None:
        """End a terminal line drawn in place (nothing otherwise)."""
        if self._drawn:
            self._drawn = False
            try:
                self.stream.write("\n")
                self.stream.flush()
            except (OSError, ValueError):
                pass


def _last_wall_time(csv_path: pathlib.Path) -> float:
    """The ``wall_time`` of the last row of an existing ``eval.csv`` (0 for none, or one that cannot be read)."""
    if not csv_path.is_file():
        return 0.0
    try:
        with csv_path.open(encoding="utf-8", newline="") as file:
            rows = list(csv.DictReader(file))
        value = float(rows[-1]["wall_time"]) if rows else 0.0
    except (OSError, ValueError, KeyError, TypeError, csv.Error):
        return 0.0
    return value if math.isfinite(value) and value > 0 else 0.0


def duration_text(seconds: float) -> str:
    """A duration for people.

    >>> duration_text(14.4), duration_text(250), duration_text(7500)
    ('14 s', '4 min 10 s', '2 h 05 min')
    """
    total = max(round(seconds), 0)
    if total < 60:
        return f"{total} s"
    if total < 3600:
        return f"{total // 60} min {total % 60:02d} s"
    return f"{total // 3600} h {total % 3600 // 60:02d} min"


def _of_limit(count: int, limit: int | None) -> str:
    if limit is None:
        return str(count)
    return f"{count}/{limit} ({min(100 * count / limit, 100):.0f}%)"


def _fmt(value: float) -> str:
    if isinstance(value, float) and math.isfinite(value) and value != int(value):
        return f"{value:.6g}"
    return str(value)
