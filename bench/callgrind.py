"""Instructions per env step under valgrind's callgrind: deterministic, unlike timings on a shared machine."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Sequence

from bench.bench_managers import PROJECT_ROOT, log

CALLGRIND_STEPS = (10, 1010)
"""The two run lengths whose instruction counts are subtracted: start-up and teardown cancel out."""
VALGRIND = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]


def instructions_per_step(command: Sequence[str], label: str) -> float | None:
    """Instructions per env step of ``command + [steps]`` (a process that plays ``steps`` env steps and exits).

    Two runs that differ only in their step counts; None when valgrind is missing or a run fails (logged).
    """
    if shutil.which("valgrind") is None:
        return None
    counts = []
    for steps in CALLGRIND_STEPS:
        proc = subprocess.run(
            [*VALGRIND, *command, str(steps)], cwd=PROJECT_ROOT, capture_output=True, text=True, check=False
        )
        found = re.search(r"Collected : (\d+)", proc.stderr)
        if proc.returncode != 0 or found is None:
            log(f"  callgrind {label}: failed ({proc.stderr.strip().splitlines()[-1:] or ['no output']})")
            return None
        counts.append(int(found.group(1)))
    return (counts[1] - counts[0]) / (CALLGRIND_STEPS[1] - CALLGRIND_STEPS[0])


def callgrind_note() -> str:
    """The sentence explaining the instruction counts, for a report."""
    return (
        f"Instructions per step: callgrind's count of a run of {CALLGRIND_STEPS[1]} steps minus one of "
        f"{CALLGRIND_STEPS[0]} (same start-up), divided by the difference."
    )
