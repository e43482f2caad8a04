"""A peer's process: runs inside the peer's own venv (``bench/setup_<peer>.sh``), never in the project's.

The benchmark starts ``<peer venv>/bin/python -I bench/peer_child.py`` and talks to it in JSON lines on
stdin/stdout. It imports only the standard library, NumPy, the peer, and the files beside it (``peer_pools.py``,
``synthetic_core.py``), so it runs without the project on its path. Commands:

- ``{"cmd": "start", "peer": "envpool"|"tianshou"|"torchrl", "mode": ..., "env": {...}, "n": 8, "actions": 2,
  "seed": 0, "action_seed": 12345, "tape_length": 4096}``: build the peer's vector env (``peer_pools.py`` says what
  each peer and mode builds), reset it and pre-generate the action table exactly as ``bench.contenders.ActionTape``
  does; answers ``{"ok": true, "version": ...}``.
- ``{"cmd": "window", "seconds": s, "min_batches": m, "cursor": c}``: step batches for at least ``s`` seconds
  and ``m`` batches, taking action rows from ``c`` on; answers the env steps delivered, the wall and CPU seconds
  (this process, every thread) and each batch's latency.
- ``{"cmd": "reset"}``: reset every env.
- ``{"cmd": "close"}``: close the vector env and exit.

Each answer is one line; a failure answers ``{"ok": false, "error": "..."}``.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import sys
import time
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import peer_pools


class Driven:
    """A peer's pool driven with a pre-generated action table."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.pool = peer_pools.POOLS[spec["peer"]](spec)
        rng = np.random.default_rng(int(spec["action_seed"]))
        table = rng.integers(0, int(spec["actions"]), (int(spec["tape_length"]), int(spec["n"])), dtype=np.int64)
        self.rows = [row.astype(self.pool.action_dtype) for row in table]  # the rows the peer takes, made once

    def window(self, seconds: float, min_batches: int, cursor: int) -> dict[str, Any]:
        rows, size, step = self.rows, len(self.rows), self.pool.step
        latencies: list[float] = []
        steps = 0
        cpu_before = time.process_time()
        start = last = time.perf_counter()
        deadline = start + seconds
        while last < deadline or len(latencies) < min_batches:
            steps += step(rows[cursor % size])
            now = time.perf_counter()
            latencies.append(now - last)
            last = now
            cursor += 1
        return {
            "ok": True,
            "steps": steps,
            "seconds": last - start,
            "cpu_seconds": time.process_time() - cpu_before,
            "latencies": latencies,
            "cursor": cursor,
        }


def main() -> int:
    driven: Driven | None = None
    for line in sys.stdin:
        command = json.loads(line)
        try:
            if command["cmd"] == "start":
                driven = Driven(command)
                version = importlib.metadata.version(peer_pools.DISTRIBUTIONS[command["peer"]])
                answer: dict[str, Any] = {"ok": True, "version": version}
            elif command["cmd"] == "window":
                if driven is None:
                    raise RuntimeError("window before start")
                answer = driven.window(float(command["seconds"]), int(command["min_batches"]), int(command["cursor"]))
            elif command["cmd"] == "reset":
                if driven is None:
                    raise RuntimeError("reset before start")
                driven.pool.reset()
                answer = {"ok": True}
            elif command["cmd"] == "close":
                if driven is not None:
                    driven.pool.close()
                print(json.dumps({"ok": True}), flush=True)
                return 0
            else:
                raise ValueError(f"unknown command {command['cmd']!r}")
        except Exception as exc:  # reported to the benchmark, which records the contender as failed
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(answer), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
