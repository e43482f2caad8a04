"""Round trip of a one-message hand-over between two processes: ding's pipe frames against shared-memory flags.

Run from the project root: ``.venv/bin/python -m bench.bench_handover`` (a few seconds per way). A parent and one
``multiprocessing`` child (``fork`` context) pass a counter back and forth; each row is one way of handing it over:

- ``pipe_spin``: ding's frames (:func:`~ding.envs.env_manager.core.frames.send_frame` and
  :func:`~ding.envs.env_manager.core.frames.recv_frame`, a 9-byte message each way) on a duplex
  ``multiprocessing.Pipe``; the waiting side spins on :func:`~ding.envs.env_manager.core.spin.readable` (one
  ``poll(0)``) with ``sched_yield`` between checks, then reads. Both sides spin.
- ``pipe_block``: the same frames; each side blocks in ``recv_frame``.
- ``flag_spin``: no pipe; two int64 words in one ``SharedMemory`` block. The parent writes the counter into word 0,
  the child spins (``sched_yield`` between checks) until it sees it and writes it into word 1, on which the parent
  spins. This is the hand-over of PufferLib-style vectorizers: no system call at all when both sides spin.
- ``flag_busy``: as ``flag_spin`` with a pure busy loop (no ``sched_yield``).
- ``doorbell``: what ding's pipe channel does (:mod:`ding.envs.env_manager.core.doorbell`): the step's number rung
  on the worker's doorbell, with a memory fence, its frame written on the pipe only when the child sleeps; the child
  takes it as a worker does (``core.worker.Intake``) and rings its ``OK``; the parent takes the reply from the
  doorbell.

The difference between the pipe rows and the flag rows is the most a step could gain from replacing the pipe
hand-over by shared-memory flags; ``doorbell`` shows how much of it ding's doorbells, which keep the pipe behind
them for a process that sleeps, take. The parent's CPU time per round trip shows what the waiting costs the parent's
core.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import dataclasses
import faulthandler
import multiprocessing
import os
import signal
import statistics
import struct
import sys
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from multiprocessing.shared_memory import SharedMemory

import numpy as np

from bench.report import emit, table
from ding.envs.env_manager.core.doorbell import DRAIN_AT, DoorbellRef, Doorbells, WorkerBell
from ding.envs.env_manager.core.frames import recv_frame, send_frame
from ding.envs.env_manager.core.sequence import message_seq, ok_reply, step_message
from ding.envs.env_manager.core.spin import readable
from ding.envs.env_manager.core.worker import Intake

MESSAGE = struct.Struct("!cQ")
"""A request or reply: ``b"S"`` and the round trip's counter, 8 bytes big-endian (9 bytes)."""
STOP = -1
"""Written into word 0 of the flags to end the child."""
WARMUP = 2000
"""Round trips before the timed ones."""
WATCHDOG_SECONDS = 600.0
"""A way that takes longer than this (a lost child) ends the benchmark with the stacks printed."""
PR_SET_PDEATHSIG = 1


@dataclasses.dataclass(frozen=True)
class Way:
    """A row: a hand-over between the parent and one child."""

    key: str
    label: str
    pipe: bool
    spin: bool
    pause: bool = True
    """Whether a spinning side calls ``sched_yield`` between checks."""
    bell: bool = False
    """ding's doorbell in front of the pipe."""


WAYS: dict[str, Way] = {
    w.key: w
    for w in [
        Way("pipe_spin", "pipe, spinning", pipe=True, spin=True),
        Way("pipe_block", "pipe, blocking", pipe=True, spin=False),
        Way("flag_spin", "shared-memory flag, spinning", pipe=False, spin=True),
        Way("flag_busy", "shared-memory flag, spinning without yield", pipe=False, spin=True, pause=False),
        Way("doorbell", "ding's doorbell and pipe, spinning", pipe=True, spin=True, bell=True),
    ]
}


