"""Per-step cost of one env: ding's CartPole against gymnasium's ``CartPole-v1``, in-process.

Run from the project root: ``.venv/bin/python -m bench.bench_step_cost`` (about half a minute). Every row is one env
stepped in this process with the benchmark's random actions (reset at each episode's end, inside the timed
windows); the rows' windows interleave (the machinery of :mod:`bench.bench_managers`), so slow drift of a shared
machine hits them alike; numbers to quote are the ratios to the bare gymnasium step. ``--callgrind`` adds
instruction counts per step (valgrind; deterministic, unlike the timings). ``--play KEY STEPS`` only plays one
row's env for that many steps (what the instruction counts run).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before NumPy starts any thread pool

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Mapping, Sequence  # noqa: E402
from functools import partial  # noqa: E402

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

from bench.atari import SingleEnv, Variant  # noqa: E402
from bench.bench_managers import ResultKey, log, machine_lines, measure_cell  # noqa: E402
from bench.callgrind import callgrind_note, instructions_per_step  # noqa: E402
from bench.contenders import CARTPOLE, ActionTape, Contender  # noqa: E402
from bench.report import background_line, emit, one_env_table, table  # noqa: E402
from ding.envs import DingEnvWrapper  # noqa: E402
from ding.utils.measure import CellResult  # noqa: E402
from dizoo.classic_control.cartpole.envs import CartPoleEnv  # noqa: E402

TARGET = 1.2
"""ding's CartPole step may cost at most this many times the bare gymnasium step."""
BASELINE = "gym"


@dataclasses.dataclass(frozen=True)
class StepVariant(Variant):
    """A row: a :class:`Variant` whose ding env takes the action as an int64 array of shape (1,) (DI-engine's
    form) when ``array_action``, else as an int; ``seed`` is passed to a ding env's ``seed`` before stepping."""

    array_action: bool = False
    seed: int | None = None


def ding_cartpole() -> CartPoleEnv:
    return CartPoleEnv({})


def ding_wrapper() -> DingEnvWrapper:
    return DingEnvWrapper(cfg={"env_id": "CartPole-v1"})


VARIANTS: dict[str, StepVariant] = {
    v.key: v
    for v in [
        StepVariant(
            BASELINE,
            "gymnasium `make('CartPole-v1')`, `step(int)` (500-step episodes)",
            partial(gym.make, "CartPole-v1"),
            False,
        ),
        StepVariant(
            "gym_200",
            "gymnasium `make('CartPole-v1', max_episode_steps=200)` (ding's episode limit)",
            partial(gym.make, "CartPole-v1", max_episode_steps=200),
            False,
        ),
        StepVariant("ding_array", "ding `cartpole` env, `step(np.array([a]))`", ding_cartpole, True, True),
        StepVariant("ding_int", "ding `cartpole` env, `step(int)`", ding_cartpole, True, False),
        StepVariant(
            "wrapper",
            "ding `DingEnvWrapper(cfg={'env_id': 'CartPole-v1'})`, `step(np.array([a]))`",
            ding_wrapper,
            True,
            True,
        ),
        StepVariant(
            "ding_seeded",
            "ding `cartpole` env after `seed(0)`: the simulator reseeded at every reset (DI-engine's dynamic seed)",
            ding_cartpole,
            True,
            True,
            seed=0,
        ),
    ]
}
DING_TARGET_KEYS = ("ding_array", "ding_int")


class StepCostEnv(SingleEnv):
    """One env of a :class:`StepVariant`, stepped in this process (reset at the end of each episode)."""

    variant: StepVariant

    def __init__(self, variant: StepVariant) -> None:
        super().__init__(CARTPOLE, variant)

    def start(self) -> None:
        self.env = self.variant.build()
        if not self.variant.ding:
            self.env.reset(seed=0)
            return
        if self.variant.seed is not None:
            self.env.seed(self.variant.seed)
        self.env.reset()

    def step_batch(self, row: list[int], array: np.ndarray) -> int:
        if self.variant.ding and self.variant.array_action:
            if self.env.step(array).done:
                self.env.reset()
            return 1
        return super().step_batch(row, array)


def play(key: str, steps: int) -> None:
    """Build row ``key``'s env and step it ``steps`` times with the benchmark's actions (for instruction counts)."""
    tape = ActionTape.make(1, length=max(steps, 1), actions=CARTPOLE.actions)
    contender = StepCostEnv(VARIANTS[key])
    contender.start()
    for row, array in zip(tape.rows[:steps], tape.arrays[:steps], strict=True):
        contender.step_batch(row, array)
    contender.close()


