"""Fault soaks of every manager kind: worker kills, hangs and env exceptions on a fixed schedule (:mod:`.soak`).

Every delivered step must be the next one of its env's episode, or its abnormal end; nothing lost or delivered
twice; and after ``close`` no worker process, no child process and no shared-memory segment is left. The short
soak (a few seconds a kind, a fault every ~40 steps of each env) runs by default; the long one (2,500 batches of
8 envs, a fault every ~250 steps of each env, over a hundred a kind) with ``-m slow``. Ray's long soak runs 4 envs
with a fault every ~500 steps, as an actor restart costs seconds. The sizes keep the whole slow suite within its
half-hour budget on two cores; a longer soak is ``soak(kind, batches=10_000, period=500)`` from a shell.
"""

from __future__ import annotations

import pytest

from tests.envs.env_manager.soak import SoakKind, SoakResult, soak

KINDS: dict[str, SoakKind] = {
    "base": SoakKind({"type": "base"}),
    "subprocess-1": SoakKind({"type": "subprocess", "envs_per_worker": 1}),
    "subprocess-4": SoakKind({"type": "subprocess", "envs_per_worker": 4}, api="step_batch", env_num=8),
    "step_in_caller": SoakKind({"type": "subprocess", "envs_per_worker": 2, "step_in_caller": True}),
    "spare_envs": SoakKind({"type": "subprocess", "envs_per_worker": 1}, spare_envs=1),
    "no_shared_memory": SoakKind({"type": "subprocess", "envs_per_worker": 2, "shared_memory": False}),
    "send_recv": SoakKind({"type": "subprocess", "envs_per_worker": 1, "batch_size": 2}, api="send_recv"),
    "subprocess_v2": SoakKind({"type": "subprocess_v2", "envs_per_worker": 1}, api="v2"),
    "async_subprocess": SoakKind({"type": "async_subprocess", "wait_num": 2, "step_wait_timeout": 0.01}),
    "thread": SoakKind({"type": "thread", "envs_per_worker": 2}),
    "zmq": SoakKind({"type": "zmq", "envs_per_worker": 2}),
    "zmq_rows": SoakKind({"type": "zmq", "envs_per_worker": 1, "endpoint": "tcp", "shared_memory": False}),
}
RAY_KINDS: dict[str, SoakKind] = {
    "ray_shm": SoakKind({"type": "ray", "transport": "shm", "envs_per_worker": 2}),
}


LONG_BATCHES = 2_500
LONG_PERIOD = 250
"""The long soak: batches, and steps of each env between its faults."""


def check(result: SoakResult, batches: int) -> None:
    ledger = result.ledger
    assert ledger.violations == [], ledger.violations[:10]
    assert ledger.lost() == [], f"steps lost: envs {ledger.lost()}"
    assert ledger.delivered_steps >= batches, ledger.delivered_steps
    assert ledger.abnormal > 0  # the faults fired
    assert result.left_processes == [], f"processes left: {result.left_processes}"
    assert result.left_segments == [], f"shared memory left: {result.left_segments}"


@pytest.mark.parametrize("name", list(KINDS))
def test_a_short_fault_soak_delivers_every_step_once_and_leaves_nothing(name: str) -> None:
    batches = 160
    check(soak(KINDS[name], batches, period=40), batches)


@pytest.mark.parametrize("name", list(RAY_KINDS))
@pytest.mark.slow
def test_a_short_fault_soak_of_ray_delivers_every_step_once(name: str, ray_cluster: str) -> None:
    batches = 160
    check(soak(RAY_KINDS[name], batches, period=40, step_timeout=1.0), batches)


@pytest.mark.parametrize("name", [*KINDS, *RAY_KINDS])
@pytest.mark.slow
def test_a_long_fault_soak_delivers_every_step_once_and_leaves_nothing(
    name: str, request: pytest.FixtureRequest
) -> None:
    kind = KINDS.get(name) or RAY_KINDS[name]
    if name in RAY_KINDS:
        request.getfixturevalue("ray_cluster")
    long = SoakKind(kind.cfg, kind.api, env_num=4 if name in RAY_KINDS else 8, spare_envs=kind.spare_envs)
    batches = LONG_BATCHES
    ray = name in RAY_KINDS
    check(
        soak(long, batches, period=2 * LONG_PERIOD if ray else LONG_PERIOD, step_timeout=1.0 if ray else 0.25), batches
    )
