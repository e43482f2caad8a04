"""Benchmark ding's env managers against a raw loop and gymnasium's vector envs; prints markdown tables.

Run from the project root: ``.venv/bin/python -m bench.bench_managers`` (full, about 10 minutes on 2
cores) or with ``--quick``. Contenders of one env and N are built together and their timed windows
interleave, so slow drift of a shared machine hits them alike; numbers to quote are the ratios.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before NumPy starts any thread pool

import argparse  # noqa: E402
import contextlib  # noqa: E402
import faulthandler  # noqa: E402
import multiprocessing  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402

from bench.contenders import (  # noqa: E402
    CARTPOLE,
    CASES,
    CONTENDER_LABELS,
    ActionTape,
    Contender,
    EnvCase,
    package_version,
    synthetic_case,
)
from bench.faults import (  # noqa: E402
    FAULT_MANAGERS,
    LEFTOVER_SUBJECTS,
    STEP_TIMEOUT,
    FaultResult,
    LeftoverResult,
    hung_worker_trial,
    killed_worker_trial,
    leftover_trial,
    orphan_child_main,
)
from bench.lineup import absent_contenders, make_contenders  # noqa: E402
from bench.report import (  # noqa: E402
    details_table,
    emit,
    fault_table,
    leftover_table,
    lifecycle_table,
    throughput_table,
)
from ding.envs.env_manager import manager_default_config  # noqa: E402
from ding.utils.measure import (  # noqa: E402
    CellResult,
    Window,
    process_cpu_seconds,
    rotated,
    system_busy_seconds,
    time_batches,
)

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WATCHDOG_SECONDS = 300.0
"""A single cell or trial taking longer than this dumps every thread's traceback and exits."""
MIN_BATCHES = 3
QUIET_CORES = 0.25
"""Background load (cores busy with other processes) above which a timed window is run again."""
QUIET_RETRIES = 2
ResultKey = tuple[str, int, str]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def watchdog(seconds: float = WATCHDOG_SECONDS):  # type: ignore[no-untyped-def]
    faulthandler.dump_traceback_later(seconds, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


def run_window(contender: Contender, tape: ActionTape, seconds: float, cursor: int) -> tuple[Window, int]:
    """Step batches for at least ``seconds`` (and ``MIN_BATCHES``); count delivered env steps."""
    rows, arrays, size = tape.rows, tape.arrays, len(tape.rows)
    pids = contender.child_pids()
    system_before = system_busy_seconds()
    children_before = sum(process_cpu_seconds(pid) for pid in pids)
    parent_before = time.process_time()
    timed = contender.timed_window(seconds, MIN_BATCHES, cursor)
    if timed is not None:
        steps, wall, latencies, cursor = timed
    else:
        step = contender.step_batch
        steps, wall, latencies, cursor = time_batches(
            lambda i: step(rows[i % size], arrays[i % size]), seconds, MIN_BATCHES, cursor
        )
    parent = time.process_time() - parent_before
    cpu = parent + sum(process_cpu_seconds(pid) for pid in pids) - children_before
    system_after = system_busy_seconds()
    background = max(0.0, (system_after - system_before - cpu) / wall)
    return Window(steps, wall, cpu, latencies, background, parent), cursor


def quiet_window(contender: Contender, tape: ActionTape, seconds: float, cursor: int) -> tuple[Window, int]:
    """A timed window, run again (up to ``QUIET_RETRIES`` times) while other processes load the machine.

    The window with the least background load is kept; the choice never looks at the result.
    """
    best, cursor = run_window(contender, tape, seconds, cursor)
    for _ in range(QUIET_RETRIES):
        if best.background_cores <= QUIET_CORES:
            break
        contender.end_window()
        window, cursor = run_window(contender, tape, seconds, cursor)
        if window.background_cores < best.background_cores:
            best = window
    return best, cursor


def measure_cell(
    case: EnvCase,
    n: int,
    keys: list[str] | None,
    repeats: int,
    seconds: float,
    warmup: float,
    contenders: list[Contender] | None = None,
) -> dict[ResultKey, CellResult]:
    """Build every contender for (env, N) (or the ``contenders`` given), warm them up, then run interleaved windows."""
    tape = ActionTape.make(n, actions=case.actions)
    if contenders is None:
        contenders = make_contenders(case, n, keys)
    results = {(case.name, n, c.key): CellResult(c.key, case.name, n) for c in contenders}
    live: list[Contender] = []
    cursors: dict[str, int] = {}

    def fail(c: Contender, exc: BaseException) -> None:
        results[(case.name, n, c.key)].error = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        log(f"  {c.key}: {results[(case.name, n, c.key)].error}")
        if c in live:
            live.remove(c)
        with contextlib.suppress(Exception):
            c.close()

    with watchdog():
        for c in contenders:
            start = time.perf_counter()
            try:
                c.start()
            except Exception as exc:  # a contender that cannot start is reported, the others go on
                fail(c, exc)
                continue
            results[(case.name, n, c.key)].startup_seconds = time.perf_counter() - start
            live.append(c)
            cursors[c.key] = 0
        for c in list(live):
            try:
                _, cursors[c.key] = run_window(c, tape, warmup, cursors[c.key])
                c.end_window()
                c.anomalies.clear()
            except Exception as exc:  # see above
                fail(c, exc)
        for r in range(repeats):
            for c in rotated(live, r):
                if c not in live:
                    continue
                try:
                    window, cursors[c.key] = quiet_window(c, tape, seconds, cursors[c.key])
                    c.end_window()
                except Exception as exc:  # see above
                    fail(c, exc)
                    continue
                results[(case.name, n, c.key)].windows.append(window)
        for c in list(live):
            results[(case.name, n, c.key)].anomalies = list(dict.fromkeys(c.anomalies))
            try:
                c.close()
            except Exception as exc:  # see above
                fail(c, exc)
    return results


def measure_lifecycle(
    case: EnvCase, n: int, keys: list[str] | None, repeats: int
) -> list[tuple[str, int, str, list[float], list[float], list[float], str]]:
    """Start-up, reset-all and close times of each contender (fresh builds, one at a time)."""
    tape = ActionTape.make(n, actions=case.actions)
    out = []
    for template in make_contenders(case, n, keys):
        if template.key.endswith("_batch"):
            continue  # built and reset like the same manager driven through step()
        startups: list[float] = []
        resets: list[float] = []
        closes: list[float] = []
        error = ""
        with watchdog():
            for _ in range(repeats):
                contender = next(c for c in make_contenders(case, n, [template.key]))
                try:
                    start = time.perf_counter()
                    contender.start()
                    startups.append(time.perf_counter() - start)
                    for batch in range(5):
                        for row in range(10):
                            contender.step_batch(tape.rows[batch * 10 + row], tape.arrays[batch * 10 + row])
                        start = time.perf_counter()
                        contender.reset_all()
                        resets.append(time.perf_counter() - start)
                    start = time.perf_counter()
                    contender.close()
                    closes.append(time.perf_counter() - start)
                except Exception as exc:  # reported in the table
                    error = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
                    with contextlib.suppress(Exception):
                        contender.close()
                    break
        out.append((case.name, n, template.label, startups, resets, closes, error))
    return out


def code_version() -> str:
    """The project's commit, and the files under ding/ with uncommitted changes, if git can tell."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "ding"], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
        ).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return "unknown (no git)"
    changed = [line[3:] for line in dirty if line.strip()]
    return f"commit {head}" + (f" with uncommitted changes in {', '.join(changed)}" if changed else "")


def machine_lines() -> list[str]:
    model = "unknown"
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as handle:
        for line in handle:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    versions = ", ".join(
        f"{name} {package_version(dist) or 'not installed'}"
        for name, dist in [
            ("ding", "ding"),
            ("gymnasium", "gymnasium"),
            ("numpy", "numpy"),
            ("cloudpickle", "cloudpickle"),
        ]
    )
    return [
        f"- run: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}; code: {code_version()}",
        f"- machine: {os.cpu_count()} cores, {model}, {platform.system()} {platform.release()}",
        f"- Python {platform.python_version()}; {versions}",
        f"- start method: ding subprocess managers `{manager_default_config('subprocess').context}` (their default); "
        f"gymnasium AsyncVectorEnv `{multiprocessing.get_start_method()}` (multiprocessing default)",
        f"- OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}; gymnasium vector envs use same-step autoreset (as ding)",
    ]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_managers", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a short run: 2 envs, N in {1, 8}, 3 repeats")
    parser.add_argument("--envs", help=f"comma-separated env names; known: {', '.join(CASES)}")
    parser.add_argument("--n", help="comma-separated batch sizes (default 1,2,4,8,16)")
    parser.add_argument("--repeats", type=int, help="timed windows per contender (default 5; 3 with --quick)")
    parser.add_argument("--seconds", type=float, help="length of one timed window (default 0.25; 0.1 with --quick)")
    parser.add_argument("--contenders", help=f"comma-separated contender keys; known: {', '.join(CONTENDER_LABELS)}")
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=["throughput", "lifecycle", "faults", "leftovers"],
        help="leave out a part (repeatable)",
    )
    parser.add_argument("--fault-repeats", type=int, help="trials per fault and manager (default 3; 1 with --quick)")
    parser.add_argument("--output", help="also write the report to this file")
    parser.add_argument("--orphan-child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    quick = args.quick
    args.env_names = args.envs.split(",") if args.envs else (["cartpole", "syn100-vec"] if quick else list(CASES))
    unknown = [name for name in args.env_names if name not in CASES]
    if unknown:
        parser.error(f"unknown env(s) {unknown}; known: {', '.join(CASES)}")
    try:
        args.ns = [int(v) for v in args.n.split(",")] if args.n else ([1, 8] if quick else [1, 2, 4, 8, 16])
    except ValueError:
        parser.error(f"--n takes comma-separated positive ints, got {args.n!r}")
    if any(n < 1 for n in args.ns):
        parser.error(f"--n takes positive ints, got {args.ns}")
    args.keys = args.contenders.split(",") if args.contenders else None
    if args.keys and any(k not in CONTENDER_LABELS for k in args.keys):
        parser.error(f"unknown contender in {args.keys}; known: {', '.join(CONTENDER_LABELS)}")
    if args.keys is not None and "raw" not in args.keys:
        args.keys.insert(0, "raw")  # ratios need the raw loop
    args.repeats = args.repeats or (3 if quick else 5)
    args.seconds = args.seconds or (0.1 if quick else 0.25)
    args.warmup = 0.05 if quick else 0.15
    args.fault_repeats = args.fault_repeats or (1 if quick else 3)
    args.lifecycle_repeats = 1 if quick else 3
    return args


def targets(
    results: dict[ResultKey, CellResult], killed: list[FaultResult], leftovers: list[LeftoverResult]
) -> list[list[str]]:
    """The issue's targets, each with the measured value and whether it is met."""
    rows: list[list[str]] = []

    def rate(case: str, n: int, key: str) -> float | None:
        cell = results.get((case, n, key))
        return cell.median_rate if cell is not None and cell.ok else None

    def add(target: str, value: float | None, goal: float, fmt: str) -> None:
        if value is None:
            rows.append([target, "not measured", "—"])
        else:
            rows.append([target, fmt.format(value), "yes" if value >= goal else "no"])

    for key in ("subprocess_1", "subprocess_1_batch", "subprocess_k", "subprocess_k_batch"):
        label = CONTENDER_LABELS[key].replace("k=N/2", "k=4")
        sub, gym_async = rate("cartpole", 8, key), rate("cartpole", 8, "gym_async")
        add(f"8 × CartPole-v1: {label} ≥ 100k steps/s", sub, 1e5, "{:,.0f} steps/s")
        ratio = sub / gym_async if sub is not None and gym_async else None
        add(f"8 × CartPole-v1: {label} ≥ 7× gymnasium Async", ratio, 7.0, "{:.2f}×")
    base, raw = rate("cartpole", 8, "base"), rate("cartpole", 8, "raw")
    add("8 × CartPole-v1: ding base ≥ 0.9× raw loop", base / raw if base and raw else None, 0.9, "{:.3f}×")
    for key in ("subprocess_1", "subprocess_1_batch", "async"):
        sub, raw = rate("syn1000-vec", 2, key), rate("syn1000-vec", 2, "raw")
        add(
            f"synthetic 1 ms step, 2 envs: {CONTENDER_LABELS[key]} ≥ 1.9× raw loop",
            sub / raw if sub and raw else None,
            1.9,
            "{:.2f}×",
        )
    for key, peer in (("zmq_ipc_k", "subprocess_k"), ("zmq_ipc_k_batch", "subprocess_k_batch")):
        zmq_rate, sub = rate("cartpole", 8, key), rate("cartpole", 8, peer)
        add(
            f"8 × CartPole-v1: {CONTENDER_LABELS[key].replace('k=N/2', 'k=4')} ≥ 1/1.5 of {peer.replace('_k', '')}",
            zmq_rate / sub if zmq_rate and sub else None,
            1 / 1.5,
            "{:.2f}×",
        )
    for key in ("ray_k", "ray_k_batch", "ray_zmq_k", "ray_zmq_k_batch", "ray_shm_k", "ray_shm_k_batch"):
        ray_rate, raw = rate("syn1000-vec", 8, key), rate("syn1000-vec", 8, "raw")
        add(
            f"synthetic 1 ms step, 8 envs: {CONTENDER_LABELS[key].replace('k=N/2', 'k=4')} ≥ 1.7× raw loop",
            ray_rate / raw if ray_rate and raw else None,
            1.7,
            "{:.2f}×",
        )
    for n, key, peer in ((8, "zmq_ipc_k", "subprocess_k"), (2, "zmq_ipc_1", "subprocess_1")):
        zmq_rate, sub = rate("syn1000-vec", n, key), rate("syn1000-vec", n, peer)
        add(
            f"synthetic 1 ms step, {n} envs: {CONTENDER_LABELS[key].replace('k=N/2', 'k=4')} ≥ 0.95× subprocess",
            zmq_rate / sub if zmq_rate and sub else None,
            0.95,
            "{:.2f}×",
        )
    limit = STEP_TIMEOUT + 0.1
    by_manager: dict[str, list[FaultResult]] = {}
    for r in killed:
        by_manager.setdefault(r.manager, []).append(r)
    for manager, trials in by_manager.items():
        if manager.startswith("ding ray"):
            continue  # the time includes Ray's restart of the actor; the target is the subprocess managers'
        times = [t.seconds for t in trials]
        if any(t is None for t in times):
            rows.append([f"SIGKILLed worker detected ≤ {limit:.1f} s: {manager}", "not detected in a trial", "no"])
        else:
            worst = max(t for t in times if t is not None)
            ok = "yes" if worst <= limit else "no"
            rows.append([f"SIGKILLed worker detected ≤ {limit:.1f} s: {manager}", f"worst {worst * 1e3:.0f} ms", ok])
    for left in leftovers:
        if left.subject.startswith("ding"):
            value = f"{left.alive} processes, {len(left.shm_left)} /dev/shm entries"
            met = "yes" if not left.alive and not left.shm_left else "no"
            rows.append([f"zero leftovers after kill -9: {left.subject}", value, met])
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.orphan_child:
        orphan_child_main(args.orphan_child)
        return 0
    began = time.perf_counter()
    out: list[str] = ["# ding env managers: benchmark", "", *machine_lines(), ""]
    absent = absent_contenders()
    labels = {k: v for k, v in CONTENDER_LABELS.items() if args.keys is None or k in args.keys}
    out += [
        f"Timed windows: {args.repeats} × {args.seconds} s per contender after {args.warmup} s warm-up, interleaved; "
        "cells show the median steps/s, its ratio to the raw loop, and ± half the range of the repeats. "
        "Async contenders are credited with delivered steps only. ⚠ marks a cell with anomalies (listed below).",
        "",
    ]
    results: dict[ResultKey, CellResult] = {}
    if "throughput" not in args.skip:
        for name in args.env_names:
            case = CASES[name]
            for n in args.ns:
                log(f"throughput: {name} N={n}")
                results.update(measure_cell(case, n, args.keys, args.repeats, args.seconds, args.warmup))
            out += [f"## {case.label}", "", throughput_table(results, name, args.ns, labels, absent), ""]
        loads = sorted(w.background_cores for c in results.values() for w in c.windows)
        if loads:
            out += [
                f"Background load from other processes during the kept windows: median {statistics.median(loads):.2f}"
                f" cores, max {loads[-1]:.2f} (a window is rerun up to {QUIET_RETRIES} times above {QUIET_CORES}).",
                "",
            ]
        detail_n = 8 if 8 in args.ns else max(args.ns)
        out += [
            f"## Details at N={detail_n}",
            "",
            "CPU µs/step is the parent's CPU time plus its workers' (from /proc) per delivered env step, with the "
            "parent's share in brackets; above the wall µs/step means more than one core was busy (parallel work, "
            "or spinning).",
            "",
            details_table(results, args.env_names, detail_n, labels),
            "",
        ]
    if "lifecycle" not in args.skip:
        rows = []
        life_cases = [CARTPOLE, synthetic_case(0, "vector4", reset_us=1000)]
        for case in life_cases:
            for n in [n for n in (1, 8, 16) if n in args.ns] or args.ns:
                log(f"lifecycle: {case.name} N={n}")
                rows += measure_lifecycle(case, n, args.keys, args.lifecycle_repeats)
        out += [
            "## Start-up, reset and close",
            "",
            "Start-up: construct + launch + first reset of every env, until the first batch can be stepped. "
            f"Medians over {args.lifecycle_repeats} fresh build(s) (5 resets each).",
            "",
            lifecycle_table(rows),
            "",
        ]
    killed: list[FaultResult] = []
    leftovers: list[LeftoverResult] = []
    if "faults" not in args.skip:
        hung: list[FaultResult] = []
        for name, (cfg, batch) in FAULT_MANAGERS.items():
            for _ in range(args.fault_repeats):
                log(f"faults: {name}")
                with watchdog():
                    killed.append(killed_worker_trial(name, cfg, batch))
                    hung.append(hung_worker_trial(name, cfg, batch))
        out += [
            f"## Killed worker (4 synthetic envs, 1 ms steps, step_timeout {STEP_TIMEOUT} s; SIGKILL of worker 0)",
            "",
            "From the kill to the return of the step() call delivering the abnormal timestep "
            "(the manager restarts the worker inside that call).",
            "",
            fault_table(killed, STEP_TIMEOUT + 0.1),
            "",
            f"## Hung worker (env 0 never returns from its 30th step; step_timeout {STEP_TIMEOUT} s)",
            "",
            "From the dispatch of the hanging step to the return of its abnormal timestep.",
            "",
            fault_table(hung, STEP_TIMEOUT + 0.1),
            "",
        ]
    if "leftovers" not in args.skip:
        for subject, spec in LEFTOVER_SUBJECTS.items():
            log(f"leftovers: {subject}")
            with watchdog():
                leftovers.append(leftover_trial(subject, spec, PROJECT_ROOT))
        out += [
            "## Leftovers 2 s after kill -9 of a parent running 4 envs",
            "",
            leftover_table(leftovers),
            "",
        ]
    target_rows = targets(results, killed, leftovers)
    if target_rows:
        from bench.report import table

        out += ["## Targets", "", table(["target", "measured", "met"], target_rows), ""]
    anomalies = [
        f"- {c.case} N={c.n} {CONTENDER_LABELS.get(c.contender, c.contender)}: "
        + ("; ".join(c.anomalies) if c.ok else f"error: {c.error}")
        for c in results.values()
        if c.anomalies or not c.ok
    ]
    out += ["## Anomalies", "", *(anomalies or ["none"]), ""]
    emit(out, time.perf_counter() - began, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
