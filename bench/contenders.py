"""The envs under test and the contenders that drive batches of them with pre-generated actions.

Every contender steps N copies of one env, one batch per call of :meth:`Contender.step_batch`, and
says how many env steps the call delivered. Raw loop and ding managers drive the ding env objects;
gymnasium's vector envs drive the gymnasium face of the same simulator (for CartPole, gymnasium's
own ``CartPole-v1``). Every vector env resets a finished episode within the same step.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import importlib.util
from abc import ABC, abstractmethod
from collections.abc import Callable
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np

from bench.envs import GymSyntheticEnv, SyntheticEnv
from ding.envs.env_manager import AsyncSubprocessEnvManager, SyncSubprocessEnvManager, create_env_manager
from ding.envs.env_manager.base_manager import BaseEnvManager
from dizoo.classic_control.cartpole.envs import CartPoleEnv

ACTION_SEED = 12345
TAPE_LENGTH = 4096


@dataclasses.dataclass(frozen=True)
class EnvpoolTask:
    """The same env in envpool: its task id and ``envpool.make`` keyword arguments."""

    task: str
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class EnvCase:
    """One env to benchmark: how to build its ding face and its gymnasium face (and its envpool task, if any)."""

    name: str
    label: str
    ding_fn: Callable[[], Any]
    gym_fn: Callable[[], gym.Env[Any, Any]]
    actions: int = 2
    envpool: EnvpoolTask | None = None
    peer_env: dict[str, Any] | None = None
    """How a peer's venv builds the env's gymnasium face (``bench/peer_pools.py``): ``{"gym_id": ...}`` or
    ``{"synthetic": cfg}``; None: the peers have no face of it."""


def synthetic_case(step_us: int, kind: str, reset_us: int = 0) -> EnvCase:
    cfg = {"step_cost_us": step_us, "reset_cost_us": reset_us, "obs_kind": kind, "episode_len": 100}
    short = "vec" if kind == "vector4" else "img"
    name = f"syn{step_us}-{short}" + (f"-reset{reset_us}" if reset_us else "")
    label = f"synthetic, {step_us} µs step, {'4 float32' if kind == 'vector4' else '4x84x84 image'} obs"
    if reset_us:
        label += f", {reset_us} µs reset"
    return EnvCase(
        name, label, partial(SyntheticEnv, cfg=cfg), partial(GymSyntheticEnv, cfg), peer_env={"synthetic": cfg}
    )


CARTPOLE = EnvCase(
    "cartpole",
    "CartPole-v1 (ding `cartpole`; gymnasium `CartPole-v1` for gymnasium contenders)",
    partial(CartPoleEnv, cfg={}),
    partial(gym.make, "CartPole-v1"),
    envpool=EnvpoolTask("CartPole-v1"),
    peer_env={"gym_id": "CartPole-v1"},
)

CASES: dict[str, EnvCase] = {
    case.name: case
    for case in [CARTPOLE] + [synthetic_case(us, kind) for kind in ("vector4", "image") for us in (0, 100, 1000)]
}


@dataclasses.dataclass(frozen=True)
class ActionTape:
    """Pre-generated actions: one row per batch, as Python ints and as an int64 array."""

    rows: list[list[int]]
    arrays: list[np.ndarray]

    @classmethod
    def make(cls, n: int, length: int = TAPE_LENGTH, actions: int = 2) -> ActionTape:
        table = np.random.default_rng(ACTION_SEED).integers(0, actions, (length, n), dtype=np.int64)
        return cls([[int(a) for a in row] for row in table], [row.copy() for row in table])


class Contender(ABC):
    """A way of stepping N envs in batches."""

    key = ""
    label = ""

    def __init__(self, case: EnvCase, n: int) -> None:
        self.case = case
        self.n = n
        self.anomalies: list[str] = []

    @abstractmethod
    def start(self) -> None:
        """Construct, launch and reset: afterwards the first batch can be stepped."""

    @abstractmethod
    def step_batch(self, row: list[int], array: np.ndarray) -> int:
        """Step one batch with these actions; return the env steps delivered."""

    @abstractmethod
    def reset_all(self) -> None:
        """Reset every env."""

    @abstractmethod
    def close(self) -> None:
        """Release everything."""

    def child_pids(self) -> list[int]:
        """Worker processes whose CPU time belongs to this contender."""
        return []

    def timed_window(self, seconds: float, min_batches: int, cursor: int) -> tuple[int, float, list[float], int] | None:
        """A contender that times its windows itself (in its own process) runs one here: it returns the env steps
        delivered, the wall seconds, each batch's latency and the next cursor. None: the benchmark times
        :meth:`step_batch` calls."""
        return None

    def end_window(self) -> None:
        """Check bookkeeping after a timed window (contenders record anomalies here)."""
        return None


class RawLoop(Contender):
    key = "raw"
    label = "raw loop (ding env objects, in-process)"

    def start(self) -> None:
        self.envs = [self.case.ding_fn() for _ in range(self.n)]
        for i, env in enumerate(self.envs):
            env.seed(i)
        self.reset_all()

    def step_batch(self, row: list[int], array: np.ndarray) -> int:
        for env, action in zip(self.envs, row, strict=True):
            if env.step(action).done:
                env.reset()
        return self.n

    def reset_all(self) -> None:
        for env in self.envs:
            env.reset()

    def close(self) -> None:
        for env in getattr(self, "envs", []):
            env.close()


class GymVector(Contender):
    """gymnasium's SyncVectorEnv or AsyncVectorEnv(shared_memory=True), same-step autoreset."""

    def __init__(self, case: EnvCase, n: int, asynchronous: bool) -> None:
        super().__init__(case, n)
        self.asynchronous = asynchronous
        self.key = "gym_async" if asynchronous else "gym_sync"
        self.label = "gymnasium AsyncVectorEnv(shared_memory=True)" if asynchronous else "gymnasium SyncVectorEnv"
        self.envs: gym.vector.VectorEnv[Any, Any, Any] | None = None

    def start(self) -> None:
        fns = [self.case.gym_fn for _ in range(self.n)]
        mode = gym.vector.AutoresetMode.SAME_STEP
        if self.asynchronous:
            self.envs = gym.vector.AsyncVectorEnv(fns, shared_memory=True, autoreset_mode=mode)
        else:
            self.envs = gym.vector.SyncVectorEnv(fns, autoreset_mode=mode)
        self.envs.reset(seed=0)

    def step_batch(self, row: list[int], array: np.ndarray) -> int:
        assert self.envs is not None
        self.envs.step(array)
        return self.n

    def reset_all(self) -> None:
        assert self.envs is not None
        self.envs.reset()

    def close(self) -> None:
        if self.envs is not None:
            self.envs.close()
            self.envs = None

    def child_pids(self) -> list[int]:
        processes = getattr(self.envs, "processes", [])
        return [p.pid for p in processes if p.pid is not None]


