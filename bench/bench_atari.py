"""Benchmark the Atari chain: one env in-process against gymnasium's, and Pong x N across managers and envpool.

Run from the project root: ``.venv/bin/python -m bench.bench_atari`` (about 6 minutes on 2 cores; envpool rows
need ``bash bench/setup_envpool.sh`` first). Contenders of one table are built together and their timed windows
interleave (the machinery of :mod:`bench.bench_managers`), so slow drift of a shared machine hits them alike;
numbers to quote are the ratios within a table. ``--callgrind`` adds instruction counts per step of the one-env
variants (valgrind; deterministic, unlike the timings).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before NumPy starts any thread pool

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Mapping, Sequence  # noqa: E402

from bench.atari import PONG, VARIANTS, SingleEnv  # noqa: E402
from bench.bench_managers import ResultKey, log, machine_lines, measure_cell  # noqa: E402
from bench.callgrind import callgrind_note, instructions_per_step  # noqa: E402
from bench.contenders import CONTENDER_LABELS, package_version  # noqa: E402
from bench.peers import envpool_python  # noqa: E402
from bench.report import background_line, emit, one_env_table, rate_text, table  # noqa: E402
from ding.utils.measure import CellResult  # noqa: E402

VECTOR_KEYS = [
    "raw",
    "gym_sync",
    "gym_async",
    "base",
    "subprocess_1",
    "subprocess_1_batch",
    "subprocess_k",
    "subprocess_k_batch",
    "in_caller_batch",
    "async",
    "zmq_ipc_k",
    "envpool_sync",
    "envpool_async",
]
DING_MANAGERS = (
    "base",
    "subprocess_1",
    "subprocess_1_batch",
    "subprocess_k",
    "subprocess_k_batch",
    "in_caller_batch",
    "async",
    "zmq_ipc_k",
)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_atari", description=__doc__)
    parser.add_argument("--n", type=int, default=8, help="envs in the Pong batch (default 8)")
    parser.add_argument("--repeats", type=int, default=5, help="timed windows per contender (default 5)")
    parser.add_argument("--seconds", type=float, default=1.0, help="length of one timed window (default 1.0)")
    parser.add_argument("--warmup", type=float, default=0.5, help="warm-up per contender (default 0.5 s)")
    parser.add_argument(
        "--contenders", help=f"comma-separated keys for the Pong x N table (default {','.join(VECTOR_KEYS)})"
    )
    parser.add_argument("--variants", help=f"comma-separated one-env variants (default {','.join(VARIANTS)})")
    parser.add_argument("--skip", action="append", default=[], choices=["single", "vector"], help="leave out a part")
    parser.add_argument("--callgrind", action="store_true", help="add instruction counts of the one-env variants")
    parser.add_argument("--output", help="also write the report to this file")
    args = parser.parse_args(argv)
    args.keys = args.contenders.split(",") if args.contenders else list(VECTOR_KEYS)
    unknown = [k for k in args.keys if k not in CONTENDER_LABELS]
    if unknown:
        parser.error(f"unknown contender(s) {unknown}; known: {', '.join(CONTENDER_LABELS)}")
    if "raw" not in args.keys:
        args.keys.insert(0, "raw")
    args.variant_keys = args.variants.split(",") if args.variants else list(VARIANTS)
    if "gym" not in args.variant_keys:
        args.variant_keys.append("gym")  # the ratios are to gymnasium's chain
    unknown = [k for k in args.variant_keys if k not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {unknown}; known: {', '.join(VARIANTS)}")
    return args


def single_table(results: Mapping[ResultKey, CellResult], keys: Sequence[str], counts: Mapping[str, float]) -> str:
    rows = [(VARIANTS[k].label, results.get((PONG.name, 1, k)), counts.get(k)) for k in keys]
    baseline = (results.get((PONG.name, 1, "gym")), counts.get("gym"))
    return one_env_table("chain (one env, in-process)", "cost / gymnasium's", rows, baseline)


def vector_table(results: Mapping[ResultKey, CellResult], n: int, keys: Sequence[str]) -> str:
    def rate(key: str) -> float | None:
        cell = results.get((PONG.name, n, key))
        return cell.median_rate if cell is not None and cell.ok else None

    envpool, raw = rate("envpool_sync"), rate("raw")
    rows = []
    for key in keys:
        cell = results.get((PONG.name, n, key))
        label = CONTENDER_LABELS[key].replace("k=N/2", f"k={n // 2}")
        if cell is None or not cell.ok:
            rows.append([label, f"error: {cell.error if cell else 'not run'}", "", "", "", "", ""])
            continue
        r = cell.median_rate
        rows.append(
            [
                label,
                f"{rate_text(r)} ±{cell.spread * 100:.0f}%",
                f"{r / envpool:.2f}×" if envpool else "—",
                f"{r / raw:.2f}×" if raw else "—",
                f"{cell.cpu_us_per_step:.0f} ({cell.parent_cpu_us_per_step:.0f})",
                f"{cell.latency_ms(50):.2f}",
                f"{cell.background_cores:.2f}",
            ]
        )
    header = ["contender", "env steps/s", "/ envpool sync", "/ raw loop", "CPU µs/step (parent's)", "p50 batch ms"]
    return table([*header, "background cores"], rows)


def targets(results: Mapping[ResultKey, CellResult], n: int, counts: Mapping[str, float]) -> list[list[str]]:
    rows: list[list[str]] = []
    ding, gym_cell = results.get((PONG.name, 1, "ding")), results.get((PONG.name, 1, "gym"))
    if ding is not None and gym_cell is not None and ding.ok and gym_cell.ok:
        ratio = gym_cell.median_rate / ding.median_rate
        text = f"{ratio:.2f}× gymnasium's time per step"
        if counts.get("ding") and counts.get("gym"):
            text += f"; {counts['ding'] / counts['gym']:.2f}× its instructions"
        rows.append(["one env: ding `atari_default` per-step cost ≤ gymnasium's", text, "yes" if ratio <= 1 else "no"])
    envpool = results.get((PONG.name, n, "envpool_sync"))
    managers = [results.get((PONG.name, n, k)) for k in DING_MANAGERS]
    live = [c for c in managers if c is not None and c.ok]
    if envpool is not None and envpool.ok and live:
        best = max(live, key=lambda c: c.median_rate)
        ratio = best.median_rate / envpool.median_rate
        label = CONTENDER_LABELS[best.contender].replace("k=N/2", f"k={n // 2}")
        rows.append(
            [
                f"{n} × Pong: ding's best manager ≥ 0.9× envpool sync",
                f"{ratio:.2f}× ({label})",
                "yes" if ratio >= 0.9 else "no",
            ]
        )
    return rows


def version_line() -> str:
    envpool = "envpool venv missing" if envpool_python() is None else "envpool 1.2.5 (bench/.venv-envpool)"
    names = [("ale-py", "ale-py"), ("opencv", "opencv-python-headless"), ("torch", "torch")]
    found = ", ".join(f"{name} {package_version(dist) or 'not installed'}" for name, dist in names)
    return f"- Atari: {found}; {envpool}; cv2 threads {os.environ.get('OPENCV_NUM_THREADS', 'default')}"


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    began = time.perf_counter()
    out = ["# The Atari chain: benchmark", "", *machine_lines(), version_line(), ""]
    out += [
        f"Timed windows: {args.repeats} × {args.seconds} s per contender after {args.warmup} s warm-up, interleaved "
        "(rotating order); medians, ± half the range of the repeats. Pong episodes reset inside the windows "
        "as they end.",
        "",
    ]
    results: dict[ResultKey, CellResult] = {}
    counts: dict[str, float] = {}
    if "single" not in args.skip:
        log("single env: " + ", ".join(args.variant_keys))
        singles = [SingleEnv(PONG, VARIANTS[k]) for k in args.variant_keys]
        results.update(measure_cell(PONG, 1, None, args.repeats, args.seconds, args.warmup, contenders=singles))
        if args.callgrind:
            for key in args.variant_keys:
                log(f"callgrind: {key}")
                count = instructions_per_step([sys.executable, "-m", "bench.atari", key], key)
                if count is not None:
                    counts[key] = count
        out += ["## One env in-process: the Atari chain against gymnasium's (Pong)", ""]
        out += [single_table(results, args.variant_keys, counts), ""]
        if counts:
            out += [callgrind_note(), ""]
    if "vector" not in args.skip:
        log(f"vector: pong N={args.n}: " + ", ".join(args.keys))
        results.update(measure_cell(PONG, args.n, args.keys, args.repeats, args.seconds, args.warmup))
        out += [f"## {args.n} × Pong, side by side", "", vector_table(results, args.n, args.keys), ""]
    rows = targets(results, args.n, counts)
    if rows:
        out += ["## Targets", "", table(["target", "measured", "met"], rows), ""]
    out += background_line(results)
    emit(out, time.perf_counter() - began, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
