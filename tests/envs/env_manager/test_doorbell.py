"""Doorbells: steps and their ``OK`` replies handed over in shared memory, the pipe waking an end that sleeps.

Whatever way a step or a reply comes (the doorbell while both ends spin, the pipe when one of them blocked, both
when it fell asleep as the other rang, a poll of in-flight workers, a control command right after a run of steps),
every step runs once and every reply is delivered once, and no wake-up is lost; copies on the pipe never pile up; a
killed worker's successor takes no step of its predecessor's; and where doorbells are not safe (not x86-64 Linux)
the pipe carries everything.
"""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import signal
import struct
import termios
import time
from collections.abc import Mapping
from functools import partial
from typing import Any, ClassVar

import numpy as np
import pytest
from gymnasium import spaces

from ding.envs import BaseEnv, BaseEnvTimestep, EnvSpaces
from ding.envs.env_manager import BaseEnvManager, create_env_manager
from ding.envs.env_manager.channels import pipe
from ding.envs.env_manager.channels.in_caller import InCallerChannel
from ding.envs.env_manager.channels.pipe import LocalProcesses, PipeChannel
from ding.envs.env_manager.core import doorbell
from ding.envs.env_manager.core.doorbell import DRAIN_AT, Doorbells, WorkerBell
from ding.envs.env_manager.core.sequence import HEADER, ok_reply, step_message

pytestmark = pytest.mark.skipif(not doorbell.supported(), reason="doorbells run on x86-64 Linux only")


class CountingEnv(BaseEnv):
    """Observation: [steps this env instance has taken, its instance number]; never-ending episodes."""

    config: ClassVar[dict[str, Any]] = {"step_seconds": 0.0}
    instances = 0

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        return EnvSpaces(spaces.Box(0, np.inf, (2,), np.float64), spaces.Discrete(2))

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg)
        CountingEnv.instances += 1
        self.instance = CountingEnv.instances + os.getpid() * 1000
        self.steps = 0

    def reset(self) -> np.ndarray:
        return np.array([self.steps, self.instance], np.float64)

    def step(self, action: Any) -> BaseEnvTimestep:
        self.steps += 1
        if self._cfg.step_seconds:
            time.sleep(self._cfg.step_seconds)
        return BaseEnvTimestep(np.array([self.steps, self.instance], np.float64), np.ones(1, np.float32), False, {})

    def close(self) -> None:
        pass


def counting(n: int, manager_type: str = "subprocess", step_seconds: float = 0.0, **cfg: Any) -> BaseEnvManager:
    fns = [partial(CountingEnv, cfg={"step_seconds": step_seconds}) for _ in range(n)]
    return create_env_manager({"type": manager_type, **cfg}, fns)


def pipes_of(manager: BaseEnvManager) -> PipeChannel:
    channel = manager.channel
    return channel.workers if isinstance(channel, InCallerChannel) else channel  # type: ignore[return-value]