def step_table(results: Mapping[ResultKey, CellResult], keys: Sequence[str], counts: Mapping[str, float]) -> str:
    """One row per variant: wall and CPU µs per step, and time and instructions relative to the bare gymnasium step."""
    rows = [(VARIANTS[k].label, results.get((CARTPOLE.name, 1, k)), counts.get(k)) for k in keys]
    baseline = (results.get((CARTPOLE.name, 1, BASELINE)), counts.get(BASELINE))
    return one_env_table("one env, in-process", "time / bare gymnasium step", rows, baseline, 2, (1e3, "k"))


def targets(results: Mapping[ResultKey, CellResult], counts: Mapping[str, float]) -> list[list[str]]:
    """Whether each ding row meets :data:`TARGET` (time, and instructions where counted)."""
    base = results.get((CARTPOLE.name, 1, BASELINE))
    rows: list[list[str]] = []
    if base is None or not base.ok:
        return rows
    for key in DING_TARGET_KEYS:
        cell = results.get((CARTPOLE.name, 1, key))
        if cell is None or not cell.ok:
            continue
        ratio = base.median_rate / cell.median_rate
        text = f"{ratio:.2f}× the bare step's time"
        if counts.get(key) and counts.get(BASELINE):
            text += f"; {counts[key] / counts[BASELINE]:.2f}× its instructions"
        met = "yes" if ratio <= TARGET else "no"
        rows.append([f"{VARIANTS[key].label}: per-step cost ≤ {TARGET}× gymnasium's", text, met])
    return rows


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_step_cost", description=__doc__)
    parser.add_argument("--repeats", type=int, default=7, help="timed windows per row (default 7)")
    parser.add_argument("--seconds", type=float, default=1.0, help="length of one timed window (default 1.0)")
    parser.add_argument("--warmup", type=float, default=0.5, help="warm-up per row (default 0.5 s)")
    parser.add_argument("--variants", help=f"comma-separated rows (default {','.join(VARIANTS)})")
    parser.add_argument("--callgrind", action="store_true", help="add instruction counts per step (valgrind)")
    parser.add_argument("--play", nargs=2, metavar=("KEY", "STEPS"), help="only play one row's env STEPS steps")
    parser.add_argument("--output", help="also write the report to this file")
    args = parser.parse_args(argv)
    args.keys = args.variants.split(",") if args.variants else list(VARIANTS)
    if BASELINE not in args.keys:
        args.keys.insert(0, BASELINE)  # the ratios are to the bare gymnasium step
    unknown = [k for k in args.keys if k not in VARIANTS]
    if args.play and args.play[0] not in VARIANTS:
        unknown.append(args.play[0])
    if unknown:
        parser.error(f"unknown row(s) {unknown}; known: {', '.join(VARIANTS)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.play:
        play(args.play[0], int(args.play[1]))
        return 0
    began = time.perf_counter()
    out = ["# Per-step cost of one env: ding against gymnasium", "", *machine_lines()]
    out += [
        f"- command: `.venv/bin/python -m bench.bench_step_cost{' --callgrind' if args.callgrind else ''}`",
        "",
        f"Timed windows: {args.repeats} × {args.seconds} s per row after {args.warmup} s warm-up, interleaved "
        "(rotating order); medians, ± half the range of the repeats. Random actions; CartPole episodes (about 22 "
        "steps each) reset inside the windows as they end.",
        "",
    ]
    log("one env: " + ", ".join(args.keys))
    contenders: list[Contender] = [StepCostEnv(VARIANTS[k]) for k in args.keys]
    results = measure_cell(CARTPOLE, 1, None, args.repeats, args.seconds, args.warmup, contenders=contenders)
    counts: dict[str, float] = {}
    if args.callgrind:
        for key in args.keys:
            log(f"callgrind: {key}")
            count = instructions_per_step([sys.executable, "-m", "bench.bench_step_cost", "--play", key], key)
            if count is not None:
                counts[key] = count
    out += [step_table(results, args.keys, counts), ""]
    if counts:
        out += [callgrind_note(), ""]
    rows = targets(results, counts)
    if rows:
        out += ["## Target", "", table(["target", "measured", "met"], rows), ""]
    out += background_line(results)
    emit(out, time.perf_counter() - began, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
