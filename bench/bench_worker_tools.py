"""The `thread` manager against `subprocess` and `base`; spare envs against none: measured side by side.

Table (a): N envs stepped through each manager, on envs whose step releases the GIL (a 1 ms ``time.sleep``, the
stand-in for a C++/GPU simulator; MuJoCo Hopper, whose ``mj_step`` releases it) and on pure-Python CartPole, where
one thread runs at a time. Table (b): one env with a 50 ms reset (a sleep, as a reload from disk or a remote
simulator), played in a loop with ``spare_envs`` = 0, 1, 2, 4 spare instances; episode steps per second.

Contenders of one row are built together, warmed up, and their timed windows interleave (the order rotates each
repeat); cells show the median over repeats and the ratio to the row's reference (``base``; no spares).

Run from the project root::

    .venv/bin/python -m bench.bench_worker_tools --quick     # about 1 minute
    .venv/bin/python -m bench.bench_worker_tools             # about 3 minutes
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402  (the thread limits above must be set before numpy is imported)
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Mapping, Sequence  # noqa: E402
from functools import partial  # noqa: E402
from typing import Any, ClassVar, TypeVar  # noqa: E402

import numpy as np  # noqa: E402
from gymnasium import spaces  # noqa: E402

from bench.bench_managers import machine_lines  # noqa: E402
from bench.report import rate_text, table  # noqa: E402
from ding.envs import BaseEnv, BaseEnvTimestep, EnvSpaces, SpareEnvs  # noqa: E402
from ding.envs.env_manager import create_env_manager  # noqa: E402
from ding.utils.measure import (  # noqa: E402
    children_of,
    system_busy_seconds,
    tree_cpu_seconds,
)
from dizoo.classic_control.cartpole.envs import CartPoleEnv  # noqa: E402
from dizoo.mujoco.envs import MujocoEnv  # noqa: E402


class SleepyEnv(BaseEnv):
    """An env whose step and reset sleep (releasing the GIL); 4 float32 observations, ``episode_len`` steps."""

    config: ClassVar[dict[str, Any]] = {"step_seconds": 0.001, "reset_seconds": 0.0, "episode_len": 100}

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        return EnvSpaces(spaces.Box(-np.inf, np.inf, (4,), np.float32), spaces.Discrete(2))

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg)
        self._t = 0

    def reset(self) -> np.ndarray:
        time.sleep(self._cfg.reset_seconds)
        self._t = 0
        return np.zeros(4, np.float32)

    def step(self, action: Any) -> BaseEnvTimestep:
        time.sleep(self._cfg.step_seconds)
        self._t += 1
        done = self._t >= self._cfg.episode_len
        return BaseEnvTimestep(np.full(4, self._t, np.float32), np.ones(1, np.float32), done, {})

    def close(self) -> None:
        pass


class SlowResetCartPole(CartPoleEnv):
    """The dizoo CartPole whose reset first sleeps ``reset_seconds``."""

    def __init__(self, cfg: Mapping[str, Any] | None = None, reset_seconds: float = 0.05) -> None:
        super().__init__(cfg)
        self._reset_seconds = reset_seconds

    def reset(self) -> Any:
        time.sleep(self._reset_seconds)
        return super().reset()


MANAGER_ENVS: dict[str, tuple[str, Callable[[], Any]]] = {
    "sleep1ms": ("sleep 1 ms per step (GIL released)", partial(SleepyEnv, {"step_seconds": 0.001})),
    "hopper": ("MuJoCo Hopper-v5 (mj_step releases the GIL)", partial(MujocoEnv, cfg={"env_id": "Hopper-v5"})),
    "ant": ("MuJoCo Ant-v5 (heavier mj_step)", partial(MujocoEnv, cfg={"env_id": "Ant-v5"})),
    "cartpole": ("CartPole (pure Python)", partial(CartPoleEnv, cfg={})),
}
MANAGERS = ("base", "thread", "subprocess")
SPARE_ENVS: dict[str, tuple[str, Callable[[], Any]]] = {
    "sleep": (
        "100 steps of 0.5 ms (sleep), 50 ms reset",
        partial(SleepyEnv, {"step_seconds": 0.0005, "reset_seconds": 0.05, "episode_len": 100}),
    ),
    "cartpole": ("CartPole (µs steps, ~10-step random episodes), 50 ms reset", partial(SlowResetCartPole, {})),
}
SPARE_COUNTS = (0, 1, 2, 4)


class Stepper:
    """Something a timed window can drive: ``run(seconds)`` returns env steps done."""

    def run(self, seconds: float) -> int:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class ManagerStepper(Stepper):
    def __init__(self, manager_type: str, env_fn: Callable[[], Any], n: int) -> None:
        self.manager = create_env_manager({"type": manager_type}, [env_fn] * n)
        self.manager.seed(0)
        self.manager.launch()
        probe = env_fn()
        self.action_space = probe.action_space
        probe.close()
        self.action_space.seed(0)
        self.actions = [self._as_action(self.action_space.sample()) for _ in range(256)]

    @staticmethod
    def _as_action(sample: Any) -> np.ndarray:
        return np.asarray(sample).reshape(-1) if np.ndim(sample) else np.array([sample], np.int64)

    def run(self, seconds: float) -> int:
        steps, cursor, end = 0, 0, time.perf_counter() + seconds
        while time.perf_counter() < end:
            ready = self.manager.ready_obs
            actions = {i: self.actions[(cursor + i) % len(self.actions)] for i in ready}
            cursor += 1
            steps += len(self.manager.step(actions))
        return steps

    def close(self) -> None:
        self.manager.close()


class LoopStepper(Stepper):
    def __init__(self, env: BaseEnv) -> None:
        self.env = env
        self.env.seed(0)
        self.obs = self.env.reset()

    def run(self, seconds: float) -> int:
        steps, end = 0, time.perf_counter() + seconds
        while time.perf_counter() < end:
            if self.env.step(self.env.random_action()).done:
                self.obs = self.env.reset()
            steps += 1
        return steps

    def close(self) -> None:
        self.env.close()


Key = TypeVar("Key", str, int)


def own_cpu_seconds() -> float:
    """CPU seconds of this process (every thread) and of its worker processes."""
    return tree_cpu_seconds(children_of(os.getpid()))


def interleaved(steppers: Mapping[Key, Stepper], seconds: float, repeats: int) -> dict[Key, tuple[list[float], float]]:
    """Per contender: the steps/s of each repeat and the median background load (cores busy outside this process)."""
    for stepper in steppers.values():
        stepper.run(min(0.2, seconds))  # warm-up
    rates: dict[Key, list[float]] = {key: [] for key in steppers}
    loads: dict[Key, list[float]] = {key: [] for key in steppers}
    keys = list(steppers)
    for repeat in range(repeats):
        for key in keys[repeat % len(keys) :] + keys[: repeat % len(keys)]:
            busy0, cpu0, wall0 = system_busy_seconds(), own_cpu_seconds(), time.perf_counter()
            steps = steppers[key].run(seconds)
            wall = time.perf_counter() - wall0
            own = own_cpu_seconds() - cpu0
            rates[key].append(steps / wall)
            loads[key].append(max(0.0, (system_busy_seconds() - busy0 - own) / wall))
    return {key: (rates[key], statistics.median(loads[key])) for key in keys}


def cell(rates: list[float], reference: list[float]) -> str:
    median = statistics.median(rates)
    spread = (max(rates) - min(rates)) / 2 / median * 100 if median > 0 else 0.0
    return f"{rate_text(median)} ({median / statistics.median(reference):.2f}×) ±{spread:.0f}%"


def manager_table(envs: Sequence[str], n: int, seconds: float, repeats: int) -> str:
    rows = []
    for key in envs:
        label, env_fn = MANAGER_ENVS[key]
        print(f"(a) {key}: {', '.join(MANAGERS)} with {n} envs", file=sys.stderr)
        steppers = {kind: ManagerStepper(kind, env_fn, n) for kind in MANAGERS}
        try:
            found = interleaved(steppers, seconds, repeats)
        finally:
            for stepper in steppers.values():
                stepper.close()
        load = max(found[kind][1] for kind in MANAGERS)
        rows.append([label, *(cell(found[kind][0], found["base"][0]) for kind in MANAGERS), f"{load:.2f}"])
    return table(["env", *(f"`{kind}`" for kind in MANAGERS), "background cores"], rows)


def spare_table(envs: Sequence[str], seconds: float, repeats: int) -> str:
    rows = []
    for key in envs:
        label, env_fn = SPARE_ENVS[key]
        print(f"(b) {key}: spare_envs in {SPARE_COUNTS}", file=sys.stderr)
        steppers = {k: LoopStepper(SpareEnvs({"spare_envs": k}, env_fn=env_fn)) for k in SPARE_COUNTS}
        try:
            found = interleaved(steppers, seconds, repeats)
        finally:
            for stepper in steppers.values():
                stepper.close()
        load = max(found[k][1] for k in SPARE_COUNTS)
        rows.append([label, *(cell(found[k][0], found[0][0]) for k in SPARE_COUNTS), f"{load:.2f}"])
    return table(["env", *(f"spare_envs={k}" for k in SPARE_COUNTS), "background cores"], rows)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="3 repeats of 0.5 s windows (1 s in table b)")
    parser.add_argument("--n", type=int, default=4, help="envs per manager in table (a)")
    parser.add_argument("--repeats", type=int, default=None, help="timed windows per contender (default 5; quick 3)")
    parser.add_argument("--seconds", type=float, default=None, help="length of one window in table (a)")
    parser.add_argument("--envs", default=",".join(MANAGER_ENVS), help=f"table (a) envs among {list(MANAGER_ENVS)}")
    parser.add_argument("--spare-envs", default=",".join(SPARE_ENVS), help=f"table (b) envs among {list(SPARE_ENVS)}")
    parser.add_argument("--output", default=None, help="also write the report to this file")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 5)
    seconds = args.seconds or (0.5 if args.quick else 1.0)
    manager_envs = [name for name in args.envs.split(",") if name]
    spare_envs = [name for name in args.spare_envs.split(",") if name]
    for name in manager_envs:
        if name not in MANAGER_ENVS:
            raise SystemExit(f"--envs: unknown env {name!r}; choose among {list(MANAGER_ENVS)}")
    for name in spare_envs:
        if name not in SPARE_ENVS:
            raise SystemExit(f"--spare-envs: unknown env {name!r}; choose among {list(SPARE_ENVS)}")
    started = time.perf_counter()
    parts = [*machine_lines(), f"- {repeats} repeats; windows {seconds} s (a), {2 * seconds} s (b)", ""]
    if manager_envs:
        parts += [
            f"(a) {args.n} envs, steps/s (ratio to `base`)",
            "",
            manager_table(manager_envs, args.n, seconds, repeats),
        ]
    if spare_envs:
        parts += ["", "(b) one env in a loop, episode steps/s including resets (ratio to no spares)", ""]
        parts += [spare_table(spare_envs, 2 * seconds, repeats)]
    parts += ["", f"- total {time.perf_counter() - started:.0f} s"]
    report = "\n".join(parts)
    print(report)
    if args.output:
        with open(args.output, "w") as handle:
            handle.write(report + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
