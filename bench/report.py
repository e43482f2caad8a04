"""Markdown tables for the benchmark's results."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from bench.faults import FaultResult, LeftoverResult
from ding.utils.measure import CellResult


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def rate_text(rate: float) -> str:
    if rate >= 1e5:
        return f"{rate / 1e3:.0f}k"
    if rate >= 1e3:
        return f"{rate / 1e3:.1f}k"
    return f"{rate:.0f}"


def ms(seconds: float | None) -> str:
    return "—" if seconds is None or math.isnan(seconds) else f"{seconds * 1e3:.1f}"


def cell_text(cell: CellResult | None, raw: CellResult | None) -> str:
    """``steps/s (ratio to raw) ±spread``; errors and anomalies are flagged."""
    if cell is None:
        return "—"
    if not cell.ok:
        return f"error: {cell.error}"
    text = f"{rate_text(cell.median_rate)} ({cell.median_rate / raw.median_rate:.2f}×)" if raw and raw.ok else ""
    text = text or rate_text(cell.median_rate)
    text += f" ±{cell.spread * 100:.0f}%"
    return text + (" ⚠" if cell.anomalies else "")


def throughput_table(
    results: Mapping[tuple[str, int, str], CellResult],
    case: str,
    ns: Sequence[int],
    labels: Mapping[str, str],
    absent: Mapping[str, str],
) -> str:
    """Rows: contenders; columns: N. Each cell: median steps/s, ratio to the raw loop, spread."""
    rows = []
    for key, label in labels.items():
        cells = [results.get((case, n, key)) for n in ns]
        if all(cell is None for cell in cells):
            continue
        rows.append(
            [label, *(cell_text(cell, results.get((case, n, "raw"))) for n, cell in zip(ns, cells, strict=True))]
        )
    rows += [[label, *(status for _ in ns)] for label, status in absent.items()]
    return table(["contender", *(f"N={n}" for n in ns)], rows)


def details_table(
    results: Mapping[tuple[str, int, str], CellResult], cases: Sequence[str], n: int, labels: Mapping[str, str]
) -> str:
    """Per env and contender at one N: wall and CPU µs per env step, overhead over raw, batch latency."""
    rows = []
    for case in cases:
        raw = results.get((case, n, "raw"))
        raw_us = 1e6 / raw.median_rate if raw is not None and raw.ok and raw.median_rate else None
        for key, label in labels.items():
            cell = results.get((case, n, key))
            if cell is None or not cell.ok:
                continue
            wall = 1e6 / cell.median_rate if cell.median_rate else float("nan")
            overhead = f"{wall - raw_us:+.1f}" if raw_us is not None else "—"
            rows.append(
                [
                    case,
                    label,
                    rate_text(cell.median_rate),
                    f"{wall:.1f}",
                    overhead,
                    f"{cell.cpu_us_per_step:.1f} ({cell.parent_cpu_us_per_step:.1f})",
                    f"{cell.latency_ms(50):.3f}",
                    f"{cell.latency_ms(99):.3f}",
                    ms(cell.startup_seconds),
                    f"{cell.background_cores:.2f}",
                ]
            )
    header = [
        "env",
        "contender",
        "steps/s",
        "wall µs/step",
        "overhead µs/step vs raw",
        "CPU µs/step (parent's)",
        "p50 batch ms",
        "p99 batch ms",
        "start-up ms",
        "background load (cores)",
    ]
    return table(header, rows)


def lifecycle_table(rows: Sequence[tuple[str, int, str, list[float], list[float], list[float], str]]) -> str:
    """Start-up (construct + launch + first reset), reset-all latency and close time, medians in ms."""
    out = []
    for case, n, label, startups, resets, closes, error in rows:
        if error:
            out.append([case, n, label, f"error: {error}", "", ""])
            continue
        med = [statistics.median(v) if v else None for v in (startups, resets, closes)]
        out.append([case, n, label, *(ms(v) for v in med)])
    return table(["env", "N", "contender", "start-up ms", "reset-all ms", "close ms"], out)


def fault_table(results: Sequence[FaultResult], limit: float) -> str:
    rows = []
    for r in results:
        seconds = "not detected" if r.seconds is None else f"{r.seconds * 1e3:.0f}"
        within = "—" if r.seconds is None else ("yes" if r.seconds <= limit else "no")
        rows.append([r.manager, seconds, within, r.abnormal_envs, "yes" if r.recovered else "no", r.note])
    return table(
        ["manager", "detection ms", f"≤ {limit * 1e3:.0f} ms", "abnormal envs", "steps normally after", "note"], rows
    )


def leftover_table(results: Sequence[LeftoverResult]) -> str:
    rows = [[r.subject, r.children, r.alive, r.zombies, r.shm_during, len(r.shm_left), r.note or ""] for r in results]
    header = [
        "subject",
        "children before kill",
        "alive after 2 s",
        "zombies (dead, unreaped)",
        "/dev/shm entries while running",
        "/dev/shm entries after 2 s",
        "note",
    ]
    return table(header, rows)


def one_env_table(
    first_column: str,
    ratio_column: str,
    rows_in: Sequence[tuple[str, CellResult | None, float | None]],
    baseline: tuple[CellResult | None, float | None],
    decimals: int = 0,
    count_unit: tuple[float, str] = (1e6, "M"),
) -> str:
    """One env's variants: wall and CPU µs per step, and time and instruction counts relative to a baseline.

    ``rows_in`` holds (label, cell, instructions per step or None); ``baseline`` the same for the reference row.
    """
    base_cell, base_count = baseline
    base_us = 1e6 / base_cell.median_rate if base_cell is not None and base_cell.ok else None
    scale, unit = count_unit
    rows: list[list[str]] = []
    for label, cell, count in rows_in:
        if cell is None or not cell.ok:
            rows.append([label, f"error: {cell.error if cell else 'not run'}", "", "", "", ""])
            continue
        wall = 1e6 / cell.median_rate
        rows.append(
            [
                label,
                f"{wall:.{decimals}f} ±{cell.spread * 100:.0f}%",
                f"{cell.cpu_us_per_step:.{decimals}f}",
                f"{wall / base_us:.2f}×" if base_us else "—",
                f"{count / scale:.{1 if unit == 'k' else 2}f}{unit}" if count else "—",
                f"{count / base_count:.2f}×" if count and base_count else "—",
            ]
        )
    header = [first_column, "µs/step (median)", "CPU µs/step", ratio_column, "instructions/step"]
    return table([*header, "instructions / gymnasium's"], rows)


def background_line(results: Mapping[Any, CellResult]) -> list[str]:
    """The background load over the kept windows of ``results``, as a report line (none without windows)."""
    loads = sorted(w.background_cores for c in results.values() for w in c.windows)
    if not loads:
        return []
    median = statistics.median(loads)
    return [f"Background load during the kept windows: median {median:.2f} cores, max {loads[-1]:.2f}."]


def emit(lines: Sequence[str], seconds: float, output: str | None) -> None:
    """Finish a report with its total time, print it, and also write it to ``output`` when given."""
    report = "\n".join([*lines, f"Total benchmark time: {seconds:.0f} s."])
    print(report)
    if output:
        with open(output, "w") as handle:
            handle.write(report + "\n")
