"""Timing a config's envs under several manager configurations, side by side, within a time budget.

Every configuration is built and launched first (its start-up time is recorded), then each takes a short warm-up
window and ``repeats`` timed windows, taken in turn and each round starting one further on, so the drift of a shared
machine hits them alike. A window steps every ready env with pre-drawn random actions through ``step`` — the call
the serial collector makes — and counts the env steps delivered. The budget covers start-up and windows: the
windows share what the start-ups leave (each at least :data:`MIN_WINDOW_SECONDS` and :data:`MIN_BATCHES` batches,
so a small budget can be overrun). A configuration that fails is reported with its error; the others go on.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ding.entry.bench_candidates import Candidate, manager_config
from ding.envs.base_env import BaseEnv, as_action_array
from ding.envs.env_manager import BaseEnvManager, create_env_manager
from ding.utils.measure import BackgroundLoad, CellResult, Window, rotated, time_batches

REPEATS = 3
"""Timed windows per configuration; the median is reported."""
MIN_WINDOW_SECONDS = 0.05
MIN_BATCHES = 3
WARMUP_SHARE = 0.1
"""Share of the windows' time spent on warm-up windows (not counted)."""
TAPE_ROWS = 64
"""Rows of pre-drawn actions (one action per env each), used in turn."""


@dataclasses.dataclass
class Measured:
    """A candidate and what timing it gave (``cell.ok`` False with ``cell.error`` when it failed)."""

    candidate: Candidate
    cell: CellResult


@dataclasses.dataclass
class Measurement:
    """Every candidate's timing, and how many cores other processes kept busy meanwhile (on average)."""

    results: list[Measured]
    background_cores: float


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split("\n--- original traceback ---")[0].split())
    return f"{type(err).__name__}: {text}"[:200]


class _Timed:
    """One launched manager, stepped with the action tape."""

    def __init__(self, manager: BaseEnvManager, tape: list[list[Any]]) -> None:
        self.manager = manager
        self.tape = tape
        self.cursor = 0

    def batch(self, index: int) -> int:
        row = self.tape[index % len(self.tape)]
        manager = self.manager
        return len(manager.step({env_id: row[env_id] for env_id in manager.ready_obs_id}))

    def window(self, seconds: float) -> Window:
        steps, wall, latencies, self.cursor = time_batches(self.batch, seconds, MIN_BATCHES, self.cursor)
        return Window(steps, wall, 0.0, latencies)


def action_tape(manager: BaseEnvManager, env_num: int, seed: int) -> list[list[Any]]:
    """:data:`TAPE_ROWS` rows of random actions (one per env), drawn from the manager's action space."""
    space = manager.env_spaces.action
    space.seed(seed)
    return [[as_action_array(space.sample(), space, top=True) for _ in range(env_num)] for _ in range(TAPE_ROWS)]


def measure(
    env_fns: Sequence[Callable[[], BaseEnv]],
    found: Sequence[Candidate],
    config_manager: Mapping[str, Any],
    seconds: float,
    seed: int,
    repeats: int = REPEATS,
    log: Callable[[str], None] | None = None,
) -> Measurement:
    """Time every candidate on the envs ``env_fns`` builds (see the module) in about ``seconds`` in all."""
    began = time.perf_counter()
    load = BackgroundLoad()
    results = [Measured(candidate, CellResult(candidate.label, "", len(env_fns))) for candidate in found]
    live: list[tuple[Measured, _Timed]] = []
    try:
        for measured in results:
            start = time.perf_counter()
            manager: BaseEnvManager | None = None
            try:
                manager = create_env_manager(manager_config(measured.candidate, config_manager), list(env_fns))
                manager.seed(seed)
                manager.launch()
                live.append((measured, _Timed(manager, action_tape(manager, len(env_fns), seed))))
            except Exception as err:  # reported in the table; the other configurations go on
                measured.cell.error = _one_line(err)
                if manager is not None:
                    with contextlib.suppress(Exception):
                        manager.close()
                continue
            measured.cell.startup_seconds = time.perf_counter() - start
            if log is not None:
                log(f"started {measured.candidate.label} in {measured.cell.startup_seconds:.2f} s")
        left = max(0.0, seconds - (time.perf_counter() - began))
        slots = max(1, len(live)) * (repeats + 1)
        window_seconds = max(MIN_WINDOW_SECONDS, left * (1 - WARMUP_SHARE) / max(1, len(live) * repeats))
        warmup_seconds = max(MIN_WINDOW_SECONDS / 2, left * WARMUP_SHARE / slots)
        for round_number in range(-1, repeats):
            for measured, timed in rotated(list(live), max(0, round_number)):
                if measured.cell.error is not None:
                    continue
                try:
                    window = timed.window(warmup_seconds if round_number < 0 else window_seconds)
                except Exception as err:  # reported in the table; the other configurations go on
                    measured.cell.error = _one_line(err)
                    continue
                if round_number >= 0:
                    measured.cell.windows.append(window)
            if log is not None and round_number >= 0:
                log(f"round {round_number + 1} of {repeats} done")
        background = load.cores()  # while the workers still run, so their time counts as this measurement's
    finally:
        for _, timed in live:
            with contextlib.suppress(Exception):
                timed.manager.close()
    return Measurement(results, background)


__all__ = ["MIN_BATCHES", "MIN_WINDOW_SECONDS", "REPEATS", "Measured", "Measurement", "action_tape", "measure"]
