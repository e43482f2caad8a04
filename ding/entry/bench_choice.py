"""The recommendation of ``ding -m bench`` and the table it prints.

The rule: the simplest configuration (:func:`~ding.entry.bench_candidates.rank_of`) that no other beats clearly. One
configuration beats another clearly when its median rate is more than :data:`CLEARLY_FASTER` times the other's and
even its slowest repeat is faster than the other's fastest. A more involved configuration is recommended only when
it wins beyond the noise, so a noisy machine does not swing the answer between two that run about as fast. The
fastest configuration always qualifies (nothing beats it clearly), so there is always a recommendation.

Example:
    >>> from ding.entry.bench_candidates import candidates
    >>> from ding.entry.bench_measure import Measured
    >>> from ding.utils.measure import CellResult, Window
    >>> found, _ = candidates(2, 2, {'type': 'base'})
    >>> def timed(rates):
    ...     windows = {c.label: [Window(r, 1.0, 0.0, []) for r in rates.get(c.label, [500])] for c in found}
    ...     return [Measured(c, CellResult(c.label, '', 2, windows[c.label])) for c in found]
    >>> choice = recommend(timed({'base': [900, 1000, 1100], 'subprocess envs_per_worker=1': [1050, 1200, 1300]}))
    >>> choice.chosen.candidate.label
    'base'
    >>> choice.why
    'base: the simplest that no other beats clearly (subprocess envs_per_worker=1 ran 1.20× as fast, within 15 % or \
within the spread of the repeats)'
    >>> recommend(timed({'base': [900, 1000, 1100], 'subprocess envs_per_worker=1': [1700, 1800, 1900]})).why
    'subprocess envs_per_worker=1: the fastest, 1.80× the best simpler configuration (base), beyond 15 % and the \
spread of the repeats'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ding.entry.bench_candidates import Skipped
from ding.entry.bench_measure import Measured
from ding.errors import DingError

CLEARLY_FASTER = 1.15
"""A configuration must run this many times as fast as a simpler one (by the medians) to be recommended over it."""


@dataclasses.dataclass(frozen=True)
class Choice:
    """The recommended configuration, the fastest one measured, and one line why."""

    chosen: Measured
    fastest: Measured
    why: str


def beats_clearly(one: Measured, other: Measured) -> bool:
    """``one`` runs more than :data:`CLEARLY_FASTER` times as fast as ``other`` and its slowest repeat is faster than
    the other's fastest."""
    return one.cell.median_rate > CLEARLY_FASTER * other.cell.median_rate and min(one.cell.rates) > max(
        other.cell.rates
    )


def recommend(results: Sequence[Measured]) -> Choice:
    """The simplest configuration that no other beats clearly (see the module); raises when none could be measured."""
    measured = [m for m in results if m.cell.ok]
    if not measured:
        errors = "; ".join(f"{m.candidate.label}: {m.cell.error}" for m in results)
        raise DingError(f"no manager configuration could be measured ({errors})")
    fastest = max(measured, key=lambda m: m.cell.median_rate)
    unbeaten = [m for m in measured if not any(beats_clearly(other, m) for other in measured)]
    chosen = min(unbeaten, key=lambda m: m.candidate.rank)
    margin = f"{round((CLEARLY_FASTER - 1) * 100)} %"
    label = chosen.candidate.label
    if chosen is not fastest:
        ratio = fastest.cell.median_rate / chosen.cell.median_rate
        why = (
            f"{label}: the simplest that no other beats clearly ({fastest.candidate.label} ran {ratio:.2f}× as fast, "
            f"within {margin} or within the spread of the repeats)"
        )
    else:
        simpler = [m for m in measured if m.candidate.rank < chosen.candidate.rank]
        if simpler:
            runner = max(simpler, key=lambda m: m.cell.median_rate)
            ratio = chosen.cell.median_rate / runner.cell.median_rate if runner.cell.median_rate > 0 else float("inf")
            why = (
                f"{label}: the fastest, {ratio:.2f}× the best simpler configuration ({runner.candidate.label}), "
                f"beyond {margin} and the spread of the repeats"
            )
        else:
            why = f"{label}: the simplest configuration, and the fastest"
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


__all__ = ["CLEARLY_FASTER", "Choice", "beats_clearly", "recommend", "result_table"]
