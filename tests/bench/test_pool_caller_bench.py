"""The caller-cost benchmark of an asynchronous envpool pool: every table reports its rows (from real Pong pools and
processes, and from the stand-in pool), leaves no process behind and gives the pool class its own calls back."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

pytest.importorskip("envpool")
pytest.importorskip("ale_py")

from bench.bench_pool_caller import main


def rows_of(text: str, heading: str) -> dict[str, list[str]]:
    """The rows of the table under ``heading``: first cell -> the other cells."""
    lines = text.split(heading, 1)[1].split("\n## ", 1)[0].splitlines()
    cells = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines if line.startswith("| ")]
    return {row[0]: row[1:] for row in cells[1:]}


def test_every_table_reports_its_rows_and_leaves_no_process(tmp_path: Path) -> None:
    output = tmp_path / "pool_caller.md"
    args = ["--batches", "20", "--repeats", "2", "--busy", "0,200", "--seconds", "0.5", "--output", str(output)]
    assert main(args) == 0
    text = output.read_text()
    alone = rows_of(text, "## The Python per batch alone")
    assert list(alone) == [
        "ding `envpool` manager, `step()`",
        "ding `envpool` manager, `send` / `recv`",
        "envpool's own loop (`recv`, `send`)",
    ]
    assert all(0 < float(cells[0]) < 1e4 for cells in alone.values())
    loops = rows_of(text, "## The caller's CPU per batch")
    assert len(loops) == 4 and "envpool's own loop (`recv`, `send`)" in loops
    for name, (cpu, outside, rate, _) in loops.items():
        assert 0 < float(outside) < float(cpu) and float(rate) > 0, name
    assert loops["envpool's own loop (`recv`, `send`)"][3] == "1.000×"
    busy = rows_of(text, "## envpool's own loop with the caller's work")
    assert list(busy) == ["0", "200"] and busy["0"][1] == "1.000×" and float(busy["200"][0]) > 0
    ceiling = rows_of(text, "## ding's Python Atari chain")
    assert list(ceiling) == ["one process, 8 envs", "two processes, 4 envs each"]
    assert ceiling["one process, 8 envs"][1] == "1.00×"
    assert all(float(rate) > 0 and float(cpu) > 0 for rate, _, cpu in ceiling.values())
    assert not multiprocessing.active_children()
    import envpool

    pool = envpool.make("Pong-v5", env_type="gymnasium", num_envs=2, batch_size=2, seed=0)
    try:  # the stand-in is gone: a real pool steps
        pool.async_reset()
        assert pool._recv()[0].tolist() in ([0, 1], [1, 0])
    finally:
        pool.close()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--tables", "loops,weather"], "unknown table(s) ['weather']"),
        (["--busy", "0,lots"], "--busy takes µs separated by commas, got '0,lots'"),
        (["--batches", "2"], "--batches must be >= 4"),
    ],
)
def test_bad_arguments_are_refused_with_what_is_accepted(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(args)
    assert message in capsys.readouterr().err
