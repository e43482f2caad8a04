"""Time to stop_value: ding's CartPole DQN against DI-engine 0.5.3's own CartPole DQN config, side by side.

Each run is a fresh subprocess started in its own empty temporary directory:

* ding: ``serial_pipeline`` on ``dizoo/classic_control/cartpole/config/cartpole_dqn_config.py`` with the project's
  venv (``.venv``);
* DI-engine: its ``serial_pipeline`` on its own ``dizoo/classic_control/cartpole/config/cartpole_dqn_config.py``
  with the separate venv made by ``bench/setup_di_engine.sh`` (``bench/.venv-di-engine``). DI-engine's package is
  also named ``ding``; the child runs with ``python -I`` from the empty directory, so only that venv is on its path.

The wall time runs from starting the subprocess (interpreter start-up and imports included) until the child reports
that training stopped; the child's own exit (interpreter teardown) is not counted. Env steps and train iterations
are those at the stop. Runs alternate between the two frameworks seed by seed so that drifts of the machine hit both.

Usage, from the project root::

    .venv/bin/python -m bench.bench_training                 # seeds 0..2
    .venv/bin/python -m bench.bench_training --seeds 0,1,2,3,4 --timeout 900 --output /tmp/training.md

The table goes to stdout, progress to stderr. Nothing is installed here; without the DI-engine venv the ding side
still runs and the report says ``DI-engine: not runnable (<reason>)``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
DING_PYTHON = ROOT / ".venv" / "bin" / "python"
DI_ENGINE_PYTHON = ROOT / "bench" / ".venv-di-engine" / "bin" / "python"
DING_CONFIG = ROOT / "dizoo" / "classic_control" / "cartpole" / "config" / "cartpole_dqn_config.py"
DI_ENGINE_CONFIG_MODULE = "dizoo.classic_control.cartpole.config.cartpole_dqn_config"
MARKER = "BENCH_TRAINING_RESULT "

# Child programs: argv[1] is the seed, argv[2] the config (a path for ding, a module for DI-engine). Each prints one
# line MARKER + json as soon as training has stopped.
DING_CHILD = f"""
import json, sys
from ding.entry import serial_pipeline
result = serial_pipeline(sys.argv[2], seed=int(sys.argv[1]), root='.')
print({MARKER!r} + json.dumps(dict(
    stop=bool(result.stop_value_reached), env_step=int(result.env_step), train_iter=int(result.train_iter),
    eval_return=result.last_eval_return, stop_value=result.stop_value,
)), flush=True)
"""

DI_ENGINE_CHILD = f"""
import importlib, json, os, pickle, sys
import ding, importlib.metadata as md
from ding.entry import serial_pipeline
seed = int(sys.argv[1])
config = importlib.import_module(sys.argv[2])
main_config, create_config = config.main_config, config.create_config
main_config.exp_name = 'cartpole_dqn_seed%d' % seed
serial_pipeline((main_config, create_config), seed=seed)
with open(os.path.join(main_config.exp_name, 'result.pkl'), 'rb') as f:
    final = pickle.load(f)
