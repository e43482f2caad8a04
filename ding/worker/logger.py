"""``ExperimentLogger``: an experiment's plain-text log, its CSV of evaluations and a tensorboard event file.

Under ``<exp_dir>/log/``:

- ``serial_logger.txt``: one timestamped line per event (evaluations, training statistics, checkpoints);
- ``eval.csv``: one row per evaluation (:data:`EVAL_CSV_COLUMNS`);
- ``serial/events.out.tfevents.*``: the same scalars for tensorboard, written when the ``tensorboard``
  package is installed (``pip install ding[torch]``); without it the text log says so and the rest is written.

Every line of the text log also goes to the ``ding.serial`` :mod:`logging` logger at INFO level, so
an application (the ``ding`` command) can show progress by configuring logging.
"""

from __future__ import annotations

import csv
import logging
import math
import os
import pathlib
import time
from collections.abc import Mapping
from typing import Any

from ding.worker.evaluator import EvalResult

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
        self._start = time.monotonic()
        self._text = self.text_path.open("w", encoding="utf-8")
        self._csv_file = self.csv_path.open("w", encoding="utf-8", newline="")
        self._csv = csv.writer(self._csv_file)
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
        """Seconds since the logger was opened."""
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


def _fmt(value: float) -> str:
    if isinstance(value, float) and math.isfinite(value) and value != int(value):
        return f"{value:.6g}"
    return str(value)
