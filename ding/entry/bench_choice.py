"""The recommendation of ``ding -m bench`` and the table it prints.

The rule: the simplest configuration (:func:`~ding.entry.bench_candidates.rank_of`) whose median rate is within
:data:`CLEARLY_FASTER` of the fastest one. A more involved configuration is recommended only when it is clearly
faster, so a noisy machine does not swing the answer between two that run about as fast.

Example:
    >>> from ding.entry.bench_candidates import candidates
    >>> from ding.entry.bench_measure import Measured
    >>> from ding.utils.measure import CellResult, Window
    >>> found, _ = candidates(2, 2, {'type': 'base'})
    >>> rates = {'base': 1000, 'subprocess envs_per_worker=1': 1100}
    >>> measured = [Measured(c, CellResult(c.label, '', 2, [Window(rates.get(c.label, 500), 1.0, 0.0, [])]))
    ...             for c in found]
    >>> choice = recommend(measured)
    >>> choice.chosen.candidate.label, choice.fastest.candidate.label
    ('base', 'subprocess envs_per_worker=1')
    >>> choice.why
    'base: the simplest within 15 % of the fastest (subprocess envs_per_worker=1, 1.10× base)'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ding.entry.bench_candidates import Skipped
from ding.entry.bench_measure import Measured
from ding.errors import DingError

CLEARLY_FASTER = 1.15
"""A configuration must be this many times faster than a simpler one to be recommended over it."""


@dataclasses.dataclass(frozen=True)
class Choice:
    """The recommended configuration, the fastest one measured, and one line why."""

    chosen: Measured
    fastest: Measured
    why: str


def recommend(results: Sequence[Measured]) -> Choice:
    """The simplest configuration within :data:`CLEARLY_FASTER` of the fastest; raises when none could be measured."""
    measured = [m for m in results if m.cell.ok]
    if not measured:
        errors = "; ".join(f"{m.candidate.label}: {m.cell.error}" for m in results)
        raise DingError(f"no manager configuration could be measured ({errors})")
    fastest = max(measured, key=lambda m: m.cell.median_rate)
    best = fastest.cell.median_rate
    close = [m for m in measured if m.cell.median_rate * CLEARLY_FASTER >= best]
    chosen = min(close, key=lambda m: m.candidate.rank)
    margin = f"{round((CLEARLY_FASTER - 1) * 100)} %"
    if chosen is fastest:
        simpler = [m for m in measured if m.candidate.rank < chosen.candidate.rank]
        if simpler:
            runner = max(simpler, key=lambda m: m.cell.median_rate)
            ratio = best / runner.cell.median_rate if runner.cell.median_rate > 0 else float("inf")
            why = (
                f"{chosen.candidate.label}: the fastest, {ratio:.2f}× the best simpler configuration "
                f"({runner.candidate.label}), more than the {margin} that a more involved one must win by"
            )
        else:
            why = f"{chosen.candidate.label}: the simplest configuration, and the fastest"
    else:
        ratio = best / chosen.cell.median_rate
        why = (
            f"{chosen.candidate.label}: the simplest within {margin} of the fastest "
            f"({fastest.candidate.label}, {ratio:.2f}× {chosen.candidate.label})"
        )
    return Choice(chosen, fastest, why)


def result_table(results: Sequence[Measured], skipped: Sequence[Skipped], choice: Choice | None) -> str:
    """A markdown table: each configuration's median steps/s, the repeats' spread, its ratio to the chosen one and
    its start-up time; then the kinds not measured, with why."""
    reference = choice.chosen.cell.median_rate if choice is not None else 0.0
    lines = [
        "| manager configuration | env steps/s (median) | ± | vs chosen | start-up |",
        "|---|---|---|---|---|",
    ]
    for m in sorted(results, key=lambda m: -m.cell.median_rate if m.cell.ok else 0.0):
        mark = " ← chosen" if choice is not None and m is choice.chosen else ""
        if not m.cell.ok:
            lines.append(f"| {m.candidate.label} | failed: {m.cell.error} | | | |")
            continue
        rate = m.cell.median_rate
        ratio = f"{rate / reference:.2f}×" if reference > 0 else "—"
        startup = f"{m.cell.startup_seconds:.2f} s" if m.cell.startup_seconds is not None else "—"
        lines.append(f"| {m.candidate.label}{mark} | {rate:,.0f} | {m.cell.spread * 100:.0f} % | {ratio} | {startup} |")
    for s in skipped:
        lines.append(f"| {s.kind} | not measured: {s.reason} | | | |")
    return "\n".join(lines)


__all__ = ["CLEARLY_FASTER", "Choice", "recommend", "result_table"]