def pending_bytes(conn: Any) -> int:
    """Bytes waiting to be read on a connection (FIONREAD)."""
    return int(struct.unpack("i", fcntl.ioctl(conn.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0])


# ----- the words -----------------------------------------------------------------------------------


def _answer_one(ref: doorbell.DoorbellRef, seconds: float) -> None:
    bell = WorkerBell(ref)
    deadline = time.monotonic() + seconds
    while bell.posted() == 0 and time.monotonic() < deadline:
        os.sched_yield()
    bell.answer(bell.posted())
    bell.close()


def test_a_step_rung_in_one_process_is_seen_and_answered_in_another() -> None:
    bells = Doorbells(3)
    try:
        child = multiprocessing.get_context("spawn").Process(target=_answer_one, args=(bells.ref(2), 30.0))
        child.start()
        bells.ring(2, step_message(41))
        deadline = time.monotonic() + 30.0
        while not bells.ready(2) and time.monotonic() < deadline:
            time.sleep(0.001)
        child.join(30.0)
        assert bells.answer(2) == ok_reply(41)
        assert bells.answer(2) is None  # taken once
        assert bells.stale(2, ok_reply(41)) and not bells.stale(2, ok_reply(42))
        assert bells.answer(0) is None and bells.answer(1) is None  # the other workers' words are untouched
    finally:
        bells.close()


def test_only_a_shared_memory_step_rings_and_a_restart_clears_the_words() -> None:
    bells = Doorbells(1)
    worker = WorkerBell(bells.ref(0))
    try:
        bells.ring(0, b"R" + bytes(HEADER - 1) + b"rows")  # a step with its rows in the message: the pipe's
        bells.ring(0, b"\x80pickled command")
        assert worker.posted() == 0
        bells.ring(0, step_message(9))
        worker.answer(9)
        bells.ring(0, b"\x80pickled command")  # a command after the step: the step's answer is not its reply
        assert not bells.ready(0) and bells.answer(0) is None
        bells.clear(0)
        assert worker.posted() == 0
        bells.ring(0, step_message(10))
        assert worker.posted() == 10 and not bells.ready(0)
    finally:
        worker.close()
        bells.close()


def test_a_step_or_reply_goes_on_the_pipe_too_exactly_when_the_other_end_sleeps() -> None:
    bells = Doorbells(2)
    worker = WorkerBell(bells.ref(1))
    try:
        assert not bells.ring(1, step_message(1))  # the worker spins: the doorbell is enough
        worker.sleep()
        assert bells.ring(1, step_message(2))  # it is blocked on its pipe: wake it there
        assert not bells.ring(0, step_message(2))  # the other worker is awake
        worker.wake()
        assert not bells.ring(1, step_message(3))
        assert bells.ring(1, b"\x80pickled command")  # commands always go on the pipe
        assert not worker.answer(3)  # the caller is awake
        bells.sleep([1])
        assert worker.answer(3)  # it sleeps waiting for worker 1
        bells.wake([1])
        assert not worker.answer(3)
        bells.sleep([1])
        bells.clear(1)  # a restarted worker: nobody asleep
        assert not worker.answer(4) and not bells.ring(1, step_message(4))
    finally:
        worker.close()
        bells.close()


def test_doorbells_are_off_where_stores_may_be_seen_out_of_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doorbell.platform, "machine", lambda: "aarch64")
    assert not doorbell.supported()
    channel = PipeChannel(LocalProcesses("fork"))
    channel.open(2)
    try:
        assert channel.bells is None
    finally:
        channel.close()


# ----- every step once, every reply once ------------------------------------------------------------


def steps_taken(batch_obs: np.ndarray) -> list[int]:
    return [int(row[0]) for row in batch_obs]


@pytest.mark.parametrize(
    "cfg",
    [
        {"envs_per_worker": 1},
        {"envs_per_worker": 2},
        {"envs_per_worker": 1, "step_in_caller": True},
    ],
    ids=["one-env-per-worker", "two-envs-per-worker", "step-in-caller"],
)
def test_every_step_runs_once_whether_it_came_by_doorbell_or_by_pipe(cfg: dict[str, Any]) -> None:
    """Runs of quick steps (both ends spin: doorbells) alternate with pauses long enough for the workers to block
    (the pipe wakes them), and with steps slower than the caller's spin (it blocks)."""
    manager = counting(4, **cfg)
    slow = counting(4, step_seconds=0.004, **cfg)
    for m, steps in ((manager, 300), (slow, 40)):
        with m:
            m.launch()
            bells = pipes_of(m).bells
            assert bells is not None
            for taken in range(1, steps + 1):
                if taken % 50 == 0:
                    time.sleep(0.05)  # workers stop spinning and block on their pipes
                batch = m.step_batch(np.zeros(4, np.int64))
                assert steps_taken(batch.obs) == [taken] * 4, f"step {taken}"
            assert max(bells.undrained) <= DRAIN_AT
            workers = len(pipes_of(m).handles) - (1 if cfg.get("step_in_caller") else 0)
            if m is manager:
                assert bells.taken_replies > 0  # while both ends spin, replies are rung
                assert bells.piped_steps >= workers  # after each pause: the workers slept, the pipe woke them
            elif not cfg.get("step_in_caller"):  # (stepping an env itself, the caller finds the replies rung)
                assert bells.taken_replies < steps * workers  # the caller slept for some: the pipe woke it


@pytest.mark.parametrize(
    "cfg",
    [{"envs_per_worker": 1}, {"envs_per_worker": 1, "step_in_caller": True}],
    ids=["workers", "step-in-caller"],
)
def test_no_wake_up_is_lost_when_pauses_straddle_the_spin_windows(cfg: dict[str, Any]) -> None:
    """Pauses between batches and steps of a few hundred microseconds, around the spin windows (at most 300 µs), so
    that ends fall asleep just as the other rings: a lost wake-up would hang a step until ``step_timeout``."""
    rng = np.random.default_rng(7)
    manager = counting(3, step_timeout=20.0, max_retry=1, **cfg)
    with manager:
        manager.launch()
        bells = pipes_of(manager).bells
        assert bells is not None
        for taken in range(1, 3001):
            pause = rng.uniform(0.0, 6e-4)
            deadline = time.perf_counter() + pause
            while time.perf_counter() < deadline:  # a busy pause: sleeping would round it up to the timer's tick
                pass
            batch = manager.step_batch(np.zeros(3, np.int64))
            assert steps_taken(batch.obs) == [taken] * 3, f"step {taken}"
            assert not any(info.get("abnormal") for info in batch.info)
        assert bells.taken_replies > 0


