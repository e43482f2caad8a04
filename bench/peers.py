"""Peers as contenders: each in a child process of its own venv (``bench/setup_<peer>.sh``), timing its own windows.

The project never imports envpool, tianshou or TorchRL: :class:`PeerContender` starts ``bench/peer_child.py`` with
the peer venv's python and sends it JSON commands. The child steps its batches in its own loop with the same
pre-generated action table as every other contender (``bench.contenders.ACTION_SEED``) and answers each window with
the env steps delivered, its wall time and its batches' latencies; the benchmark reads the CPU time of the child
and of its worker processes from ``/proc``.

| peer | venv | contenders (key: what) |
|---|---|---|
| envpool 1.2.5 | ``bench/.venv-envpool`` | ``envpool_sync``, ``envpool_async`` (2N envs, batches of N) |
| tianshou 2.0.1 | ``bench/.venv-tianshou`` | ``tianshou_shmem`` (``ShmemVectorEnv``), ``tianshou_subproc`` (Subproc) |
| TorchRL 0.14.1 | ``bench/.venv-torchrl`` | ``torchrl_parallel`` (``ParallelEnv``) |
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import subprocess
from typing import Any

import numpy as np

from bench.contenders import ACTION_SEED, CONTENDER_LABELS, TAPE_LENGTH, Contender, EnvCase
from ding.utils.measure import children_of

BENCH_DIR = pathlib.Path(__file__).resolve().parent
CHILD = BENCH_DIR / "peer_child.py"


@dataclasses.dataclass(frozen=True)
class PeerKind:
    """One contender a peer's venv drives: the peer, and the mode its pool is built in (``peer_pools.py``)."""

    peer: str
    mode: str
    options: tuple[tuple[str, Any], ...] = ()
    """Extra keyword arguments of the peer's pool (envpool's ``num_threads``)."""


PEER_KINDS = {
    "envpool_sync": PeerKind("envpool", "sync"),
    "envpool_sync_1t": PeerKind("envpool", "sync", (("num_threads", 1),)),  # on 2 cores the other is the caller's
    "envpool_async": PeerKind("envpool", "async"),
    "tianshou_shmem": PeerKind("tianshou", "shmem"),
    "tianshou_subproc": PeerKind("tianshou", "subproc"),
    "torchrl_parallel": PeerKind("torchrl", "parallel"),
}
"""Contender key (its label is ``CONTENDER_LABELS[key]``) → the peer and mode."""


def peer_python(peer: str) -> pathlib.Path | None:
    """The python of the peer's venv, or None when ``bench/setup_<peer>.sh`` has not been run."""
    python = BENCH_DIR / f".venv-{peer}" / "bin" / "python"
    return python if python.exists() else None


def envpool_python() -> pathlib.Path | None:
    """The envpool venv's python, or None when ``bench/setup_envpool.sh`` has not been run."""
    return peer_python("envpool")


def peer_env(case: EnvCase, peer: str) -> dict[str, Any] | None:
    """How the peer's child builds the case's env, or None when the peer has no face of it."""
    if peer == "envpool":
        return None if case.envpool is None else {"envpool_task": case.envpool.task, "kwargs": case.envpool.kwargs}
    return case.peer_env


class PeerContender(Contender):
    """A peer's vector env of N envs, in a child process of the peer's venv."""

    def __init__(self, case: EnvCase, n: int, key: str) -> None:
        super().__init__(case, n)
        self.kind = PEER_KINDS[key]
        self.key, self.label = key, CONTENDER_LABELS[key]
        self.proc: subprocess.Popen[str] | None = None
        self.version = ""

    def _ask(self, command: dict[str, Any]) -> dict[str, Any]:
        proc = self.proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            raise RuntimeError(f"the {self.kind.peer} child is not running")
        proc.stdin.write(json.dumps(command) + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.kind.peer} child exited (code {proc.poll()})")
        answer: dict[str, Any] = json.loads(line)
        if not answer.get("ok"):
            raise RuntimeError(f"{self.kind.peer} child: {answer.get('error')}")
        return answer

    def start(self) -> None:
        peer = self.kind.peer
        python, env = peer_python(peer), peer_env(self.case, peer)
        if python is None:
            raise RuntimeError(f"{peer} venv missing ({BENCH_DIR / f'.venv-{peer}'}); run bash bench/setup_{peer}.sh")
        if env is None:
            raise RuntimeError(f"{peer} has no face of {self.case.name}")
        if self.kind.options:
            env = {**env, "kwargs": {**env.get("kwargs", {}), **dict(self.kind.options)}}
        environ = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
        self.proc = subprocess.Popen(
            [str(python), "-I", str(CHILD)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=environ,
            cwd="/",
        )
        answer = self._ask(
            {
                "cmd": "start",
                "peer": peer,
                "mode": self.kind.mode,
                "env": env,
                "n": self.n,
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
        """The child and its worker processes (tianshou's and TorchRL's)."""
        if self.proc is None or self.proc.poll() is not None:
            return []
        return [self.proc.pid, *children_of(self.proc.pid)]
