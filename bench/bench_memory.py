"""Memory of a Pong DQN run at 50k stored transitions: ding against DI-engine 0.5.3, each with its own Pong config.

Each run is a fresh subprocess in an empty temporary directory (``python -I``) that trains until the collector has
taken ``--transitions`` env steps, with the replay buffer holding that many (``replay_buffer_size`` set to it, CPU
only); everything else is the framework's own Pong DQN config:

* ding: ``dizoo/atari/config/pong_dqn_config.py`` in the project's venv, with the replay buffer the pipeline
  plans (the frame-sharing buffer for frame stacks) and, as a second row, with ``share_frames=False`` (the naive
  buffer, one uint8 stack per ``obs`` and ``next_obs``);
* DI-engine: its ``dizoo/atari/config/serial/pong/pong_dqn_config.py`` in ``bench/.venv-di-engine``
  (``bash bench/setup_di_engine.sh``; float32 frames, its naive buffer).

Measured: the trainer's peak RSS (``ru_maxrss``, reported by the child when it stops) and the peak over the run of
the proportional set size (PSS, shared pages split among their processes) summed over the trainer and its env
workers, sampled every 0.25 s from ``/proc``. Usage, from the project root::

    .venv/bin/python -m bench.bench_memory --update-per-collect 1   # 50k transitions, the three rows (~15 min)
    .venv/bin/python -m bench.bench_memory                          # each config's 10 updates per collection (~3 h)
    .venv/bin/python -m bench.bench_memory --transitions 5000 --runs ding
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence

from bench.bench_training import DI_ENGINE_PYTHON, DING_PYTHON, ROOT, child_env, probe_di_engine
from bench.report import table
from ding.utils.measure import descendants_of

MARKER = "BENCH_MEMORY_RESULT "
DING_CONFIG = ROOT / "dizoo" / "atari" / "config" / "pong_dqn_config.py"
DI_ENGINE_CONFIG = "dizoo.atari.config.serial.pong.pong_dqn_config"

# argv: transitions, config, share_frames ("auto", "true", "false"), update_per_collect (0: the config's)
DING_CHILD = f"""
import json, resource, sys
from ding.config import read_config
from ding.entry import serial_pipeline
transitions = int(sys.argv[1])
main_config, create_config = read_config(sys.argv[2])
buffer = main_config.policy.other.replay_buffer
buffer.replay_buffer_size = transitions
if sys.argv[3] != 'auto':
    buffer.share_frames = sys.argv[3] == 'true'
if int(sys.argv[4]):
    main_config.policy.learn.update_per_collect = int(sys.argv[4])
main_config.policy.cuda = False
result = serial_pipeline((main_config, create_config), seed=0, max_env_step=transitions, root='.', progress=False)
print({MARKER!r} + json.dumps(dict(
    env_step=int(result.env_step), train_iter=int(result.train_iter),
    maxrss_kb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
)), flush=True)
"""

DI_ENGINE_CHILD = f"""
import importlib, json, resource, sys
from ding.entry import serial_pipeline
transitions = int(sys.argv[1])
config = importlib.import_module(sys.argv[2])
main_config, create_config = config.main_config, config.create_config
main_config.policy.cuda = False
main_config.policy.other.replay_buffer.replay_buffer_size = transitions
if int(sys.argv[3]):
    main_config.policy.learn.update_per_collect = int(sys.argv[3])
