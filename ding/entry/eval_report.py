"""An evaluation's episodes and summary as text lines, JSON or CSV (``ding -m eval --output FILE``)."""

from __future__ import annotations

import csv
import json
import os
import pathlib
from typing import Any

import numpy as np

from ding.errors import ConfigError
from ding.worker import EvalResult

REPORT_FORMATS = {".json": "json", ".csv": "csv"}
"""The report formats, by the output file's extension."""

EPISODE_COLUMNS = ("episode", "env_id", "return", "length", "video")


def report_format(path: str | os.PathLike[str]) -> str:
    """The format of the report file ``path``, from its extension.

    >>> report_format('eval.JSON'), report_format('out/eval.csv')
    ('json', 'csv')
    >>> report_format('eval.txt')
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: --output eval.txt: the report's format comes from its extension; use .json or .csv
    """
    suffix = pathlib.Path(path).suffix.lower()
    if suffix not in REPORT_FORMATS:
        raise ConfigError(
            f"--output {os.fspath(path)}: the report's format comes from its extension; use "
            + " or ".join(REPORT_FORMATS)
        )
    return REPORT_FORMATS[suffix]


def episode_rows(result: EvalResult) -> list[dict[str, Any]]:
    """One dict per episode (``EPISODE_COLUMNS``), numbered from 1 in the order the episodes ended."""
    videos = result.videos or (None,) * len(result.returns)
    lengths = result.lengths or (None,) * len(result.returns)
    env_ids = result.env_ids or (None,) * len(result.returns)
    return [
        {"episode": i + 1, "env_id": env_id, "return": value, "length": length, "video": video}
        for i, (env_id, value, length, video) in enumerate(zip(env_ids, result.returns, lengths, videos, strict=True))
    ]


def summary(result: EvalResult) -> dict[str, Any]:
    """The evaluation's summary: episode count, return and length statistics, the stop value and the counters."""
    lengths = np.asarray(result.lengths, dtype=np.float64)
    return {
        "n_episode": len(result.returns),
        "return_mean": result.mean,
        "return_std": result.std,
        "return_min": result.min,
        "return_max": result.max,
        "length_mean": float(lengths.mean()) if lengths.size else None,
        "stop_value": result.stop_value,
        "stop_value_reached": result.stop if result.stop_value is not None else None,
        "train_iter": result.train_iter,
        "env_step": result.env_step,
        "duration": result.duration,
    }


def episode_lines(result: EvalResult) -> list[str]:
    """A line per episode for people.

    >>> result = EvalResult(7, 70, (200.0, 9.5), 195, True, 0.1, lengths=(200, 10), env_ids=(0, 1))
    >>> print('\\n'.join(episode_lines(result)))
    episode 1 (env 0): return 200.00, length 200
    episode 2 (env 1): return 9.50, length 10
    """
    lines = []
    for row in episode_rows(result):
        text = f"episode {row['episode']} (env {row['env_id']}): return {row['return']:.2f}, length {row['length']}"
        lines.append(text + (f", video {row['video']}" if row["video"] else ""))
    return lines


def summary_line(result: EvalResult) -> str:
    """One line: the mean return and its spread, and whether the stop value is reached."""
    stop = ""
    if result.stop_value is not None:
        stop = f"; stop_value {result.stop_value} {'reached' if result.stop else 'not reached'}"
    return (
        f"eval return mean {result.mean:.2f} (std {result.std:.2f}, min {result.min:.2f}, max {result.max:.2f}) "
        f"over {len(result.returns)} episodes{stop}"
    )


def write_eval_report(
    result: EvalResult, path: str | os.PathLike[str], context: dict[str, Any] | None = None
) -> pathlib.Path:
    """Write the episodes and the summary to ``path``: JSON or CSV by its extension (see :func:`report_format`).

    JSON holds ``{"episodes": [...], "summary": {...}}`` and ``context`` (e.g. config and checkpoint paths) under
    ``"context"``. CSV has a row per episode (``EPISODE_COLUMNS``), then rows ``mean``, ``std``, ``min`` and
    ``max`` in the ``episode`` column with the statistics of the returns and lengths.
    """
    kind = report_format(path)
    target = pathlib.Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    rows = episode_rows(result)
    if kind == "json":
        document = {"context": dict(context or {}), "episodes": rows, "summary": summary(result)}
        target.write_text(json.dumps(document, indent=2) + "\n")
        return target
    lengths = np.asarray(result.lengths, dtype=np.float64) if result.lengths else None
    with target.open("w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=EPISODE_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
        for name, fn in (("mean", np.mean), ("std", np.std), ("min", np.min), ("max", np.max)):
            length = None if lengths is None else float(fn(lengths))
            writer.writerow({"episode": name, "return": float(fn(result.returns)), "length": length})
    return target
