"""A caller that keeps finding its replies in gives its core up after each batch it hands over (``CoreYield``).

With more worker processes than cores and a cheap env, ``send`` / ``recv`` serves every env alike (no env falls
behind while the workers on the other cores are stepped again and again), and each env's steps still come in order,
once each; a caller whose envs take long keeps its core.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest

from ding.envs.env_manager import BaseEnvManager
from ding.envs.env_manager.batch import BatchTimestep
from ding.envs.env_manager.channels.in_caller import InCallerChannel
from ding.envs.env_manager.channels.pipe import PipeChannel
from ding.envs.env_manager.channels.zmq.channel import ZmqChannel
from ding.envs.env_manager.core.spin import SLEPT, CoreYield
from tests.envs.env_manager.test_doorbell import counting


def core_of_channel(manager: BaseEnvManager) -> CoreYield:
    channel = manager.channel
    inner = channel.workers if isinstance(channel, InCallerChannel) else channel
    assert isinstance(inner, (PipeChannel, ZmqChannel))
    return inner.core


def send_recv(manager: BaseEnvManager, batches: int) -> Iterator[BatchTimestep]:
    """``batches`` batches of ``send`` / ``recv``, each sending action 0 to the envs the last ``recv`` returned."""
    manager.seed(0)
    manager.async_reset()
    batch = manager.recv()
    for _ in range(batches):
        manager.send(np.zeros(len(batch.env_ids), np.int64), batch.env_ids)
        batch = manager.recv()
        yield batch


def test_a_caller_yields_after_a_batch_only_when_its_replies_are_quick_and_it_did_not_sleep(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    yielded: list[int] = []
    monkeypatch.setattr("os.sched_yield", lambda: yielded.append(1))
    core = CoreYield()
    core.handed_over(quick=True)
    assert not yielded  # the first batch: the caller has not been awake a whole batch yet
    core.handed_over(quick=True)
    core.handed_over(quick=True)
    assert len(yielded) == core.yields == 2  # from then on, once after each batch
    core.handed_over(quick=False)
    assert core.yields == 2  # slow replies: the caller keeps its core
    core.off_cpu(SLEPT / 2)  # a wait that found its replies in (or spent its time on the CPU)
    core.handed_over(quick=True)
    assert core.yields == 3
    core.off_cpu(0.002)  # 2 ms off the CPU: a sleep
    core.handed_over(quick=True)
    assert core.yields == 3 and not core.slept
    since = core.clock()
    time.sleep(0.002)  # the clocks: a real sleep is seen as one
    core.waited(since)
    assert core.slept


@pytest.mark.parametrize("manager_type", ["subprocess", "zmq"])
def test_send_recv_with_more_workers_than_cores_serves_every_env_alike_and_in_order(manager_type: str) -> None:
    """Four workers of an instant env, batches of two, 3,000 batches: each env's steps come in order, and no env
    gets less than half the rows of another (without the yield, one env got a twentieth of another's through pipes,
    a third through zmq)."""
    rows = np.zeros(4, np.int64)  # step rows per env (its first row is its reset observation, step count 0)
    first = np.ones(4, bool)
    with counting(4, manager_type, batch_size=2) as manager:
        for batch in send_recv(manager, 3000):
            for env_id, obs in zip(batch.env_ids.tolist(), batch.obs, strict=True):
                if first[env_id] and obs[0] == 0:
                    first[env_id] = False
                    continue
                first[env_id] = False
                rows[env_id] += 1
                assert int(obs[0]) == rows[env_id]  # the env's own step count: every step once, in order
        assert core_of_channel(manager).yields > 0
    assert rows.min() >= 0.5 * rows.max(), f"rows per env: {rows.tolist()}"


@pytest.mark.parametrize("manager_type", ["subprocess", "zmq"])
def test_a_caller_whose_envs_take_long_never_yields(manager_type: str) -> None:
    """Steps of 3 ms: the replies are not quick, so a worker given the core would keep it for a whole step."""
    with counting(4, manager_type, batch_size=2, step_seconds=0.003) as manager:
        for _ in send_recv(manager, 100):
            pass
        assert core_of_channel(manager).yields == 0
