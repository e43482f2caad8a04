"""The asynchronous API (``async_reset``, ``send``, ``recv``, ``step_async``, ``step_wait``) on every manager kind."""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ding.envs.env_manager import BaseEnvManager
from ding.envs.env_manager.batch import BatchTimestep
from ding.envs.env_manager.core.batch_core import core_of
from ding.errors import ConfigError, EnvManagerError, ManagerStateError, WorkerTimeoutError
from dizoo.classic_control.cartpole.envs import CartPoleEnv
from tests.envs.env_manager.conftest import MakeManager
from tests.envs.env_manager.envs import DictObsEnv, assert_tree_equal, table_policy, tree_row
from tests.envs.env_manager.fault_envs import FaultyEnv

ENV_NUM = 4
ROUNDS = 25
POLICY = table_policy(3)
UINT8_DICT_ENV = partial(DictObsEnv, cfg={"env_wrapper": []})  # the image stays uint8


def _step_reference(manager: BaseEnvManager, rounds: int) -> dict[int, list[tuple[Any, Any, bool]]]:
    """Each env's (next obs, reward, done) over ``rounds`` synchronous steps of every env."""
    manager.seed(7)
    manager.launch()
    out: dict[int, list[tuple[Any, Any, bool]]] = {i: [] for i in range(manager.env_num)}
    for k in range(rounds):
        timesteps = manager.step({i: POLICY(i, k, None) for i in manager.ready_obs_id})
        for env_id, ts in timesteps.items():
            nxt = manager.ready_obs[env_id] if env_id in manager.ready_obs_id else ts.obs
            out[env_id].append((nxt, np.asarray(ts.reward), ts.done))
    manager.close()
    return out


def _record(out: dict[int, list[tuple[Any, Any, bool]]], batch: BatchTimestep) -> None:
    for row, env_id in enumerate(batch.env_ids.tolist()):
        out[env_id].append((tree_row(batch.obs, row), batch.reward[row], bool(batch.done[row])))


def _assert_same(
    actual: dict[int, list[tuple[Any, Any, bool]]], expected: dict[int, list[tuple[Any, Any, bool]]]
) -> None:
    for env_id, steps in expected.items():
        got = actual[env_id][: len(steps)]
        assert len(got) == len(steps), f"env {env_id}: {len(got)} steps received, {len(steps)} expected"
        for k, (obs, reward, done) in enumerate(steps):
            assert_tree_equal(got[k][0], obs, f"env {env_id} step {k} obs")
            np.testing.assert_array_equal(got[k][1], reward)
            assert got[k][2] == done, f"env {env_id} step {k}: done {got[k][2]}, expected {done}"


def test_send_recv_trajectories_equal_steps(manager_kind: str, new_manager: MakeManager) -> None:
    fns = [UINT8_DICT_ENV] * ENV_NUM
    expected = _step_reference(new_manager(manager_kind, fns), ROUNDS)
    manager = new_manager(manager_kind, fns)
    manager.seed(7)
    manager.async_reset()
    first = manager.recv()
    assert first.env_ids.tolist() == list(range(ENV_NUM))
    assert not first.done.any() and not first.reward.any()
    got: dict[int, list[tuple[Any, Any, bool]]] = {i: [] for i in range(ENV_NUM)}
    batch = first
    for k in range(ROUNDS):
        manager.send(np.array([POLICY(i, k, None) for i in batch.env_ids.tolist()]), batch.env_ids)
        batch = manager.recv()
        assert batch.env_ids.tolist() == list(range(ENV_NUM))
        _record(got, batch)
    _assert_same(got, expected)
    assert any(done for steps in got.values() for _, _, done in steps)  # autoreset was exercised


@pytest.mark.parametrize("batch_size", [1, 3])
def test_partial_batches_deliver_each_env_exactly_once(
    manager_kind: str, new_manager: MakeManager, batch_size: int
) -> None:
    fns = [UINT8_DICT_ENV] * ENV_NUM
    expected = _step_reference(new_manager(manager_kind, fns), ROUNDS)
    manager = new_manager(manager_kind, fns, batch_size=batch_size)
    manager.seed(7)
    manager.async_reset()
    got: dict[int, list[tuple[Any, Any, bool]]] = {i: [] for i in range(ENV_NUM)}
    sent = dict.fromkeys(range(ENV_NUM), 0)
    received = dict.fromkeys(range(ENV_NUM), -1)  # the first recv returns first observations
    in_flight = set(range(ENV_NUM))
    while min(sent.values()) < ROUNDS:
        batch = manager.recv()
        ids = batch.env_ids.tolist()
        assert len(ids) >= min(batch_size, len(in_flight)) and len(set(ids)) == len(ids) and set(ids) <= in_flight
        in_flight -= set(ids)
        for row, env_id in enumerate(ids):
            received[env_id] += 1
            if received[env_id] > 0:  # not the first observation
                got[env_id].append((tree_row(batch.obs, row), batch.reward[row], bool(batch.done[row])))
        todo = [i for i in ids if sent[i] < ROUNDS]
        if todo:
            manager.send({i: POLICY(i, sent[i], None) for i in todo})
            for env_id in todo:
                sent[env_id] += 1
            in_flight |= set(todo)
    while in_flight:
        batch = manager.recv()
        assert set(batch.env_ids.tolist()) <= in_flight
        in_flight -= set(batch.env_ids.tolist())
        for env_id in batch.env_ids.tolist():
            received[env_id] += 1
        _record(got, batch)
    assert received == sent == dict.fromkeys(range(ENV_NUM), ROUNDS)
    with pytest.raises(EnvManagerError, match="nothing to receive"):
        manager.recv()
    _assert_same(got, expected)


