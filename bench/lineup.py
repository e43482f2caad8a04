"""The benchmark's line-up: every contender that applies to a case, and the peers it does not drive here."""

from __future__ import annotations

import importlib.util
import pathlib

from bench.contenders import (
    CONTENDER_LABELS,
    Contender,
    DingBatch,
    DingManager,
    DingRay,
    DingRayBatch,
    DingSendRecv,
    EnvCase,
    GymVector,
    RawLoop,
    package_version,
)
from bench.peers import PEER_KINDS, PeerContender, peer_env, peer_python


def make_contenders(case: EnvCase, n: int, keys: list[str] | None = None) -> list[Contender]:
    """Every applicable contender for ``n`` envs (``subprocess_k`` needs ``n // 2 > 1``), filtered by ``keys``."""
    found: list[Contender] = [
        RawLoop(case, n),
        GymVector(case, n, asynchronous=False),
        GymVector(case, n, asynchronous=True),
        DingManager(case, n, "base", "ding base (serial)", {"type": "base"}),
        DingManager(case, n, "subprocess_1", CONTENDER_LABELS["subprocess_1"], {"type": "subprocess"}),
        DingBatch(case, n, "subprocess_1_batch", CONTENDER_LABELS["subprocess_1_batch"], {"type": "subprocess"}),
    ]
    if n // 2 > 1:
        cfg = {"type": "subprocess", "envs_per_worker": n // 2}
        found.append(DingManager(case, n, "subprocess_k", CONTENDER_LABELS["subprocess_k"], cfg))
        found.append(DingBatch(case, n, "subprocess_k_batch", CONTENDER_LABELS["subprocess_k_batch"], cfg))
        found.append(DingSendRecv(case, n, "subprocess_k_sendrecv", CONTENDER_LABELS["subprocess_k_sendrecv"], cfg))
        double = {"type": "subprocess", "envs_per_worker": n}
        key = "subprocess_2n_sendrecv"
        found.append(DingSendRecv(case, n, key, CONTENDER_LABELS[key], double, double=True))
        zmq = {"type": "zmq", "envs_per_worker": n // 2}
        found.append(DingSendRecv(case, n, "zmq_ipc_k_sendrecv", CONTENDER_LABELS["zmq_ipc_k_sendrecv"], zmq))
    if n >= 2:
        cfg = {"type": "subprocess", "envs_per_worker": n // 2, "step_in_caller": True}
        found.append(DingManager(case, n, "in_caller", CONTENDER_LABELS["in_caller"], cfg))
        found.append(DingBatch(case, n, "in_caller_batch", CONTENDER_LABELS["in_caller_batch"], cfg))
        key = "in_caller_batch_pinned"  # the worker on a core of its own (cpu_affinity)
        found.append(DingBatch(case, n, key, CONTENDER_LABELS[key], {**cfg, "cpu_affinity": "auto"}))
        cfg = {"type": "subprocess"}
        found.append(DingSendRecv(case, n, "subprocess_1_sendrecv", CONTENDER_LABELS["subprocess_1_sendrecv"], cfg))
        found.append(DingSendRecv(case, n, "base_sendrecv", CONTENDER_LABELS["base_sendrecv"], {"type": "base"}))
    found.append(DingManager(case, n, "async", "ding async_subprocess (defaults)", {"type": "async_subprocess"}))
    found.append(DingManager(case, n, "zmq_ipc_1", CONTENDER_LABELS["zmq_ipc_1"], {"type": "zmq"}))
    if n // 2 > 1:
        for key, endpoint, shared in (("zmq_ipc_k", "ipc", None), ("zmq_tcp_k", "tcp", False)):
            cfg = {"type": "zmq", "endpoint": endpoint, "envs_per_worker": n // 2, "shared_memory": shared}
            found.append(DingManager(case, n, key, CONTENDER_LABELS[key], cfg))
        cfg = {"type": "zmq", "envs_per_worker": n // 2}
        found.append(DingBatch(case, n, "zmq_ipc_k_batch", CONTENDER_LABELS["zmq_ipc_k_batch"], cfg))
    if n // 2 > 1 and importlib.util.find_spec("ray") is not None:
        for transport, suffix in (("ray", ""), ("zmq", "_zmq"), ("shm", "_shm")):
            cfg = {"type": "ray", "transport": transport, "envs_per_worker": n // 2}
            key = f"ray{suffix}_k"
            found.append(DingRay(case, n, key, CONTENDER_LABELS[key], cfg))
            found.append(DingRayBatch(case, n, f"{key}_batch", CONTENDER_LABELS[f"{key}_batch"], cfg))
    if case.envpool is not None and importlib.util.find_spec("envpool") is not None:
        cfg = {"type": "envpool", "env_id": case.envpool.task, "options": dict(case.envpool.kwargs)}
        found.append(DingManager(case, n, "envpool_manager", CONTENDER_LABELS["envpool_manager"], cfg))
        found.append(DingBatch(case, n, "envpool_manager_batch", CONTENDER_LABELS["envpool_manager_batch"], cfg))
        key = "envpool_manager_batch_1t"  # one C++ thread: on 2 cores the other is the caller's
        found.append(DingBatch(case, n, key, CONTENDER_LABELS[key], {**cfg, "num_threads": 1}))
        key = "envpool_manager_2n"  # the pool asynchronous, as envpool async: 2N envs, batches of N
        pool = {**cfg, "options": {**cfg["options"], "batch_size": n}}
        found.append(DingManager(case, n, key, CONTENDER_LABELS[key], pool, envs=2 * n))
        key = "envpool_manager_2n_sendrecv"  # the same through send / recv: envpool's own asynchronous loop
        found.append(DingSendRecv(case, n, key, CONTENDER_LABELS[key], pool, double=True))
    for key, kind in PEER_KINDS.items():  # a peer whose venv is missing is listed by absent_contenders
        if peer_env(case, kind.peer) is not None and peer_python(kind.peer) is not None:
            found.append(PeerContender(case, n, key))
    return [c for c in found if keys is None or c.key in keys]


ABSENT_PACKAGES = {
    "envpool": "envpool",
    "tianshou 2.0.1 Shmem/SubprocVectorEnv": "tianshou",
    "TorchRL 0.14.1 ParallelEnv": "torchrl",
    "DI-engine 0.5.3": "DI-engine",
    "stable-baselines3 SubprocVecEnv": "stable-baselines3",
}
VENV_PEERS = ("envpool", "tianshou", "torchrl")
"""Peers driven from a venv of their own (``bench/setup_<peer>.sh``)."""


def absent_contenders() -> dict[str, str]:
    """Peers named by the benchmark plan and not driven in this process, with their status here.

    envpool, tianshou and TorchRL are driven from their own venvs (``bench/setup_<peer>.sh``) when those exist, so
    they are not listed then; without the venv the line says which script makes it.
    """
    out = {}
    for label, dist in ABSENT_PACKAGES.items():
        if dist in VENV_PEERS:
            if peer_python(dist) is None:
                out[label] = f"not installed: its venv bench/.venv-{dist} is missing (bash bench/setup_{dist}.sh)"
            continue
        version = package_version(dist)
        module = dist.replace("-", "_").lower()
        if version is None and dist != "DI-engine" and importlib.util.find_spec(module) is not None:
            version = "importable"
        if version is None and dist == "DI-engine" and (pathlib.Path(__file__).parent / ".venv-di-engine").is_dir():
            version = "bench/.venv-di-engine, which bench_training and bench_memory use"
        out[label] = "not installed" if version is None else f"installed ({version}), not driven by this benchmark"
    return out
