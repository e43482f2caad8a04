"""A spin-wait spins only while a core is free for it (``SpinBudget``).

A spin that lost its core for longer than ``LOST_CORE`` (another program, or the caller's own work, took it) makes the
next waits block at once, more of them while spins keep losing their core; a spin that keeps its core ends that.
With a program busy on one of two cores, ``send`` / ``recv`` over more workers than cores then serves every env.
"""

from __future__ import annotations

import multiprocessing
import os
import time

import numpy as np

from ding.envs.env_manager.core.spin import CROWDED_BACKOFF, LOST_CORE, SpinBudget
from tests.envs.env_manager.test_core_yield import send_recv
from tests.envs.env_manager.test_doorbell import counting


def blocked_waits(budget: SpinBudget, waits: int) -> int:
    """How many of the next ``waits`` waits would block at once."""
    return [budget.window() for _ in range(waits)].count(0.0)


def test_a_spin_that_lost_its_core_makes_the_next_waits_block_and_one_that_kept_it_ends_that() -> None:
    budget = SpinBudget()
    assert budget.window() > 0.0
    budget.spun(off_cpu=LOST_CORE / 2)  # preempted briefly (a worker of the batch): spins go on
    assert blocked_waits(budget, 4) == 0
    budget.spun(off_cpu=2 * LOST_CORE)
    assert blocked_waits(budget, 4) == 1  # one wait blocks, then spins are tried again
    budget.spun(off_cpu=2 * LOST_CORE)
    assert blocked_waits(budget, 8) == 3  # lost again: three waits
    for _ in range(10):
        budget.spun(off_cpu=2 * LOST_CORE)
    assert budget.blocking == CROWDED_BACKOFF  # never more than this in a row
    assert blocked_waits(budget, CROWDED_BACKOFF + 1) == CROWDED_BACKOFF
    budget.spun(off_cpu=0.0)  # a spin that kept its core
    budget.spun(off_cpu=2 * LOST_CORE)
    assert blocked_waits(budget, 4) == 1  # the back-off starts over


def test_spin_measures_the_time_off_the_cpu_and_finds_what_is_ready() -> None:
    budget = SpinBudget(limit=0.05)
    budget.typical = 1.0  # a long wait: the whole window
    looks = 0

    def asleep() -> bool:  # off the CPU for 3 ms, the way a lost core looks to the spinner
        nonlocal looks
        looks += 1
        time.sleep(0.003)
        return looks >= 2

    assert budget.spin(asleep)
    assert budget.blocking == 1  # its 6 ms off the CPU made the next wait block
    assert not budget.spin(lambda: False)  # that wait: no spin, one look
    assert budget.blocking == 0 and looks == 2
    assert SpinBudget(limit=0.0).window() == 0.0  # spinning off


def _burn(seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pass


def test_send_recv_beside_a_busy_program_serves_every_env() -> None:
    """A program keeps one of the cores busy; four workers of an instant env, batches of two: no env gets less than a
    fifth of another's rows (spinning whatever the load, some got a fifteenth)."""
    burner = multiprocessing.get_context("spawn").Process(target=_burn, args=(60.0,), daemon=True)
    burner.start()
    try:
        os.sched_setaffinity(burner.pid, {min(os.sched_getaffinity(0))})
        rows = np.zeros(4, np.int64)
        with counting(4, batch_size=2) as manager:
            for batch in send_recv(manager, 3000):
                rows[batch.env_ids] += 1
        assert rows.min() >= 0.2 * rows.max(), f"rows per env: {rows.tolist()}"
    finally:
        burner.kill()
        burner.join()
