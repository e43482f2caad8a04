"""``ding`` run as a user runs it: a separate process, ``python -m ding.entry.cli ARGS``, from this checkout."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def run_ding(
    *args: str, cwd: pathlib.Path | str = ROOT, timeout: float = 120, check: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run ``ding ARGS`` in ``cwd``; its exit code and captured text (pipes). ``check``: raise on a failing exit."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "ding.entry.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=check,
    )
