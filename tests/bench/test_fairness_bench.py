"""The send / recv evenness benchmark: every layout reports its rows from real managers, and leaves no process."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from bench.bench_fairness import main
from ding.envs.env_manager.core import link


def test_every_layout_reports_its_rate_and_evenness_and_leaves_no_process(tmp_path: Path) -> None:
    output = tmp_path / "fairness.md"
    args = ["--envs", "4", "--batch-size", "2", "--batches", "200", "--repeats", "2", "--output", str(output)]
    spin = link.SPIN_LIMIT
    assert main(args) == 0
    assert spin == link.SPIN_LIMIT  # the no_spin layout gives the constant back
    lines = [line for line in output.read_text().splitlines() if line.startswith("| ")]
    rows = {cells[0]: cells[1:] for cells in ([c.strip() for c in line.strip("|").split("|")] for line in lines[1:])}
    assert list(rows) == ["one_per_worker", "workers_fit_cores", "no_spin", "zmq", "thread", "base"]
    cores = min(4, len(os.sched_getaffinity(0)))
    workers = ["4", str(-(-4 // cores)), "4", "4", "4 threads", "none (the caller)"]
    assert [cells[0] for cells in rows.values()] == workers
    for layout, (_, rate, median, worst) in rows.items():
        assert float(rate) > 0, layout
        assert 0.0 <= float(worst) <= float(median) <= 1.0, layout
    assert rows["base"][2] == "1.00"  # one process steps every env in turn
    assert not multiprocessing.active_children()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--envs", "1"], "--envs must be >= 2"),
        (["--batch-size", "4"], "--batch-size in [1, envs)"),
        (["--layouts", "one_per_worker,fastest"], "unknown layout(s) ['fastest']"),
        (["--repeats", "0"], "--batches and --repeats must be >= 1"),
        (["--caller-us", "-1"], "--step-us and --caller-us >= 0"),
    ],
)
def test_bad_arguments_are_refused_naming_them(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(args)
    assert message in capsys.readouterr().err