serial_pipeline((main_config, create_config), seed=0, max_env_step=transitions)
print({MARKER!r} + json.dumps(dict(maxrss_kb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)), flush=True)
"""


@dataclasses.dataclass
class MemoryRun:
    label: str
    peak_rss: float | None = None  # bytes, the trainer's
    peak_tree_pss: float = 0.0  # bytes, trainer and workers
    seconds: float | None = None
    env_step: int | None = None
    error: str | None = None


def pss_bytes(pid: int) -> int:
    """The proportional set size of a process (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return 0
    return 0


def tree_pss(pid: int) -> int:
    """PSS of ``pid`` and every descendant."""
    return sum(pss_bytes(current) for current in [pid, *descendants_of(pid)])


def run_child(label: str, argv: list[str], timeout: float) -> MemoryRun:
    run = MemoryRun(label)
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        log_path = pathlib.Path(tmp) / "child.log"
        with open(log_path, "w") as log:
            started = time.monotonic()
            proc = subprocess.Popen(argv, cwd=tmp, env=child_env(), stdout=subprocess.PIPE, stderr=log, text=True)
            done = threading.Event()

            def sample() -> None:
                while not done.wait(0.25):
                    run.peak_tree_pss = max(run.peak_tree_pss, tree_pss(proc.pid))

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            try:
                out, _ = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, _ = proc.communicate()
                run.error = f"timed out after {timeout:.0f} s"
            done.set()
            sampler.join()
            run.seconds = time.monotonic() - started
        for line in out.splitlines():
            if line.startswith(MARKER):
                result = json.loads(line[len(MARKER) :])
                run.peak_rss = result["maxrss_kb"] * 1024.0
                run.env_step = result.get("env_step")
        if run.peak_rss is None and run.error is None:
            tail = log_path.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
            run.error = f"exit code {proc.returncode}: {tail[0][:200]}"
    return run


def gib(value: float | None) -> str:
    return "—" if value is None else f"{value / 2**30:.2f} GiB"


def report(runs: Sequence[MemoryRun], transitions: int) -> str:
    rows = []
    for run in runs:
        if run.error:
            rows.append([run.label, f"failed: {run.error}", "", "", ""])
            continue
        per = f"{run.peak_rss / transitions / 1024:.1f} KiB" if run.peak_rss else "—"
        rows.append([run.label, gib(run.peak_rss), per, gib(run.peak_tree_pss), f"{run.seconds:.0f} s"])
    header = ["run", "trainer peak RSS", "trainer peak RSS / transition", "peak PSS, trainer + workers", "wall time"]
    return table(header, rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--transitions", type=int, default=50_000, help="env steps collected and stored (50k)")
    parser.add_argument("--runs", default="ding,ding_naive,di-engine", help="which rows (ding, ding_naive, di-engine)")
    parser.add_argument(
        "--update-per-collect",
        type=int,
        default=0,
        help="learner updates per collection in every run (0: each config's own; memory does not depend on it)",
    )
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds allowed per run")
    parser.add_argument("--output", help="also write the report to this file")
    args = parser.parse_args(argv)
    n, updates = str(args.transitions), str(args.update_per_collect)
    runs: list[MemoryRun] = []
    for key in args.runs.split(","):
        print(f"memory: {key}", file=sys.stderr, flush=True)
        if key in ("ding", "ding_naive"):
            share = "auto" if key == "ding" else "false"
            label = "ding, the planned buffer (frame-sharing)" if key == "ding" else "ding, share_frames=False"
            argv_ = [str(DING_PYTHON), "-I", "-c", DING_CHILD, n, str(DING_CONFIG), share, updates]
            runs.append(run_child(label, argv_, args.timeout))
        elif key == "di-engine":
            reason, _ = probe_di_engine()
            if reason:
                runs.append(MemoryRun("DI-engine 0.5.3", error=f"not runnable ({reason})"))
                continue
            argv_ = [str(DI_ENGINE_PYTHON), "-I", "-c", DI_ENGINE_CHILD, n, DI_ENGINE_CONFIG, updates]
            runs.append(run_child("DI-engine 0.5.3 (its Pong DQN config)", argv_, args.timeout))
        else:
            parser.error(f"unknown run {key!r}; known: ding, ding_naive, di-engine")
        print(f"  {report(runs[-1:], args.transitions).splitlines()[-1]}", file=sys.stderr, flush=True)
    text = "\n".join(
        [
            f"Pong DQN until {args.transitions:,} transitions are stored (CPU; {os.cpu_count()} cores; "
            f"update_per_collect: {args.update_per_collect or 'each config'})",
            "",
            report(runs, args.transitions),
        ]
    )
    print(text)
    if args.output:
        pathlib.Path(args.output).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