@dataclasses.dataclass
class WayResult:
    """Seconds of wall time and of parent CPU time per round trip, one of each per timed repeat."""

    wall: list[float] = dataclasses.field(default_factory=list)
    cpu: list[float] = dataclasses.field(default_factory=list)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def die_with_parent() -> None:
    """Have the kernel kill this child when the parent ends (a spinning child must not outlive it)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def pipe_child(conn: Connection, other_end: Connection, spin: bool) -> None:
    """Echo every frame back until the parent closes its end."""
    die_with_parent()
    other_end.close()  # the parent's end, inherited by fork: closed here so that the parent's close reads as EOF
    ready = readable(conn)
    try:
        while True:
            if spin:
                while not ready():
                    os.sched_yield()
            send_frame(conn, recv_frame(conn))
    except EOFError:
        return


def doorbell_child(conn: Connection, other_end: Connection, ref: DoorbellRef) -> None:
    """Answer every step rung on the doorbell (or sent on the pipe) as a worker does, until the parent closes."""
    die_with_parent()
    other_end.close()
    intake = Intake(conn, WorkerBell(ref))
    try:
        while True:
            while not intake.ready():
                os.sched_yield()
            message = intake.next()
            if message is not None:  # None: the pipe's copy of a step taken from the doorbell
                intake.answer(message, ok_reply(message_seq(message)))
    except EOFError:
        return
    finally:
        intake.close()


def flag_child(words: np.ndarray, pause: bool) -> None:
    """Copy each new value of word 0 into word 1 until word 0 is :data:`STOP`."""
    die_with_parent()
    seen = 0  # the value before the child started: the parent may have written the first request already
    while True:
        value = words.item(0)
        if value == seen:
            if pause:
                os.sched_yield()
            continue
        if value == STOP:
            return
        words[1] = value
        seen = value


def pipe_round_trips(conn: Connection, spin: bool) -> Callable[[int, int], None]:
    """A function doing ``count`` round trips over ``conn`` with the counters from ``start`` on."""
    ready = readable(conn)
    pack = MESSAGE.pack

    def run(start: int, count: int) -> None:
        message = b""
        reply = b""
        for i in range(start, start + count):
            message = pack(b"S", i)
            send_frame(conn, message)
            if spin:
                while not ready():
                    os.sched_yield()
            reply = recv_frame(conn)
        if reply != message:
            raise RuntimeError(f"the child answered {reply!r} to {message!r}")

    return run


def doorbell_round_trips(bells: Doorbells, conn: Connection) -> Callable[[int, int], None]:
    """A function doing ``count`` round trips through worker 0's doorbell, its pipe carrying the copies."""
    ready = readable(conn)

    def run(start: int, count: int) -> None:
        for i in range(start, start + count):
            if bells.undrained[0] >= DRAIN_AT:  # the pipe's copies of replies taken from the doorbell
                while ready():
                    if not bells.stale(0, recv_frame(conn)):
                        raise RuntimeError("the child answered on the pipe a step it had answered on the doorbell")
            message = step_message(i)
            if bells.ring(0, message):  # the child is blocked on its pipe
                send_frame(conn, message)
            while bells.answer(0) is None:
                os.sched_yield()

    return run


def flag_round_trips(words: np.ndarray, pause: bool) -> Callable[[int, int], None]:
    """A function doing ``count`` round trips over the two words with the counters from ``start`` on."""

    def run(start: int, count: int) -> None:
        for i in range(start, start + count):
            words[0] = i
            if pause:
                while words.item(1) != i:
                    os.sched_yield()
            else:
                while words.item(1) != i:
                    pass

    return run


def time_round_trips(run: Callable[[int, int], None], round_trips: int, repeats: int) -> WayResult:
    """Warm up, then time ``repeats`` batches of ``round_trips``."""
    run(1, WARMUP)
    counter = 1 + WARMUP
    result = WayResult()
    for _ in range(repeats):
        cpu = time.process_time()
        began = time.perf_counter()
        run(counter, round_trips)
        result.wall.append((time.perf_counter() - began) / round_trips)
        result.cpu.append((time.process_time() - cpu) / round_trips)
        counter += round_trips
    return result


def stop_child(process: BaseProcess) -> None:
    """Join the child; kill it if it does not end in a few seconds."""
    process.join(5.0)
    if process.is_alive():
        log(f"child {process.pid} did not end; killing it")
        process.kill()
        process.join()


def measure_pipe(way: Way, round_trips: int, repeats: int) -> WayResult:
    """A pipe way's timed repeats: a fresh child, ended by closing the pipe."""
    context = multiprocessing.get_context("fork")
    parent_end, child_end = context.Pipe(duplex=True)
    process = context.Process(target=pipe_child, args=(child_end, parent_end, way.spin), daemon=True)
    try:
        process.start()
        child_end.close()
        return time_round_trips(pipe_round_trips(parent_end, way.spin), round_trips, repeats)
    finally:
        parent_end.close()  # the child reads EOF and ends
        child_end.close()
        if process.pid is not None:
            stop_child(process)


