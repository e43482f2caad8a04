"""envpool as a contender: a child process in envpool's own venv (``bench/setup_envpool.sh``) times its windows.

The project never imports envpool; :class:`EnvpoolContender` starts ``bench/envpool_child.py`` with the venv's
python and sends it JSON commands. The child steps its batches in its own loop with the same pre-generated
action table as every other contender (``bench.contenders.ACTION_SEED``) and answers each window with the env
steps delivered, its wall time and its batches' latencies; the benchmark reads the child's CPU time (every
thread) from ``/proc``.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
from typing import Any

import numpy as np

from bench.contenders import ACTION_SEED, CONTENDER_LABELS, TAPE_LENGTH, Contender, EnvCase

BENCH_DIR = pathlib.Path(__file__).resolve().parent
ENVPOOL_PYTHON = BENCH_DIR / ".venv-envpool" / "bin" / "python"
CHILD = BENCH_DIR / "envpool_child.py"
START_TIMEOUT = 120.0


def envpool_python() -> pathlib.Path | None:
    """The envpool venv's python, or None when ``bench/setup_envpool.sh`` has not been run."""
    return ENVPOOL_PYTHON if ENVPOOL_PYTHON.exists() else None


class EnvpoolContender(Contender):
    """envpool sync (``num_envs = batch_size = N``) or async (``num_envs = 2N``, batches of N), in its own process."""

    def __init__(self, case: EnvCase, n: int, asynchronous: bool, num_threads: int | None = None) -> None:
        super().__init__(case, n)
        self.asynchronous = asynchronous
        self.num_threads = num_threads
        """envpool's worker threads (None: its default, one per env up to the cores)."""
        self.key = "envpool_async" if asynchronous else "envpool_sync"
        if num_threads is not None:
            self.key += f"_{num_threads}t"
        self.label = CONTENDER_LABELS[self.key]
        self.proc: subprocess.Popen[str] | None = None
        self.version = ""

    def _ask(self, command: dict[str, Any]) -> dict[str, Any]:
        proc = self.proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            raise RuntimeError("the envpool child is not running")
        proc.stdin.write(json.dumps(command) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the envpool child exited (code {proc.poll()})")
        answer: dict[str, Any] = json.loads(line)
        if not answer.get("ok"):
            raise RuntimeError(f"envpool child: {answer.get('error')}")
        return answer

    def start(self) -> None:
        python, task = envpool_python(), self.case.envpool
        if python is None:
            raise RuntimeError(f"envpool venv missing ({ENVPOOL_PYTHON}); run bash bench/setup_envpool.sh")
        if task is None:
            raise RuntimeError(f"envpool has no task for {self.case.name}")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
        self.proc = subprocess.Popen(
            [str(python), "-I", str(CHILD)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd="/",
        )
        answer = self._ask(
            {
                "cmd": "start",
                "task": task.task,
                "kwargs": {**task.kwargs, **({} if self.num_threads is None else {"num_threads": self.num_threads})},
                "n": self.n,
                "mode": "async" if self.asynchronous else "sync",
                "actions": self.case.actions,
                "seed": 0,
                "action_seed": ACTION_SEED,
                "tape_length": TAPE_LENGTH,
            }
        )
        self.version = str(answer["version"])

    def timed_window(self, seconds: float, min_batches: int, cursor: int) -> tuple[int, float, list[float], int]:
        answer = self._ask({"cmd": "window", "seconds": seconds, "min_batches": min_batches, "cursor": cursor})
        return int(answer["steps"]), float(answer["seconds"]), list(answer["latencies"]), int(answer["cursor"])

    def step_batch(self, row: list[int], array: np.ndarray) -> int:
        steps, *_ = self.timed_window(0.0, 1, 0)
        return steps

    def reset_all(self) -> None:
        self._ask({"cmd": "reset"})

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            if proc.poll() is None and proc.stdin is not None:
                proc.stdin.write(json.dumps({"cmd": "close"}) + "\n")
                proc.stdin.flush()
            proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()

    def child_pids(self) -> list[int]:
        return [self.proc.pid] if self.proc is not None and self.proc.poll() is None else []