def test_send_recv_with_partial_batches_delivers_each_reply_once() -> None:
    """``recv`` of some envs polls the workers in flight: a reply seen there is held, delivered once, and its
    doorbell is not taken again."""
    manager = counting(6, "async_subprocess", envs_per_worker=1)
    with manager:
        manager.async_reset()
        counts = dict.fromkeys(range(6), 0)
        batch = manager.recv()
        for _ in range(400):
            manager.send(np.zeros(len(batch.env_ids), np.int64), batch.env_ids)
            batch = manager.recv(batch_size=2)
            for env_id, row in zip(batch.env_ids.tolist(), batch.obs, strict=True):
                counts[env_id] += 1
                assert int(row[0]) == counts[env_id]
        while manager.in_flight_env_ids:
            batch = manager.recv()
            for env_id, row in zip(batch.env_ids.tolist(), batch.obs, strict=True):
                counts[env_id] += 1
                assert int(row[0]) == counts[env_id]
        assert sum(counts.values()) >= 400


def test_the_pipes_copies_are_read_off_and_commands_after_a_run_of_steps_get_their_own_replies() -> None:
    manager = counting(4, envs_per_worker=2)
    with manager:
        manager.launch()
        channel = pipes_of(manager)
        for taken in range(1, 1001):
            batch = manager.step_batch(np.zeros(4, np.int64))
            assert steps_taken(batch.obs) == [taken] * 4
            for w, handle in enumerate(channel.handles):
                assert handle is not None
                assert pending_bytes(handle.conn) <= (DRAIN_AT + 1) * (HEADER + 4), f"worker {w} after {taken}"
        instances = manager.instance  # a command: its reply comes after the copies
        assert len(set(instances)) == 4
        manager.reset()
        batch = manager.step_batch(np.zeros(4, np.int64))
        assert steps_taken(batch.obs) == [1001] * 4


def test_a_killed_workers_successor_takes_no_step_of_its_predecessor() -> None:
    manager = counting(4, envs_per_worker=2, max_retry=2, step_timeout=30.0)
    with manager:
        manager.launch()
        for _ in range(50):
            manager.step_batch(np.zeros(4, np.int64))
        victim = manager.worker_pids[1]  # type: ignore[attr-defined]
        os.kill(victim, signal.SIGKILL)
        timesteps = manager.step({i: 0 for i in manager.ready_obs_id})
        assert [timesteps[i].info.get("abnormal", False) for i in range(4)] == [False, False, True, True]
        assert manager.worker_pids[1] != victim  # type: ignore[attr-defined]
        for taken in range(1, 101):
            batch = manager.step_batch(np.zeros(4, np.int64))
            assert steps_taken(batch.obs) == [51 + taken, 51 + taken, taken, taken]


def test_doorbells_change_nothing_a_rollout_returns(monkeypatch: pytest.MonkeyPatch) -> None:
    from dizoo.classic_control.cartpole.envs import CartPoleEnv

    def rollout() -> np.ndarray:
        manager = create_env_manager(
            {"type": "subprocess", "envs_per_worker": 2, "step_in_caller": True},
            [partial(CartPoleEnv, cfg={}) for _ in range(6)],
        )
        manager.seed(3)
        rng = np.random.default_rng(3)
        rows = []
        with manager:
            manager.launch()
            for _ in range(300):
                batch = manager.step_batch(rng.integers(0, 2, 6))
                rows.append(np.concatenate([batch.obs.ravel(), batch.reward.ravel(), batch.done]))
        return np.stack(rows)

    rung = rollout()
    monkeypatch.setattr(pipe, "supported", lambda: False)
    assert PipeChannel(LocalProcesses("fork")).bells is None
    np.testing.assert_array_equal(rollout(), rung)


def test_a_caller_waiting_for_slow_steps_sleeps_through_most_of_the_wait() -> None:
    """Waits longer than the spin window are slept through until shortly before the answer is due (the caller
    sleeps on the pipes; a reply rung as it fell asleep is taken from the doorbell)."""
    manager = counting(4, step_seconds=0.004, envs_per_worker=2)
    with manager:
        manager.launch()
        for _ in range(15):  # the caller learns how long its waits are
            manager.step_batch(np.zeros(4, np.int64))
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(30):
            manager.step_batch(np.zeros(4, np.int64))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert cpu < 0.5 * wall, f"the caller used {cpu:.3f} s of CPU in {wall:.3f} s"