class DingManager(Contender):
    """A ding env manager built by ``create_env_manager``; steps every ready env each call."""

    def __init__(
        self, case: EnvCase, n: int, key: str, label: str, cfg: dict[str, Any], envs: int | None = None
    ) -> None:
        super().__init__(case, n)
        self.key, self.label, self.cfg = key, label, cfg
        self.envs = n if envs is None else envs  # envs in the manager (more than n: each step takes the ready ones)
        self.manager: BaseEnvManager | None = None
        self.dispatched = 0
        self.delivered = 0
        self.abnormal = 0

    def start(self) -> None:
        self.manager = create_env_manager(self.cfg, [self.case.ding_fn for _ in range(self.envs)])
        self.manager.seed(0)
        self.manager.launch()

    def step_batch(self, row: list[int], array: np.ndarray) -> int:
        manager = self.manager
        assert manager is not None
        actions = {i: row[i % self.n] for i in manager.ready_obs}
        timesteps = manager.step(actions)
        self.dispatched += len(actions)
        self.delivered += len(timesteps)
        for timestep in timesteps.values():
            if timestep.info and timestep.info.get("abnormal"):
                self.abnormal += 1
        return len(timesteps)

    def reset_all(self) -> None:
        assert self.manager is not None
        self.manager.reset()

    def close(self) -> None:
        if self.manager is not None:
            self.manager.close()
            self.manager = None

    def child_pids(self) -> list[int]:
        if isinstance(self.manager, SyncSubprocessEnvManager):
            return [pid for pid in self.manager.worker_pids if pid is not None]
        return []

    def end_window(self) -> None:
        manager = self.manager
        assert manager is not None
        in_flight = len(manager.in_flight_env_ids) if isinstance(manager, AsyncSubprocessEnvManager) else 0
        if getattr(manager, "partial_batches", False):  # steps stay in the pool; resets are in flight too
            in_flight = self.dispatched - self.delivered
            if not 0 <= in_flight <= self.envs:
                self.anomalies.append(f"dispatched {self.dispatched} env steps, delivered {self.delivered}")
        elif self.dispatched != self.delivered + in_flight:
            self.anomalies.append(
                f"dispatched {self.dispatched} env steps, delivered {self.delivered}, {in_flight} in flight"
            )
        if self.abnormal:
            self.anomalies.append(f"{self.abnormal} abnormal timesteps")
        self.dispatched, self.delivered, self.abnormal = in_flight, 0, 0


