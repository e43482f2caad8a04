"""Fault measurements: a SIGKILLed worker, a hung worker, and what is left after ``kill -9`` of a parent.

Killed worker: a timer thread SIGKILLs worker 0 while the parent steps; the time counted runs from the
kill to the return of the ``step`` call that delivers the abnormal timestep (it includes the worker
restart the manager performs before returning). Hung worker: env 0 never returns from its k-th step;
the time runs from the dispatch of that step to the return of its abnormal timestep.

Leftovers: a child Python process runs a manager and steps; it is SIGKILLed, and 2 s later the
processes that were its children and still live are counted, with ``/dev/shm`` entries named after it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from functools import partial
from typing import Any

import numpy as np

from bench.envs import GymSyntheticEnv, SyntheticEnv
from bench.measure import is_alive, process_state, shm_entries
from ding.envs.env_manager import SyncSubprocessEnvManager, create_env_manager
from ding.utils.measure import children_of

FAULT_ENV_CFG: dict[str, Any] = {"step_cost_us": 1000, "obs_kind": "vector4", "episode_len": 100}
FAULT_ENVS = 4
STEP_TIMEOUT = 0.5
HANG_AT_STEP = 30
KILL_AFTER = 0.1
ORPHAN_GRACE = 2.0
CHILD_LIFETIME = 60.0
"""A leftover-test child stops by itself after this many seconds, should nobody kill it."""

FAULT_MANAGERS: dict[str, tuple[dict[str, Any], bool]] = {
    "ding subprocess, 1 env/worker": ({"type": "subprocess"}, False),
    "ding subprocess, 1 env/worker, step_batch()": ({"type": "subprocess"}, True),
    "ding subprocess, 2 envs/worker": ({"type": "subprocess", "envs_per_worker": 2}, False),
    "ding subprocess, 2 envs/worker, step_batch()": ({"type": "subprocess", "envs_per_worker": 2}, True),
    "ding async_subprocess": ({"type": "async_subprocess"}, False),
    "ding zmq over ipc, 2 envs/worker": ({"type": "zmq", "envs_per_worker": 2}, False),
}
"""Managers under fault tests: config, and whether they are driven through ``step_batch``."""
if importlib.util.find_spec("ray") is not None:  # Ray restarts the actor: its restart is in the time counted
    FAULT_MANAGERS["ding ray (shm transport), 2 envs/actor"] = (
        {"type": "ray", "transport": "shm", "envs_per_worker": 2},
        False,
    )


@dataclasses.dataclass
class FaultResult:
    """One fault trial: detection time, which envs ended abnormally, and whether stepping went on."""

    manager: str
    seconds: float | None
    abnormal_envs: list[int]
    recovered: bool
    note: str = ""


def _manager(cfg: dict[str, Any], hang_env0: bool) -> SyncSubprocessEnvManager:
    fns = []
    for env_id in range(FAULT_ENVS):
        env_cfg = dict(FAULT_ENV_CFG)
        if hang_env0 and env_id == 0:
            env_cfg["hang_at_step"] = HANG_AT_STEP
        fns.append(partial(SyntheticEnv, cfg=env_cfg))
    if cfg["type"] == "ray":
        from bench.contenders import start_local_ray

        start_local_ray()
    manager = create_env_manager({**cfg, "step_timeout": STEP_TIMEOUT, "reset_timeout": 10.0}, fns)
    assert isinstance(manager, SyncSubprocessEnvManager)
    manager.seed(0)
    manager.launch()
    return manager


def _step_ready(manager: SyncSubprocessEnvManager, sent_at: dict[int, float], batch: bool) -> tuple[list[int], float]:
    """Step every ready env (all of them with ``batch``); return the abnormal env ids and the return time."""
    ids = list(range(FAULT_ENVS)) if batch else manager.ready_obs_id
    now = time.perf_counter()
    for env_id in ids:
        sent_at[env_id] = now
    if batch:
        infos = dict(enumerate(manager.step_batch(np.ones(FAULT_ENVS, dtype=np.int64)).info))
    else:
        infos = {i: ts.info for i, ts in manager.step({i: 1 for i in ids}).items()}
    return sorted(i for i, info in infos.items() if info.get("abnormal")), time.perf_counter()


def _keep_stepping(manager: SyncSubprocessEnvManager, batches: int, batch: bool) -> bool:
    """Step ``batches`` more calls; True when every delivered timestep is normal."""
    sent_at: dict[int, float] = {}
    return not any(_step_ready(manager, sent_at, batch)[0] for _ in range(batches))


def killed_worker_trial(name: str, cfg: dict[str, Any], batch: bool, budget: float = 10.0) -> FaultResult:
    """SIGKILL worker 0 mid-run; time until ``step`` returns its abnormal timestep."""
    manager = _manager(cfg, hang_env0=False)
    try:
        victim = manager.worker_pids[0]
        assert victim is not None
        killed_at: list[float] = []

        def kill() -> None:
            killed_at.append(time.perf_counter())
            os.kill(victim, signal.SIGKILL)

        timer = threading.Timer(KILL_AFTER, kill)
        sent_at: dict[int, float] = {}
        start = time.perf_counter()
        timer.start()
        while time.perf_counter() - start < budget:
            abnormal, returned = _step_ready(manager, sent_at, batch)
            if abnormal:
                timer.join()
                if not killed_at or returned < killed_at[0]:
                    return FaultResult(name, None, abnormal, False, "abnormal timestep before the kill")
                note = "" if victim not in manager.worker_pids else "worker pid unchanged after the fault"
                return FaultResult(name, returned - killed_at[0], abnormal, _keep_stepping(manager, 20, batch), note)
        timer.cancel()
        return FaultResult(name, None, [], False, f"no abnormal timestep within {budget} s of stepping")
    finally:
        manager.close()


def hung_worker_trial(name: str, cfg: dict[str, Any], batch: bool, budget: float = 10.0) -> FaultResult:
    """Env 0 hangs at its ``HANG_AT_STEP``-th step; time from that dispatch to its abnormal timestep."""
    manager = _manager(cfg, hang_env0=True)
    try:
        sent_at: dict[int, float] = {}
        start = time.perf_counter()
        while time.perf_counter() - start < budget:
            abnormal, returned = _step_ready(manager, sent_at, batch)
            if abnormal:
                note = "" if 0 in abnormal else "env 0 (the hung one) is not among the abnormal envs"
                return FaultResult(name, returned - sent_at[0], abnormal, _keep_stepping(manager, 5, batch), note)
        return FaultResult(name, None, [], False, f"no abnormal timestep within {budget} s of stepping")
    finally:
        manager.close()


# ----- leftovers after kill -9 of the parent ------------------------------------------------------
LEFTOVER_SUBJECTS: dict[str, str] = {
    "ding subprocess, 1 env/worker": "subprocess:1",
    "ding subprocess, 2 envs/worker": "subprocess:2",
    "ding async_subprocess": "async_subprocess:1",
    "ding zmq over ipc, 2 envs/worker": "zmq:2",
    "gymnasium AsyncVectorEnv(shared_memory=True)": "gym_async:1",
}


def orphan_child_main(spec: str) -> None:
    """Body of the leftover-test child: build the named contender, report its pids, then step until killed."""
    kind, per_worker = spec.split(":")
    fns = [partial(SyntheticEnv, cfg={"step_cost_us": 100}) for _ in range(FAULT_ENVS)]
    deadline = time.monotonic() + CHILD_LIFETIME
    if kind == "gym_async":
        import gymnasium as gym

        envs = gym.vector.AsyncVectorEnv(
            [partial(GymSyntheticEnv, {"step_cost_us": 100}) for _ in range(FAULT_ENVS)],
            shared_memory=True,
            autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
        )
        envs.reset(seed=0)
        print(json.dumps({"pid": os.getpid(), "workers": [p.pid for p in envs.processes]}), flush=True)
        actions = envs.action_space.sample()
        while time.monotonic() < deadline:
            envs.step(actions)
        envs.close()
        return
    manager = create_env_manager({"type": kind, "envs_per_worker": int(per_worker)}, fns)
    assert isinstance(manager, SyncSubprocessEnvManager)
    manager.launch()
    print(json.dumps({"pid": os.getpid(), "workers": manager.worker_pids}), flush=True)
    while time.monotonic() < deadline:
        ready = manager.ready_obs_id
        manager.step({i: 0 for i in ready})
    manager.close()


@dataclasses.dataclass
class LeftoverResult:
    """What outlived a SIGKILLed parent by ``ORPHAN_GRACE`` seconds."""

    subject: str
    children: int
    alive: int
    zombies: int
    shm_during: int
    shm_left: list[str]
    note: str = ""


def leftover_trial(subject: str, spec: str, project_root: str) -> LeftoverResult:
    """Run ``spec`` in a child process, SIGKILL the child mid-run, and count what is left 2 s later."""
    child = subprocess.Popen(
        [sys.executable, "-m", "bench.bench_managers", "--orphan-child", spec],
        cwd=project_root,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": project_root},
    )
    assert child.stdout is not None
    try:
        ready, _, _ = select.select([child.stdout], [], [], 60.0)
        line = child.stdout.readline() if ready else b""
        if not line:
            return LeftoverResult(subject, 0, 0, 0, 0, [], "child did not report ready within 60 s")
        info = json.loads(line)
        time.sleep(0.2)  # let it step for a while
        prefixes = [f"ding_{child.pid}_", f"pym-{child.pid}-"]
        shm_during = len(shm_entries(prefixes))
        children = children_of(child.pid)
        missing = sorted(set(p for p in info["workers"] if p is not None) - set(children))
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        time.sleep(ORPHAN_GRACE)
        alive = [pid for pid in children if is_alive(pid)]
        zombies = [pid for pid in children if process_state(pid) == "Z"]
        note = f"workers {missing} were not children of the parent" if missing else ""
        for pid in alive:  # clean up after counting
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        return LeftoverResult(subject, len(children), len(alive), len(zombies), shm_during, shm_entries(prefixes), note)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