def test_step_async_and_step_wait_are_send_and_recv_of_every_ready_env(
    manager_kind: str, new_manager: MakeManager
) -> None:
    manager = new_manager(manager_kind, [partial(CartPoleEnv, cfg={})] * 2)
    manager.launch()
    manager.step_async(np.array([0, 1]))
    assert manager.ready_obs_id == []
    batch = manager.step_wait()
    assert batch.env_ids.tolist() == [0, 1] and batch.obs.shape == (2, 4) and batch.obs.dtype == np.float32
    assert manager.ready_obs_id == [0, 1]
    manager.step_async({0: 1, 1: 0})
    assert manager.step_wait().env_ids.tolist() == [0, 1]


def test_errors_name_the_envs_and_what_is_accepted(manager_kind: str, new_manager: MakeManager) -> None:
    manager = new_manager(manager_kind, [partial(CartPoleEnv, cfg={})] * 2)
    with pytest.raises(ManagerStateError, match="not launched"):
        manager.send({0: 0})
    manager.async_reset()
    with pytest.raises(EnvManagerError, match=r"envs \[0\], which are in flight"):
        manager.send({0: 0})
    with pytest.raises(ManagerStateError, match=r"step\(\) cannot run while envs \[0, 1\] are in flight"):
        manager.step({0: 0})
    manager.recv()
    with pytest.raises(ValueError, match=r"3 actions for envs \[0, 1\]"):
        manager.send(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match="mapping names its envs itself"):
        manager.send({0: 0}, env_ids=[0])
    with pytest.raises(ValueError, match=r"action \d is out of range for Discrete"):
        manager.send({0: 5})
    assert manager.ready_obs_id == [0, 1]  # a refused send moves nothing
    with pytest.raises(EnvManagerError, match=r"nothing to receive.*envs that take actions: \[0, 1\]"):
        manager.recv()
    manager.send({1: 0})
    with pytest.raises(ManagerStateError, match=r"reset\(\) cannot run while envs \[1\]"):
        manager.reset()
    with pytest.raises(ConfigError, match="batch_size must be an int >= 1"):
        manager.recv(batch_size=0)
    assert manager.recv().env_ids.tolist() == [1]
    manager.step({0: 0, 1: 0})  # nothing in flight: step works again


@pytest.mark.parametrize("kind", ["subprocess-1", "async", "zmq"])
def test_send_refuses_an_env_whose_worker_is_busy_and_only_then(kind: str, new_manager: MakeManager) -> None:
    shared = new_manager(kind, [partial(CartPoleEnv, cfg={})] * 4, envs_per_worker=2)
    shared.async_reset()
    shared.recv(batch_size=4)
    shared.send({0: 0})
    with pytest.raises(EnvManagerError, match=r"send\(\) got envs \[1\], whose worker is stepping other envs"):
        shared.send({1: 0, 2: 0})
    shared.send({2: 0, 3: 0})  # the other worker's envs
    assert sorted(shared.recv(batch_size=4).env_ids.tolist()) == [0, 2, 3]
    shared.close()
    shared.launch()  # a new launch finds the workers again
    shared.send({0: 0})
    with pytest.raises(EnvManagerError, match=r"send\(\) got envs \[1\], whose worker"):
        shared.send({1: 0})
    own = new_manager(kind, [partial(CartPoleEnv, cfg={})] * 2, envs_per_worker=1)
    own.async_reset()
    own.recv(batch_size=2)
    own.send({0: 0})
    own.send({1: 0})  # a worker of its own: never busy with another env
    assert sorted(own.recv(batch_size=2).env_ids.tolist()) == [0, 1]


def test_batch_size_config_is_checked() -> None:
    with pytest.raises(ConfigError, match=r"env\.manager\.batch_size must be a positive int or None .* got -2"):
        BaseEnvManager([partial(CartPoleEnv, cfg={})], {"batch_size": -2})


def test_arrays_keep_the_spaces_dtypes(manager_kind: str, new_manager: MakeManager) -> None:
    manager = new_manager(manager_kind, [UINT8_DICT_ENV] * 2)
    manager.async_reset()
    for batch in (manager.recv(), None):
        if batch is None:
            manager.send(np.array([1, 2]), [0, 1])
            batch = manager.recv()
        assert batch.obs["image"].dtype == np.uint8 and batch.obs["image"].shape == (2, 5, 7, 3)
        assert batch.obs["state"]["pos"].dtype == manager.observation_space["state"]["pos"].dtype
        assert batch.reward.dtype == manager.reward_space.dtype and batch.reward.shape == (2, 1)
        assert batch.done.dtype == np.bool_ and batch.env_ids.dtype == np.int64


