"""Where a training run writes: never over what an earlier run wrote.

A run asks for ``<root>/<exp_name>`` (the requested directory). :func:`open_run_dir` decides, holding an
exclusive lock on the directory it picks for as long as the run lasts (``flock``; a killed run's lock goes with it):

- the requested directory when it does not exist or holds no file: the run writes there;
- **continuing in place**: when the run resumes from a checkpoint in the requested directory's ``ckpt/`` that holds
  the directory's newest state (its train iteration is at least that of the newest ``ckpt/iteration_<N>.pth.tar``),
  the directory's ``total_config.py`` is the run's config (or absent), and its ``log/eval.csv`` has the columns the run
  writes (or is absent), the run continues there: every checkpoint stays (the one it resumed from included), it
  appends to ``log/eval.csv`` and ``log/serial_logger.txt`` and adds a tensorboard event file, and its best eval return
  goes on from the earlier run's (the highest of the checkpoints' ``best_eval_return`` and the ``eval.csv`` rows), so
  ``ckpt/ckpt_best.pth.tar`` is only replaced by a better policy. The ``*.tmp`` files in ``ckpt/`` (saves a kill
  interrupted; incomplete by construction) are removed, and nothing else;
- otherwise (an earlier run's files, a checkpoint that branches off an earlier state, a changed config, or another
  process running in it) a fresh ``<exp_name>_<yymmdd_HHMMSS>`` beside it (DI-engine's ``renew_dir``; ``_2``, ``_3``...
  when that is taken), and the run says so in one log line. Nothing in the requested directory is touched.

So no run deletes or overwrites a file an earlier run wrote, except the continued run's ``ckpt_best.pth.tar`` after a
better evaluation.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
import pathlib
from collections.abc import Mapping
from typing import Any

from ding.config.experiment import claim_renewed
from ding.errors import DingError
from ding.utils.checkpoint_files import CKPT_BEST, incomplete_saves, iteration_checkpoints, read_checkpoint
from ding.worker.learner import stored_best_return
from ding.worker.logger import EVAL_CSV_COLUMNS

CONFIG_FILE = "total_config.py"
EVAL_CSV = pathlib.Path("log", "eval.csv")

try:
    import fcntl
except ImportError:  # Windows: no directory locks
    fcntl = None  # type: ignore[assignment]


@dataclasses.dataclass(frozen=True)
class Resumed:
    """What a run resumes from: the checkpoint file and what it stores."""

    path: pathlib.Path
    train_iter: int
    best_return: float | None


class DirectoryLock:
    """An exclusive ``flock`` on a directory, held until :meth:`release` (or the process ends)."""

    def __init__(self, descriptor: int | None) -> None:
        self._descriptor = descriptor

    @classmethod
    def acquire(cls, folder: pathlib.Path) -> DirectoryLock | None:
        """The lock on ``folder``, or None when another process holds it."""
        if fcntl is None:
            return cls(None)
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            return None
        return cls(descriptor)

    def release(self) -> None:
        if self._descriptor is not None:
            os.close(self._descriptor)  # closing releases the lock
            self._descriptor = None


@dataclasses.dataclass
class RunDir:
    """The directory a run writes, its lock, and what the run is told about it.

    ``exp_name`` is the directory's name under the root (the requested one, or a renewed one); ``continued`` says
    the run continues an earlier run there; ``note`` is the line the run logs about its directory (None when it
    simply writes the requested one); ``best_return`` the earlier run's best eval return (continued runs only).
    """

    path: pathlib.Path
    exp_name: str
    continued: bool
    note: str | None
    best_return: float | None
    lock: DirectoryLock

    def close(self) -> None:
        self.lock.release()


def open_run_dir(root: pathlib.Path, exp_name: str, config_text: str, resumed: Resumed | None = None) -> RunDir:
    """Pick and lock the directory a run writes (see the module docstring).

    ``config_text`` is the ``total_config.py`` the run would write in the requested directory.
    """
    requested = root / exp_name
    requested.mkdir(parents=True, exist_ok=True)
    lock = DirectoryLock.acquire(requested)
    if lock is None:
        return _renewed(root, exp_name, "is in use by a running process")
    if not _holds_files(requested):
        return RunDir(requested, exp_name, False, None, None, lock)
    why = "holds an earlier run"
    if resumed is not None and _inside(resumed.path, requested / "ckpt"):
        reason = _branch_reason(requested, config_text, resumed)
        if reason is None:
            return _continued(requested, exp_name, resumed, lock)
        why += f" ({reason})"
    lock.release()
    return _renewed(root, exp_name, why)


def _renewed(root: pathlib.Path, exp_name: str, why: str) -> RunDir:
    while True:
        name = claim_renewed(root, exp_name)
        path = root / name
        lock = DirectoryLock.acquire(path)
        if lock is not None:  # a directory this process just created: only a run that found it first holds it
            note = f"experiment directory {root / exp_name} {why}; this run writes {path}"
            return RunDir(path, name, False, note, None, lock)


def _continued(folder: pathlib.Path, exp_name: str, resumed: Resumed, lock: DirectoryLock) -> RunDir:
    removed = incomplete_saves(folder / "ckpt")
    for path in removed:
        path.unlink()
    best = earlier_best_return(folder, resumed.best_return)
    note = (
        f"this run continues experiment directory {folder} from {resumed.path.name}: its files are kept, "
        "log/eval.csv and log/serial_logger.txt get new lines, ckpt_best.pth.tar is replaced only by a better "
        f"evaluation (best eval return so far {'-' if best is None else f'{best:.2f}'})"
    )
    if removed:
        note += f"; removed incomplete saves: {', '.join(p.name for p in removed)}"
    return RunDir(folder, exp_name, True, note, best, lock)


def _branch_reason(folder: pathlib.Path, config_text: str, resumed: Resumed) -> str | None:
    """Why resuming from ``resumed`` may not continue in ``folder`` (None: it may)."""
    iterations = iteration_checkpoints(folder / "ckpt")
    if iterations and resumed.train_iter < max(iterations):
        newest = iterations[max(iterations)]
        return f"the checkpoint resumed from, {resumed.path.name}, is not its newest, {newest.name}"
    config = folder / CONFIG_FILE
    if config.exists() and (not config.is_file() or config.read_text(encoding="utf-8") != config_text):
        return f"its {CONFIG_FILE} differs from this run's config"
    csv_path = folder / EVAL_CSV
    if csv_path.exists() and _csv_header(csv_path) not in (None, list(EVAL_CSV_COLUMNS)):
        return f"its {EVAL_CSV.as_posix()} has other columns than this run writes"
    return None


def earlier_best_return(folder: pathlib.Path, resumed_best: float | None) -> float | None:
    """The best eval return of the run in ``folder``: the highest of ``resumed_best``, what its ``ckpt_best``
    stores and the ``eval.csv`` rows' means (None when none is known)."""
    known = [] if resumed_best is None else [resumed_best]
    best_file = folder / "ckpt" / CKPT_BEST
    if best_file.is_file():
        try:
            state = read_checkpoint(best_file)
        except DingError:
            state = None
        if isinstance(state, Mapping):
            stored = stored_best_return(state)
            if stored is not None:
                known.append(stored)
    known += _csv_returns(folder / EVAL_CSV)
    return max(known) if known else None


def _csv_header(path: pathlib.Path) -> list[str] | None:
    with path.open(encoding="utf-8", newline="") as file:
        return next(csv.reader(file), None)


def _csv_returns(path: pathlib.Path) -> list[float]:
    if not path.is_file():
        return []
    returns = []
    with path.open(encoding="utf-8", newline="") as file:
        for row in csv.DictReader(file):
            value = _float(row.get("eval_episode_return_mean"))
            if value is not None:
                returns.append(value)
    return returns


def _float(text: Any) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _holds_files(folder: pathlib.Path) -> bool:
    return any(not path.is_dir() for path in folder.rglob("*"))


def _inside(path: pathlib.Path, folder: pathlib.Path) -> bool:
    return path.resolve().parent == folder.resolve()
