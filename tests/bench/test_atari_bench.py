"""A smoke run of the Atari benchmark: the Pong workload for a few steps, without envpool."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("ale_py")

from bench.atari import PONG, VARIANTS, SingleEnv, frame_by_frame_chain, play
from bench.bench_atari import single_table, targets, vector_table
from bench.bench_managers import measure_cell
from ding.envs.env_wrappers import resolve_wrappers


def test_pong_workload_steps_in_managers_and_in_gymnasium() -> None:
    keys = ["raw", "base", "subprocess_1_batch", "gym_sync"]
    results = measure_cell(PONG, 2, keys, repeats=2, seconds=0.05, warmup=0.02)
    assert {key for _, _, key in results} == set(keys)
    for cell in results.values():
        assert cell.ok, cell.error
        assert not cell.anomalies
        assert all(window.steps >= 2 * 3 for window in cell.windows)  # at least MIN_BATCHES batches of 2
    text = vector_table(results, 2, keys)
    assert "ding base (serial)" in text and "gymnasium SyncVectorEnv" in text


def test_the_atari_benchmark_leaves_envpool_to_its_own_process() -> None:
    """envpool is measured from its own venv and process; the benchmark's process never imports it."""
    probe = "import sys, bench.bench_atari, bench.bench_managers; print('envpool' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True)
    assert result.stdout.strip() == "False"


def test_one_env_variants_step_and_fill_the_table() -> None:
    keys = ["ding", "ding_frames", "gym"]
    singles = [SingleEnv(PONG, VARIANTS[key]) for key in keys]
    results = measure_cell(PONG, 1, None, repeats=1, seconds=0.05, warmup=0.02, contenders=singles)
    assert all(cell.ok for cell in results.values())
    text = single_table(results, keys, {"ding": 4.5e6, "gym": 6.0e6})
    assert "0.75×" in text  # the instruction ratio
    (row,) = targets(results, 8, {})
    assert row[0].startswith("one env: ding `atari_default` per-step cost")


def test_frame_by_frame_variant_turns_off_only_the_direct_emulator() -> None:
    steps = resolve_wrappers(frame_by_frame_chain(), train=True)
    skip = next(step for step in steps if step.name == "max_and_skip")
    assert dict(skip.kwargs) == {"skip": 4, "direct_emulator": False}
    assert [step.name for step in steps] == [step.name for step in resolve_wrappers("atari_default", train=True)]
    play(VARIANTS["ding_rgb"], 3)