def _first_env_hangs(tmp_path: Path, env_num: int) -> list[Any]:
    """Env fns whose env 0 hangs in its first step (once: a file marks that it fired); the others run normally."""
    hang = {"episode_len": 50, "fault": "hang", "at_step": 1, "once_path": str(tmp_path / "fired")}
    return [partial(FaultyEnv, cfg=hang)] + [partial(FaultyEnv, cfg={"episode_len": 50})] * (env_num - 1)


def _pids(manager: BaseEnvManager) -> list[int | None]:
    pids: list[int | None] = manager.worker_pids
    return pids


@pytest.mark.with_workers  # the base manager has no worker process
def test_worker_killed_during_a_pending_send_comes_back_abnormal(
    manager_kind: str, new_manager: MakeManager, tmp_path: Path
) -> None:
    fns = _first_env_hangs(tmp_path, ENV_NUM)
    manager = new_manager(manager_kind, fns, max_retry=2, step_timeout=30.0)
    manager.async_reset()
    manager.recv()
    victim = _pids(manager)[0]
    assert victim is not None
    manager.send(np.zeros(ENV_NUM, dtype=np.int64))
    fired = tmp_path / "fired"
    deadline = time.monotonic() + 10.0
    while not fired.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(victim, signal.SIGKILL)  # env 0 hangs in its step: no result can be in before the kill
    batch = manager.recv()
    assert batch.env_ids.tolist() == list(range(ENV_NUM))
    assert batch.info[0]["abnormal"] and batch.done[0]
    assert re.search("died|lost its connection", batch.info[0]["error"])  # a Ray-placed zmq worker: its link
    assert not batch.done[-1] and batch.obs[-1][0] == 1  # the other workers' envs stepped normally
    assert batch.obs[0][0] == 0  # env 0 restarted: its row is the new episode's first observation
    manager.send(np.zeros(ENV_NUM, dtype=np.int64))
    after = manager.recv()
    assert not after.done.any() and after.obs[0][0] == 1 and after.obs[-1][0] == 2


def _factory_env() -> CartPoleEnv:
    return CartPoleEnv({})


FACTORIES: list[Callable[[], Any]] = [_factory_env, lambda: CartPoleEnv({})]


@pytest.mark.parametrize("factory", FACTORIES, ids=["function", "lambda"])
def test_factory_of_a_declaring_class_is_treated_as_declared(
    manager_kind: str, new_manager: MakeManager, factory: Callable[[], Any]
) -> None:
    manager = new_manager(manager_kind, [factory] * 2)
    manager.launch()
    if manager_kind != "base":
        buffers = core_of(manager.engine).buffers
        assert buffers is not None and buffers.action is not None
    with pytest.raises(ValueError, match=r"action \d is out of range for Discrete"):
        manager.step({0: 7, 1: 0})
    assert manager.ready_obs_id == [0, 1]
    manager.step({0: 1, 1: 0})


@pytest.mark.with_workers  # the base manager steps inside recv: there is nothing to wait for
def test_recv_timeout_returns_what_arrived_and_a_hung_env_comes_back_abnormal(
    manager_kind: str, new_manager: MakeManager, tmp_path: Path
) -> None:
    fns = _first_env_hangs(tmp_path, ENV_NUM)
    manager = new_manager(manager_kind, fns, max_retry=2, step_timeout=1.5)
    manager.async_reset()
    manager.recv()
    manager.send({0: 0})
    with pytest.raises(WorkerTimeoutError, match=r"recv\(\) got no result within 0.2 s; envs in flight: \[0\]"):
        manager.recv(timeout=0.2)
    manager.send({2: 0, 3: 0})  # envs 2 and 3 never share a worker with env 0 here
    batch = manager.recv(batch_size=3, timeout=0.5)
    assert batch.env_ids.tolist() == [2, 3] and not batch.done.any()
    start = time.monotonic()
    batch = manager.recv()
    assert batch.env_ids.tolist() == [0] and batch.info[0]["abnormal"] and batch.done[0]
    assert time.monotonic() - start < 10.0
    with pytest.raises(EnvManagerError, match="nothing to receive"):
        manager.recv()


def test_send_after_an_async_step_left_envs_in_flight_is_refused(new_manager: MakeManager, tmp_path: Path) -> None:
    manager = new_manager("async", _first_env_hangs(tmp_path, 2), wait_num=1, step_timeout=30.0)
    manager.launch()
    manager.step({0: 0, 1: 0})
    assert manager.in_flight_env_ids == [0]  # type: ignore[attr-defined]  # env 0 hangs in its first step
    ready = manager.ready_obs_id
    with pytest.raises(ManagerStateError, match=r"send\(\) cannot run while envs \[\d\] are in flight from step\(\)"):
        manager.send({i: 0 for i in ready})
    assert manager.ready_obs_id == ready  # nothing was sent