class DingBatch(DingManager):
    """A ding manager driven through ``step_batch``: one action array in, stacked results out."""

    def step_batch(self, row: list[int], array: np.ndarray) -> int:
        manager = self.manager
        assert manager is not None
        batch = manager.step_batch(array)
        self.dispatched += self.n
        self.delivered += len(batch.done)
        for row in np.flatnonzero(batch.done).tolist():  # an abnormal step ends its episode: other infos go unread
            if batch.info[row].get("abnormal"):
                self.abnormal += 1
        return len(batch.done)


class DingSendRecv(DingManager):
    """A ding manager driven through ``send`` / ``recv`` with two batches in flight, so one batch steps while the
    caller handles the other: N envs in batches of N/2, or (``double``) 2N envs in batches of N as envpool async."""

    def __init__(self, case: EnvCase, n: int, key: str, label: str, cfg: dict[str, Any], double: bool = False) -> None:
        super().__init__(case, n, key, label, {**cfg, "batch_size": n if double else max(1, n // 2)})
        self.envs = 2 * n if double else n
        self.ids = np.arange(0)

    def start(self) -> None:
        self.manager = create_env_manager(self.cfg, [self.case.ding_fn for _ in range(self.envs)])
        self.manager.seed(0)
        self._first_batch()

    def _first_batch(self) -> None:
        assert self.manager is not None
        self.manager.async_reset()
        self.ids = self.manager.recv().env_ids
        self.dispatched = self.envs - len(self.ids)  # first observations still to come count as in flight

    def step_batch(self, row: list[int], array: np.ndarray) -> int:
        manager = self.manager
        assert manager is not None
        manager.send(array[self.ids % self.n], self.ids)
        self.dispatched += len(self.ids)
        batch = manager.recv()
        self.ids = batch.env_ids
        self.delivered += len(self.ids)
        for row in np.flatnonzero(batch.done).tolist():  # an abnormal step ends its episode: other infos go unread
            if batch.info[row].get("abnormal"):
                self.abnormal += 1
        return len(self.ids)

    def reset_all(self) -> None:
        manager = self.manager
        assert manager is not None
        pending = self.envs - len(self.ids)  # the envs of the other batch are in flight
        while pending > 0:
            pending -= len(manager.recv().env_ids)
        self._first_batch()

    def end_window(self) -> None:
        in_flight = self.envs - len(self.ids)  # envs sent and not received: the batch not returned last
        if self.dispatched != self.delivered + in_flight:
            self.anomalies.append(
                f"dispatched {self.dispatched} env steps, delivered {self.delivered}, {in_flight} in flight"
            )
        if self.abnormal:
            self.anomalies.append(f"{self.abnormal} abnormal timesteps")
        self.dispatched, self.delivered, self.abnormal = in_flight, 0, 0


def start_local_ray() -> None:
    """One local Ray for the whole benchmark (its start-up is not a manager's), with every core of the machine."""
    import os

    import ray

    if not ray.is_initialized():
        ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False)


class DingRay(DingManager):
    """The ray manager on the benchmark's local Ray (the manager joins it and leaves it running)."""

    def start(self) -> None:
        start_local_ray()
        super().start()


class DingRayBatch(DingBatch):
    """The ray manager on the benchmark's local Ray, driven through ``step_batch``."""

    def start(self) -> None:
        start_local_ray()
        super().start()


CONTENDER_LABELS: dict[str, str] = {
    "raw": RawLoop.label,
    "gym_sync": "gymnasium SyncVectorEnv",
    "gym_async": "gymnasium AsyncVectorEnv(shared_memory=True)",
    "base": "ding base (serial)",
    "subprocess_1": "ding subprocess, 1 env/worker",
    "subprocess_1_batch": "ding subprocess, 1 env/worker, step_batch()",
    "subprocess_k": "ding subprocess, k=N/2 envs/worker",
    "subprocess_k_batch": "ding subprocess, k=N/2 envs/worker, step_batch()",
    "in_caller": "ding subprocess, 2 groups of N/2, the caller steps one (step_in_caller)",
    "in_caller_batch": "ding subprocess, 2 groups of N/2, the caller steps one (step_in_caller), step_batch()",
    "in_caller_batch_pinned": (
        "ding subprocess, 2 groups of N/2, the caller steps one (step_in_caller), step_batch(), cpu_affinity='auto'"
    ),
    "async": "ding async_subprocess (defaults)",
    "base_sendrecv": "ding base, send/recv: N envs, batches of N/2",
    "subprocess_1_sendrecv": "ding subprocess, 1 env/worker, send/recv: N envs, batches of N/2",
    "subprocess_k_sendrecv": "ding subprocess, k=N/2 envs/worker, send/recv: N envs, batches of N/2",
    "subprocess_2n_sendrecv": "ding subprocess, N envs/worker, send/recv: 2N envs, batches of N (as envpool async)",
    "zmq_ipc_k_sendrecv": "ding zmq over ipc, k=N/2 envs/worker, send/recv: N envs, batches of N/2",
    "zmq_ipc_1": "ding zmq over ipc, 1 env/worker",
    "zmq_ipc_k": "ding zmq over ipc, k=N/2 envs/worker",
    "zmq_ipc_k_batch": "ding zmq over ipc, k=N/2 envs/worker, step_batch()",
    "zmq_tcp_k": "ding zmq over tcp loopback, data in messages (as remote), k=N/2 envs/worker",
    "ray_k": "ding ray (Ray calls), k=N/2 envs/actor",
    "ray_k_batch": "ding ray (Ray calls), k=N/2 envs/actor, step_batch()",
    "ray_zmq_k": "ding ray (zmq transport), k=N/2 envs/actor",
    "ray_zmq_k_batch": "ding ray (zmq transport), k=N/2 envs/actor, step_batch()",
    "ray_shm_k": "ding ray (shm transport), k=N/2 envs/actor",
    "ray_shm_k_batch": "ding ray (shm transport), k=N/2 envs/actor, step_batch()",
    "envpool_manager": "ding envpool manager (an envpool pool behind the manager API)",
    "envpool_manager_batch": "ding envpool manager, step_batch()",
    "envpool_manager_batch_1t": "ding envpool manager, step_batch(), num_threads=1",
    "envpool_manager_2n": "ding envpool manager, 2N envs, pool batches of N (as envpool async), step()",
    "envpool_manager_2n_sendrecv": "ding envpool manager, 2N envs, pool batches of N (as envpool async), send/recv",
    "envpool_sync": "envpool 1.2.5 sync (own venv and process)",
    "envpool_sync_1t": "envpool 1.2.5 sync, num_threads=1 (own venv and process)",
    "envpool_async": "envpool 1.2.5 async, 2N envs, batches of N (own venv and process)",
    "tianshou_shmem": "tianshou 2.0.1 ShmemVectorEnv (own venv and process)",
    "tianshou_subproc": "tianshou 2.0.1 SubprocVectorEnv (own venv and process)",
    "torchrl_parallel": "TorchRL 0.14.1 ParallelEnv (own venv and process)",
}


def package_version(distribution: str) -> str | None:
    """The installed version of a distribution, or None when it is not installed."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