print({MARKER!r} + json.dumps(dict(
    stop=bool(final['stop']), env_step=int(final['env_step']), train_iter=int(final['train_iter']),
    eval_return=float(final['eval_value']), stop_value=float(main_config.env.stop_value),
    version=md.version('DI-engine'), ding_file=ding.__file__, config_file=config.__file__,
)), flush=True)
"""

DI_ENGINE_PROBE = """
import importlib.metadata as md, sys
import ding
from ding.entry import serial_pipeline
import importlib
config = importlib.import_module(sys.argv[1])
print(md.version('DI-engine'))
print(ding.__file__)
print(config.__file__)
"""


@dataclasses.dataclass
class Run:
    framework: str
    seed: int
    wall_time: float | None = None
    stop: bool = False
    env_step: int | None = None
    train_iter: int | None = None
    eval_return: float | None = None
    error: str | None = None


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PYTHONNOUSERSITE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def run_child(framework: str, python: pathlib.Path, code: str, seed: int, config: str, timeout: float) -> Run:
    run = Run(framework, seed)
    with tempfile.TemporaryDirectory(prefix=f"bench-training-{framework}-") as tmp:
        log_path = pathlib.Path(tmp) / "child.log"
        with open(log_path, "w") as log:
            started = time.monotonic()
            proc = subprocess.Popen(
                [str(python), "-I", "-c", code, str(seed), config],
                cwd=tmp,
                env=child_env(),
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                bufsize=1,
            )
            try:
                result = _read_result(proc, started, timeout)
                if result is not None:
                    run.wall_time = time.monotonic() - started
                    run.stop = result["stop"]
                    run.env_step = result["env_step"]
                    run.train_iter = result["train_iter"]
                    run.eval_return = result["eval_return"]
                try:
                    proc.wait(timeout=max(5.0, timeout - (time.monotonic() - started)))
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            except TimeoutError:
                proc.kill()
                proc.wait()
                run.error = f"timed out after {timeout:.0f} s"
                return run
        if run.wall_time is None:
            tail = log_path.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
            run.error = f"exit code {proc.returncode}: {tail[0][:200]}"
    return run


def _read_result(proc: subprocess.Popen, started: float, timeout: float) -> dict | None:
    # The timeout is checked between lines: the children print progress often enough to come back here.
    import selectors

    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    while True:
        left = timeout - (time.monotonic() - started)
        if left <= 0:
            raise TimeoutError
        if not sel.select(timeout=min(left, 1.0)):
            continue
        line = proc.stdout.readline()
        if not line:
            return None
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER) :])


def probe_di_engine() -> tuple[str | None, str]:
    """Return (None, description) when DI-engine can run here, else (reason, '')."""
    if not DI_ENGINE_PYTHON.exists():
        return f"{DI_ENGINE_PYTHON.relative_to(ROOT)} missing; run bash bench/setup_di_engine.sh", ""
    with tempfile.TemporaryDirectory(prefix="bench-training-probe-") as tmp:
        proc = subprocess.run(
            [str(DI_ENGINE_PYTHON), "-I", "-c", DI_ENGINE_PROBE, DI_ENGINE_CONFIG_MODULE],
            cwd=tmp,
            env=child_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return f"import failed: {last[:200]}", ""
    version, ding_file, config_file = proc.stdout.strip().splitlines()[-3:]
    if not ding_file.startswith(str(DI_ENGINE_PYTHON.parent.parent)):
        return f"`ding` resolves to {ding_file}, not to DI-engine's venv", ""
    if version != "0.5.3":
        return f"DI-engine {version} installed, 0.5.3 expected", ""
    return None, f"DI-engine {version} ({config_file})"


def fmt_time(run: Run) -> str:
    if run.error:
        return f"failed ({run.error})"
    text = f"{run.wall_time:.1f} s"
    return text if run.stop else text + " (stop_value not reached)"


def fmt_int(value: int | None) -> str:
    return "–" if value is None else f"{value:,}"


def report(runs: dict[str, list[Run]], di_reason: str | None, di_desc: str, seeds: list[int]) -> str:
    ding_runs = runs["ding"]
    lines = [
        "| seed | ding time | ding env steps | ding train iters | DI-engine time | DI-engine env steps "
        "| DI-engine train iters | DI-engine / ding time |",
        "|---|---|---|---|---|---|---|---|",
    ]
    ratios = []
    for i, seed in enumerate(seeds):
        d = ding_runs[i]
        if di_reason is None:
            e = runs["di-engine"][i]
            e_cells = [fmt_time(e), fmt_int(e.env_step), fmt_int(e.train_iter)]
            if d.wall_time and e.wall_time and d.stop and e.stop:
                ratio = e.wall_time / d.wall_time
                ratios.append(ratio)
                e_cells.append(f"{ratio:.2f}×")
            else:
                e_cells.append("–")
        else:
            e_cells = ["not runnable", "–", "–", "–"]
        lines.append(
            f"| {seed} | {fmt_time(d)} | {fmt_int(d.env_step)} | {fmt_int(d.train_iter)} | "
            + " | ".join(e_cells)
            + " |"
        )

    def median(framework: str, attr: str) -> str:
        values = [getattr(r, attr) for r in runs.get(framework, []) if r.stop and r.wall_time]
        if not values:
            return "–"
        m = statistics.median(values)
        return f"{m:.1f} s" if attr == "wall_time" else f"{m:,.0f}"

    if di_reason is None:
        ratio_cell = f"{statistics.median(ratios):.2f}×" if ratios else "–"
        lines.append(
            f"| median | {median('ding', 'wall_time')} | {median('ding', 'env_step')} | "
            f"{median('ding', 'train_iter')} | {median('di-engine', 'wall_time')} | "
            f"{median('di-engine', 'env_step')} | {median('di-engine', 'train_iter')} | {ratio_cell} |"
        )
    else:
        lines.append(
            f"| median | {median('ding', 'wall_time')} | {median('ding', 'env_step')} | "
            f"{median('ding', 'train_iter')} | not runnable | – | – | – |"
        )
    lines.append("")
    lines.append(
        "Wall time from starting the subprocess to the stop (start-up included). "
        "A ratio above 1 means ding reached the stop value sooner."
    )
    if di_reason is None:
        lines.append(f"Compared with {di_desc}.")
    else:
        lines.append(f"DI-engine: not runnable ({di_reason})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default 0,1,2)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds allowed per run (default 600)")
    parser.add_argument("--output", help="also write the report to this file")
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]

    di_reason, di_desc = probe_di_engine()
    if di_reason:
        print(f"DI-engine: not runnable ({di_reason})", file=sys.stderr)
    runs: dict[str, list[Run]] = {"ding": [], "di-engine": []}
    for seed in seeds:
        run = run_child("ding", DING_PYTHON, DING_CHILD, seed, str(DING_CONFIG), args.timeout)
        runs["ding"].append(run)
        print(
            f"ding seed {seed}: {fmt_time(run)}, env steps {fmt_int(run.env_step)}, "
            f"train iters {fmt_int(run.train_iter)}",
            file=sys.stderr,
        )
        if di_reason is None:
            run = run_child("di-engine", DI_ENGINE_PYTHON, DI_ENGINE_CHILD, seed, DI_ENGINE_CONFIG_MODULE, args.timeout)
            runs["di-engine"].append(run)
            print(
                f"DI-engine seed {seed}: {fmt_time(run)}, env steps {fmt_int(run.env_step)}, "
                f"train iters {fmt_int(run.train_iter)}",
                file=sys.stderr,
            )
    text = report(runs, di_reason, di_desc, seeds)
    print(text)
    if args.output:
        pathlib.Path(args.output).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
