"""How evenly ``send`` / ``recv`` serves its envs, and how fast, when the workers outnumber the cores.

Run from the project root: ``.venv/bin/python -m bench.bench_fairness`` (about half a minute). ``recv`` returns every
env that has answered, so it loses nothing; but which envs answer first is up to the workers and the kernel's
scheduler. With more worker processes than cores, a worker rung on a core that another process keeps waits, and the
envs of the workers that answer first are sent their next actions again and again (the caller's yield,
``core.spin.CoreYield``, is what keeps the caller from being that process). This benchmark counts the rows each env
got.

Each row is a layout of the same envs (``bench.contenders.synthetic_case``: a 4-float observation, a step of
``--step-us`` of busy CPU, 0 by default: a cheap env like CartPole), driven through ``send`` / ``recv`` in batches of
``--batch-size`` for ``--batches`` batches, the caller busy for ``--caller-us`` between each ``recv`` and the next
``send`` (0 by default; a trainer's own work). Each repeat builds every layout's manager afresh (the rows differ
from one run to the next), in an order reversed every other repeat. Reported per layout: env steps/s (median of the
repeats) and the fewest rows of an env over the most rows of an env (1.00: every env alike; the median and the worst
repeat).

Layouts:

- ``one_per_worker``: ``subprocess``, one env per worker: as many workers as envs;
- ``workers_fit_cores``: ``subprocess`` with ``envs_per_worker`` = envs / cores (rounded up): a worker per core;
- ``no_spin``: ``one_per_worker`` with the hand-over's spinning turned off (the caller and the workers block for
  every message; ``core.link.SPIN_LIMIT`` set to 0 while the manager is built, an internal constant, not a setting);
- ``zmq``: ``zmq`` with local workers, one env per worker: the hand-over through ZeroMQ sockets;
- ``thread``: ``thread``, one env per thread of the caller's process: the interpreter's lock decides who runs;
- ``base``: every env in the caller's process, stepped in turn (the order of a single process).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from bench.contenders import synthetic_case
from bench.report import emit, table
from bench.synthetic_core import burn_cpu
from ding.envs.env_manager import create_env_manager
from ding.envs.env_manager.core import link

LAYOUTS = ("one_per_worker", "workers_fit_cores", "no_spin", "zmq", "thread", "base")
MANAGER_TYPES = {"zmq": "zmq", "thread": "thread", "base": "base"}
"""The manager type of each layout that is not ``subprocess``."""


def manager_config(layout: str, envs: int, cores: int, batch_size: int) -> dict[str, Any]:
    """The manager config of ``layout`` (see the module).

    >>> manager_config("workers_fit_cores", 4, 2, 2)
    {'type': 'subprocess', 'batch_size': 2, 'envs_per_worker': 2}
    """
    cfg: dict[str, Any] = {"type": MANAGER_TYPES.get(layout, "subprocess"), "batch_size": batch_size}
    if layout == "workers_fit_cores":
        cfg["envs_per_worker"] = math.ceil(envs / cores)
    return cfg


def run_layout(layout: str, envs: int, cores: int, args: argparse.Namespace) -> tuple[float, np.ndarray]:
    """Env steps/s and the rows each env got over ``args.batches`` batches of a fresh manager."""
    case = synthetic_case(args.step_us, "vector4")
    spin = link.SPIN_LIMIT
    if layout == "no_spin":
        link.SPIN_LIMIT = 0.0  # read by the manager's link (and handed to its workers) as it is built
    try:
        manager = create_env_manager(
            manager_config(layout, envs, cores, args.batch_size), [case.ding_fn for _ in range(envs)]
        )
    finally:
        link.SPIN_LIMIT = spin
    rows = np.zeros(envs, np.int64)
    with manager:
        manager.seed(0)
        manager.async_reset()
        batch = manager.recv()
        started = time.perf_counter()
        for _ in range(args.batches):
            burn_cpu(args.caller_us)
            manager.send(np.zeros(len(batch.env_ids), np.int64), batch.env_ids)
            batch = manager.recv()
            rows[batch.env_ids] += 1
        seconds = time.perf_counter() - started
    return float(rows.sum()) / seconds, rows


def evenness(rows: np.ndarray) -> float:
    """The fewest rows of an env over the most (1.0: every env alike).

    >>> evenness(np.array([50, 100, 100, 80]))
    0.5
    """
    return float(rows.min()) / float(rows.max()) if rows.max() > 0 else 0.0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", type=int, default=4, help="envs (default 4)")
    parser.add_argument("--batch-size", type=int, default=2, help="recv's batch size (default 2)")
    parser.add_argument("--batches", type=int, default=3000, help="batches per run (default 3000)")
    parser.add_argument("--repeats", type=int, default=8, help="runs per layout (default 8)")
    parser.add_argument("--step-us", type=int, default=0, help="µs of busy CPU per env step (default 0)")
    parser.add_argument("--caller-us", type=int, default=0, help="µs of the caller's busy CPU per batch (default 0)")
    parser.add_argument("--layouts", default=",".join(LAYOUTS), help=f"layouts to run (default {','.join(LAYOUTS)})")
    parser.add_argument("--output", help="also write the report to this file")
    args = parser.parse_args(argv)
    args.keys = [key for key in args.layouts.split(",") if key]
    unknown = [key for key in args.keys if key not in LAYOUTS]
    if unknown:
        parser.error(f"unknown layout(s) {unknown}; layouts: {', '.join(LAYOUTS)}")
    if args.envs < 2 or not 1 <= args.batch_size < args.envs:
        parser.error(f"--envs must be >= 2 and --batch-size in [1, envs), got {args.envs} and {args.batch_size}")
    if args.batches < 1 or args.repeats < 1 or args.step_us < 0 or args.caller_us < 0:
        parser.error("--batches and --repeats must be >= 1, --step-us and --caller-us >= 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    began = time.perf_counter()
    cores = len(os.sched_getaffinity(0))
    rates: dict[str, list[float]] = {key: [] for key in args.keys}
    even: dict[str, list[float]] = {key: [] for key in args.keys}
    for repeat in range(args.repeats):
        for layout in args.keys if repeat % 2 == 0 else args.keys[::-1]:
            rate, rows = run_layout(layout, args.envs, cores, args)
            rates[layout].append(rate)
            even[layout].append(evenness(rows))
    header = ["layout", "workers", "env steps/s", "fewest / most rows of an env: median", "worst run"]
    body = []
    for layout in args.keys:
        cfg = manager_config(layout, args.envs, cores, args.batch_size)
        per_worker = int(cfg.get("envs_per_worker", 1))
        workers = "none (the caller)" if cfg["type"] == "base" else str(math.ceil(args.envs / per_worker))
        if cfg["type"] == "thread":
            workers += " threads"
        body.append(
            [
                layout,
                workers,
                f"{statistics.median(rates[layout]):.0f}",
                f"{statistics.median(even[layout]):.2f}",
                f"{min(even[layout]):.2f}",
            ]
        )
    out = [
        f"# send / recv: how evenly {args.envs} envs are served, batches of {args.batch_size}, on {cores} cores",
        "",
        f"- machine: os.cpu_count() {os.cpu_count()}, usable cores {cores}, 1-minute load average at start "
        f"{os.getloadavg()[0]:.2f}; Python {sys.version.split()[0]}",
        f"- command: `.venv/bin/python -m bench.bench_fairness --envs {args.envs} --batch-size {args.batch_size} "
        f"--batches {args.batches} --repeats {args.repeats} --step-us {args.step_us} --caller-us {args.caller_us} "
        f"--layouts {','.join(args.keys)}`",
        "",
        table(header, body),
        "",
    ]
    emit(out, time.perf_counter() - began, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