def measure_doorbell(way: Way, round_trips: int, repeats: int) -> WayResult:
    """The doorbell way's timed repeats: a fresh child, pipe and doorbell segment (removed at the end)."""
    context = multiprocessing.get_context("fork")
    bells = Doorbells(1)
    parent_end, child_end = context.Pipe(duplex=True)
    process = context.Process(target=doorbell_child, args=(child_end, parent_end, bells.ref(0)), daemon=True)
    try:
        process.start()
        child_end.close()
        return time_round_trips(doorbell_round_trips(bells, parent_end), round_trips, repeats)
    finally:
        parent_end.close()
        child_end.close()
        if process.pid is not None:
            stop_child(process)
        bells.close()


def measure_flag(way: Way, round_trips: int, repeats: int) -> WayResult:
    """A flag way's timed repeats: a fresh child and shared-memory block, unlinked at the end."""
    context = multiprocessing.get_context("fork")
    memory = SharedMemory(create=True, size=2 * np.dtype(np.int64).itemsize)
    try:
        words: np.ndarray = np.ndarray((2,), dtype=np.int64, buffer=memory.buf)
        words[:] = 0
        process = context.Process(target=flag_child, args=(words, way.pause), daemon=True)
        try:
            process.start()
            return time_round_trips(flag_round_trips(words, way.pause), round_trips, repeats)
        finally:
            words[0] = STOP
            if process.pid is not None:
                stop_child(process)
            del words, process  # views of the buffer (the process keeps its args): close() fails while they live
    finally:
        memory.unlink()
        with contextlib.suppress(BufferError):  # a view still held by a traceback: the mapping goes with it
            memory.close()


def measure(way: Way, round_trips: int, repeats: int) -> WayResult:
    """One way's timed repeats, with a fresh child (under a watchdog)."""
    faulthandler.dump_traceback_later(WATCHDOG_SECONDS, exit=True)
    try:
        measured = measure_doorbell if way.bell else measure_pipe if way.pipe else measure_flag
        return measured(way, round_trips, repeats)
    finally:
        faulthandler.cancel_dump_traceback_later()


def result_row(way: Way, result: WayResult) -> list[str]:
    """Median, min–max and median parent CPU, in µs per round trip."""
    wall = [s * 1e6 for s in result.wall]
    cpu = [s * 1e6 for s in result.cpu]
    return [
        way.label,
        f"{statistics.median(wall):.2f}",
        f"{min(wall):.2f}–{max(wall):.2f}",
        f"{statistics.median(cpu):.2f}",
    ]


def load_average() -> str:
    """The 1-minute load average (first field of ``/proc/loadavg``), or "unknown"."""
    try:
        with open("/proc/loadavg") as handle:
            return handle.read().split()[0]
    except (OSError, IndexError):
        return "unknown"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_handover", description=__doc__)
    parser.add_argument("--round-trips", type=int, default=20000, help="round trips per timed repeat (default 20000)")
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats per way (default 5)")
    parser.add_argument("--ways", help=f"comma-separated ways (default {','.join(WAYS)})")
    parser.add_argument("--output", help="also write the report to this file")
    args = parser.parse_args(argv)
    args.keys = args.ways.split(",") if args.ways else list(WAYS)
    unknown = [k for k in args.keys if k not in WAYS]
    if unknown:
        parser.error(f"unknown way(s) {unknown}; known: {', '.join(WAYS)}")
    if args.round_trips < 1 or args.repeats < 1:
        parser.error("--round-trips and --repeats must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))  # run the clean-up on a kill
    began = time.perf_counter()
    out = [
        "# Hand-over round trip between two processes: pipe frames, shared-memory flags and ding's doorbells",
        "",
        f"- machine: os.cpu_count() {os.cpu_count()}, usable cores (affinity) {len(os.sched_getaffinity(0))}, "
        f"1-minute load average at start {load_average()}",
        f"- Python {sys.version.split()[0]}, numpy {np.__version__}; child started with the `fork` context",
        f"- command: `.venv/bin/python -m bench.bench_handover --round-trips {args.round_trips} "
        f"--repeats {args.repeats} --ways {','.join(args.keys)}`",
        "",
        f"Per way: {WARMUP} round trips of warm-up, then {args.repeats} timed repeats of {args.round_trips} round "
        "trips (`time.perf_counter`); µs per round trip, median and min–max over the repeats; the parent's CPU time "
        "(`time.process_time`) per round trip, median over the repeats.",
        "",
    ]
    rows: list[list[str]] = []
    for key in args.keys:
        log(f"way: {key}")
        rows.append(result_row(WAYS[key], measure(WAYS[key], args.round_trips, args.repeats)))
    header = ["way", "µs per round trip (median)", "min–max", "parent CPU µs per round trip"]
    out += [table(header, rows), ""]
    emit(out, time.perf_counter() - began, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
