"""What the caller's Python costs an asynchronous envpool pool of Pong envs, and what ding's Python chain could reach.

Run from the project root: ``.venv/bin/python -m bench.bench_pool_caller`` (about a minute; needs the ``envpool``
extra, which the project's venv has). Every table runs in one process tree with its rows interleaved (the order
reversed every other repeat); medians over the repeats. The workload is ``bench.atari.PONG``: 16 envs, batches of 8
(envpool's asynchronous layout, as the ``envpool_async`` peer of ``bench_atari`` runs it).

Tables:

- ``python``: the Python alone. The pool's class is given a stand-in ``_reset`` / ``_send`` / ``_recv`` that
  replays one recorded batch of 8 Pong envs (with the env ids that were sent), so no emulation runs and nothing
  waits: µs of wall time per batch for ding's ``envpool`` manager (``step()``, ``send`` / ``recv``) and envpool's
  own ``recv`` / ``send``.
- ``loops``: four loops over the same kind of pool, each reporting the caller thread's CPU time per batch
  (``time.thread_time``), the part of it outside the pool's own ``_recv`` (the C++ call that waits for a batch), and
  env steps/s: ding's ``envpool`` manager through ``step()`` and through ``send`` / ``recv``, envpool's own Python
  loop (``recv``, then ``send`` for the batch's ``env_id``) and the pool's raw ``_recv`` / ``_send`` with no Python
  around them. On two cores the pool's two C++ threads and the caller share the cores, so the caller's CPU is taken
  from the env stepping.
- ``busy``: envpool's own loop with a busy wait of a fixed length added to every batch: what a microsecond of the
  caller's work costs the pool's throughput.
- ``ceiling``: ding's Python Atari chain with no hand-over at all: one process stepping 8 envs in a loop against two
  independent processes stepping 4 each. The second is the most any manager of ding's Python envs can reach on the
  machine.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from bench.atari import PONG
from bench.report import emit, table
from ding.envs.env_manager import create_env_manager

BATCH = 8
"""Envs per batch; the pool holds twice as many."""
ACTIONS = np.array([5, 3, 3, 1, 1, 0, 0, 0], dtype=np.int32)
"""Env ``i`` takes ``ACTIONS[i % 8]`` every step (every loop the same)."""
TABLES = ("python", "loops", "busy", "ceiling")
MISSING = object()
"""Marks a method the pool class inherits (from envpool's C++ class) rather than defines."""


@contextlib.contextmanager
def replaced(pool_class: type, **calls: Callable[..., Any]) -> Iterator[None]:
    """The pool class's methods ``calls`` replaced while the block runs (the C++ ones back afterwards)."""
    saved = {name: pool_class.__dict__.get(name, MISSING) for name in calls}
    for name, call in calls.items():
        setattr(pool_class, name, call)
    try:
        yield
    finally:
        for name, call in saved.items():
            if call is MISSING:
                delattr(pool_class, name)  # inherited from the C++ class again
            else:
                setattr(pool_class, name, call)


class CallerClock:
    """The caller thread's CPU time in the pool's ``_recv``: :meth:`timed_recv` replaces it on the pool class, so
    every pool of the task (ding's too) reads through it."""

    def __init__(self, pool_class: type) -> None:
        self.inside = 0.0
        self.raw_recv = pool_class._recv

    def timed_recv(self, pool: Any) -> Any:
        began = time.thread_time()
        state = self.raw_recv(pool)
        self.inside += time.thread_time() - began
        return state


class StandIn:
    """A replay of ``sample`` (one recorded batch, no episode ended) for the pool class's C++ calls: the env ids sent
    or reset come back ``BATCH`` at a time, in the order sent, with the sample's other arrays."""

    def __init__(self, sample: Sequence[np.ndarray], id_columns: Sequence[int]) -> None:
        self.sample, self.id_columns = list(sample), list(id_columns)
        self.queued: dict[int, list[int]] = {}

    def calls(self) -> dict[str, Callable[..., Any]]:
        queued, sample, id_columns = self.queued, self.sample, self.id_columns

        def reset(pool: Any, env_ids: np.ndarray) -> None:
            queued.setdefault(id(pool), []).extend(np.asarray(env_ids).tolist())

        def send(pool: Any, arrays: Sequence[np.ndarray]) -> None:
            queued.setdefault(id(pool), []).extend(np.asarray(arrays[0]).tolist())

        def recv(pool: Any) -> list[np.ndarray]:
            waiting = queued[id(pool)]
            env_ids = np.array(waiting[:BATCH], dtype=np.int32)
            del waiting[:BATCH]
            state = list(sample)
            for column in id_columns:
                state[column] = env_ids
            return state

        return {"_reset": reset, "_send": send, "_recv": recv}


def recorded_batch() -> tuple[type, list[np.ndarray], list[int]]:
    """A real pool's class, one of its batches in which no episode ended, and the columns that hold env ids."""
    pool = envpool_pool()
    try:
        keys = list(pool._state_keys)
        done = keys.index("done")
        while True:
            state = pool._recv()
            if not state[done].any():
                break
            pool._send([state[0], state[0], ACTIONS[state[0] % BATCH]])
        columns = [i for i, key in enumerate(keys) if key.endswith("env_id")]
        return type(pool), [np.array(array) for array in state], columns
    finally:
        pool.close()


def python_table(batches: int, repeats: int) -> list[str]:
    pool_class, sample, columns = recorded_batch()
    with replaced(pool_class, **StandIn(sample, columns).calls()):
        pool = envpool_pool()
        ding, managers = ding_loops()
        try:
            loops = {
                **ding,
                "envpool's own loop (`recv`, `send`)": envpool_loops(pool)["envpool's own loop (`recv`, `send`)"],
            }
            found = interleaved(loops, batches, repeats, None)
        finally:
            for manager in managers:
                manager.close()
            pool.close()
    rows = []
    for name, results in found.items():
        rate = statistics.median(rate for _, _, rate in results)
        rows.append([name, f"{BATCH / rate * 1e6:.1f}"])
    header = ["loop", "µs per batch of 8 (stand-in pool: no emulation, no waiting)"]
    return ["## The Python per batch alone", "", table(header, rows), ""]


def pool_options() -> dict[str, Any]:
    return {**PONG.envpool.kwargs, "batch_size": BATCH}


def envpool_pool() -> Any:
    import envpool

    pool = envpool.make("Pong-v5", env_type="gymnasium", num_envs=2 * BATCH, seed=0, **pool_options())
    pool.async_reset()
    return pool


def ding_loops() -> tuple[dict[str, Callable[[int], None]], list[Any]]:
    """ding's ``envpool`` manager through ``step()`` and through ``send`` / ``recv`` (infos read where done)."""
    cfg = {"type": "envpool", "env_id": "Pong-v5", "options": pool_options(), "batch_size": BATCH}
    stepped = create_env_manager(cfg, [PONG.ding_fn for _ in range(2 * BATCH)])
    stepped.seed(0)
    stepped.launch()
    sent = create_env_manager(cfg, [PONG.ding_fn for _ in range(2 * BATCH)])
    sent.seed(0)
    sent.async_reset()
    ids = [sent.recv().env_ids]
    row = ACTIONS.tolist()

    def step(batches: int) -> None:
        for _ in range(batches):
            for timestep in stepped.step({i: row[i % BATCH] for i in stepped.ready_obs}).values():
                if timestep.done and timestep.info.get("abnormal"):
                    raise RuntimeError(f"abnormal step: {timestep.info}")

    def send_recv(batches: int) -> None:
        for _ in range(batches):
            sent.send(ACTIONS[ids[0] % BATCH], ids[0])
            batch = sent.recv()
            ids[0] = batch.env_ids
            for i in np.flatnonzero(batch.done).tolist():
                if batch.info[i].get("abnormal"):
                    raise RuntimeError(f"abnormal step: {batch.info[i]}")

    return {"ding `envpool` manager, `step()`": step, "ding `envpool` manager, `send` / `recv`": send_recv}, [
        stepped,
        sent,
    ]


def envpool_loops(pool: Any, busy: float = 0.0) -> dict[str, Callable[[int], None]]:
    def own(batches: int) -> None:
        for _ in range(batches):
            _, _, _, _, info = pool.recv()
            env_ids = info["env_id"]
            pool.send(ACTIONS[env_ids % BATCH], env_ids)
            if busy:
                until = time.perf_counter() + busy
                while time.perf_counter() < until:
                    pass

    def raw(batches: int) -> None:
        for _ in range(batches):
            state = pool._recv()
            env_ids = state[0]  # info:env_id, envpool's first state key
            pool._send([env_ids, env_ids, ACTIONS[env_ids % BATCH]])

    return {"envpool's own loop (`recv`, `send`)": own, "the pool's raw `_recv` / `_send`": raw}


def interleaved(
    loops: dict[str, Callable[[int], None]], batches: int, repeats: int, clock: CallerClock | None
) -> dict[str, list[tuple[float, float, float]]]:
    """Per loop and repeat: caller CPU µs per batch, of it outside ``_recv``, env steps/s."""
    for loop in loops.values():
        loop(batches // 4)
    found: dict[str, list[tuple[float, float, float]]] = {name: [] for name in loops}
    for repeat in range(repeats):
        order = list(loops.items()) if repeat % 2 else list(loops.items())[::-1]
        for name, loop in order:
            if clock is not None:
                clock.inside = 0.0
            cpu, wall = time.thread_time(), time.perf_counter()
            loop(batches)
            wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
            inside = clock.inside if clock is not None else 0.0
            found[name].append((cpu / batches * 1e6, (cpu - inside) / batches * 1e6, batches * BATCH / wall))
    return found


def loops_table(batches: int, repeats: int) -> list[str]:
    pool = envpool_pool()
    clock = CallerClock(type(pool))
    with replaced(type(pool), _recv=lambda pool: clock.timed_recv(pool)):  # a function: bound to each pool
        ding, managers = ding_loops()
        try:
            found = interleaved({**ding, **envpool_loops(pool)}, batches, repeats, clock)
        finally:
            for manager in managers:
                manager.close()
            pool.close()
    own = statistics.median(rate for _, _, rate in found["envpool's own loop (`recv`, `send`)"])
    rows = []
    for name, results in found.items():
        cpu, outside, rate = (statistics.median(values) for values in zip(*results, strict=True))
        rows.append([name, f"{cpu:.0f}", f"{outside:.0f}", f"{rate:.0f}", f"{rate / own:.3f}×"])
    header = ["loop", "caller CPU µs per batch", "of it outside the pool's `_recv`", "env steps/s", "/ envpool's loop"]
    return ["## The caller's CPU per batch of 8 Pong envs, one process", "", table(header, rows), ""]


def busy_table(batches: int, repeats: int, waits: Sequence[float]) -> list[str]:
    pool = envpool_pool()
    try:
        loops = {
            f"{wait * 1e6:.0f}": envpool_loops(pool, wait)["envpool's own loop (`recv`, `send`)"] for wait in waits
        }
        found = interleaved(loops, batches, repeats, None)
    finally:
        pool.close()
    base = statistics.median(rate for _, _, rate in found[f"{waits[0] * 1e6:.0f}"])
    rows = []
    for name, results in found.items():
        rate = statistics.median(rate for _, _, rate in results)
        rows.append([name, f"{rate:.0f}", f"{rate / base:.3f}×"])
    header = ["busy wait added per batch (µs)", "env steps/s", f"/ {waits[0] * 1e6:.0f} µs added"]
    return ["## envpool's own loop with the caller's work per batch made longer", "", table(header, rows), ""]


def chain_loop(envs: int, seconds: float, results: Any) -> None:
    """One process stepping ``envs`` ding Pong envs in a loop (reset where done); puts (steps/s, CPU µs/step)."""
    made = [PONG.ding_fn() for _ in range(envs)]
    for i, env in enumerate(made):
        env.seed(i)
        env.reset()
    actions = [np.array(ACTIONS[i % BATCH]) for i in range(envs)]

    def run(until: float) -> int:
        steps = 0
        while time.perf_counter() < until:
            for env, action in zip(made, actions, strict=True):
                if env.step(action).done:
                    env.reset()
            steps += envs
        return steps

    run(time.perf_counter() + 0.5)
    cpu, wall = time.process_time(), time.perf_counter()
    steps = run(wall + seconds)
    results.put((steps / (time.perf_counter() - wall), (time.process_time() - cpu) / steps * 1e6))
    for env in made:
        env.close()


def processes(count: int, envs: int, seconds: float) -> tuple[float, float]:
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    children = [context.Process(target=chain_loop, args=(envs, seconds, results)) for _ in range(count)]
    for child in children:
        child.start()
    found = [results.get(timeout=seconds + 120) for _ in children]
    for child in children:
        child.join()
    return sum(rate for rate, _ in found), statistics.mean(cpu for _, cpu in found)


def ceiling_table(seconds: float, repeats: int) -> list[str]:
    ways = {"one process, 8 envs": (1, 8), "two processes, 4 envs each": (2, 4)}
    found: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
    for repeat in range(repeats):
        for name, (count, envs) in list(ways.items()) if repeat % 2 else list(ways.items())[::-1]:
            found[name].append(processes(count, envs, seconds))
    one = statistics.median(rate for rate, _ in found["one process, 8 envs"])
    rows = []
    for name, results in found.items():
        rate = statistics.median(rate for rate, _ in results)
        cpu = statistics.median(cpu for _, cpu in results)
        rows.append([name, f"{rate:.0f}", f"{rate / one:.2f}×", f"{cpu:.0f}"])
    header = ["ding's Pong chain, no hand-over", "env steps/s (all processes)", "/ one process", "CPU µs per env step"]
    return ["## ding's Python Atari chain with no manager at all", "", table(header, rows), ""]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=300, help="batches per timed window (default 300)")
    parser.add_argument("--repeats", type=int, default=10, help="timed windows per row (default 10)")
    parser.add_argument("--busy", default="0,100,300", help="µs of busy work per batch for `busy` (default 0,100,300)")
    parser.add_argument("--seconds", type=float, default=4.0, help="seconds per `ceiling` window (default 4)")
    parser.add_argument("--tables", default=",".join(TABLES), help=f"tables to run (default {','.join(TABLES)})")
    parser.add_argument("--output", help="also write the report to this file")
    args = parser.parse_args(argv)
    args.keys = [key for key in args.tables.split(",") if key]
    unknown = [key for key in args.keys if key not in TABLES]
    if unknown:
        parser.error(f"unknown table(s) {unknown}; tables: {', '.join(TABLES)}")
    try:
        args.waits = [float(value) * 1e-6 for value in args.busy.split(",")]
    except ValueError:
        parser.error(f"--busy takes µs separated by commas, got {args.busy!r}")
    if args.batches < 4 or args.repeats < 1 or args.seconds <= 0 or any(wait < 0 for wait in args.waits):
        parser.error("--batches must be >= 4, --repeats >= 1, --seconds > 0 and every --busy value >= 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    began = time.perf_counter()
    out = [
        "# The caller's Python against an asynchronous envpool pool (8 × Pong), and ding's chain with no manager",
        "",
        f"- machine: os.cpu_count() {os.cpu_count()}, usable cores {len(os.sched_getaffinity(0))}, 1-minute load "
        f"average at start {os.getloadavg()[0]:.2f}; Python {sys.version.split()[0]}, numpy {np.__version__}",
        f"- command: `.venv/bin/python -m bench.bench_pool_caller --batches {args.batches} --repeats {args.repeats} "
        f"--busy {args.busy} --seconds {args.seconds} --tables {','.join(args.keys)}`",
        "",
    ]
    if "python" in args.keys:
        out += python_table(10 * args.batches, args.repeats)
    if "loops" in args.keys:
        out += loops_table(args.batches, args.repeats)
    if "busy" in args.keys:
        out += busy_table(args.batches, args.repeats, args.waits)
    if "ceiling" in args.keys:
        out += ceiling_table(args.seconds, max(1, args.repeats // 5))
    emit(out, time.perf_counter() - began, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
