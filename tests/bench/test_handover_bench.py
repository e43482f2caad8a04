"""The hand-over benchmark: every way passes its counter back and forth between two real processes, reports a row,
and leaves no process and no shared-memory segment behind."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from bench.bench_handover import WAYS, main
from ding.envs.env_manager.core import doorbell

WAYS_HERE = ["pipe_spin", "pipe_block", "flag_spin"] + (["doorbell"] if doorbell.supported() else [])
"""``flag_busy`` is left out: a pure busy loop on each side needs a free core each, which a test run cannot count on."""


def test_every_way_reports_a_row_and_cleans_up(tmp_path: Path) -> None:
    segments = set(os.listdir("/dev/shm"))
    output = tmp_path / "handover.md"
    assert main(["--round-trips", "300", "--repeats", "2", "--ways", ",".join(WAYS_HERE), "--output", str(output)]) == 0
    text = output.read_text()
    for key in WAYS_HERE:
        row = next(line for line in text.splitlines() if line.startswith(f"| {WAYS[key].label} |"))
        median = float(row.split("|")[2])
        assert median > 0.0, row
    assert not multiprocessing.active_children()
    assert set(os.listdir("/dev/shm")) - segments == set()


def test_unknown_ways_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--ways", "pipe_spin,carrier_pigeon"])
    assert "unknown way(s) ['carrier_pigeon']" in capsys.readouterr().err
