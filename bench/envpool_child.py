"""The envpool contender's process: runs inside envpool's own venv (``bench/setup_envpool.sh``), never in the project's.

The benchmark starts ``<envpool venv>/bin/python -I bench/envpool_child.py`` and talks to it in JSON lines on
stdin/stdout. It imports only the standard library, NumPy and envpool, so it runs without the project on its
path. Commands:

- ``{"cmd": "start", "task": "Pong-v5", "n": 8, "mode": "sync"|"async", "actions": 6, "seed": 0,
  "action_seed": 12345, "tape_length": 4096, "kwargs": {...}}``: build the pool (sync: ``num_envs = batch_size =
  n``; async: ``num_envs = 2 n``, ``batch_size = n``), reset it and pre-generate the action table exactly as
  ``bench.contenders.ActionTape`` does; answers ``{"ok": true, "version": ...}``.
- ``{"cmd": "window", "seconds": s, "min_batches": m, "cursor": c}``: step batches for at least ``s`` seconds
  and ``m`` batches, taking action rows from ``c`` on; answers the env steps delivered, the wall and CPU seconds
  (this process, every thread) and each batch's latency.
- ``{"cmd": "close"}``: close the pool and exit.

Each answer is one line; a failure answers ``{"ok": false, "error": "..."}``.
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
import time
from typing import Any

import numpy as np


class Pool:
    """An envpool batch driven with a pre-generated action table, sync or async."""

    def __init__(self, spec: dict[str, Any]) -> None:
        import envpool

        self.n = int(spec["n"])
        self.asynchronous = spec["mode"] == "async"
        num_envs = 2 * self.n if self.asynchronous else self.n
        self.env = envpool.make(
            spec["task"],
            env_type="gymnasium",
            num_envs=num_envs,
            batch_size=self.n,
            seed=int(spec["seed"]),
            **spec.get("kwargs", {}),
        )
        rng = np.random.default_rng(int(spec["action_seed"]))
        table = rng.integers(0, int(spec["actions"]), (int(spec["tape_length"]), self.n), dtype=np.int64)
        self.rows = [row.astype(np.int32) for row in table]
        self.reset()

    def reset(self) -> None:
        """Reset every env (async: the next ``recv`` returns the first observations)."""
        if self.asynchronous:
            self.env.async_reset()
        else:
            self.env.reset()

    def step(self, row: np.ndarray) -> int:
        if self.asynchronous:
            _, _, _, _, info = self.env.recv()
            self.env.send(row, info["env_id"])
            return self.n
        self.env.step(row)
        return self.n

    def window(self, seconds: float, min_batches: int, cursor: int) -> dict[str, Any]:
        rows, size, step = self.rows, len(self.rows), self.step
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
    pool: Pool | None = None
    for line in sys.stdin:
        command = json.loads(line)
        try:
            if command["cmd"] == "start":
                pool = Pool(command)
                answer: dict[str, Any] = {"ok": True, "version": importlib.metadata.version("envpool")}
            elif command["cmd"] == "window":
                if pool is None:
                    raise RuntimeError("window before start")
                answer = pool.window(float(command["seconds"]), int(command["min_batches"]), int(command["cursor"]))
            elif command["cmd"] == "reset":
                if pool is None:
                    raise RuntimeError("reset before start")
                pool.reset()
                answer = {"ok": True}
            elif command["cmd"] == "close":
                if pool is not None:
                    pool.env.close()
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
