"""``step_in_caller=True``: the calling process steps env group 0 while workers step the others.

The results must equal the plain subprocess manager's, faults in either part must be handled as in any
manager, and nothing may be left behind.
"""

from __future__ import annotations

import os
import signal
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ding.envs.env_manager import BaseEnvManager, create_env_manager
from ding.errors import ConfigError
from dizoo.classic_control.cartpole.envs import CartPoleEnv
from tests.envs.env_manager.fault_envs import FaultyEnv


def cartpoles(n: int, **cfg: Any) -> BaseEnvManager:
    manager_cfg = {"type": "subprocess", "envs_per_worker": 2, **cfg}
    return create_env_manager(manager_cfg, [partial(CartPoleEnv, cfg={}) for _ in range(n)])


def run(manager: BaseEnvManager, steps: int) -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    manager.seed(7)
    manager.launch()
    out = []
    try:
        for _ in range(steps):
            batch = manager.step_batch(rng.integers(0, 2, manager.env_num))
            out.append(np.concatenate([batch.obs.ravel(), batch.reward.ravel(), batch.done.astype(np.float32)]))
    finally:
        manager.close()
    return out


def test_batches_equal_the_subprocess_managers() -> None:
    plain = run(cartpoles(4), 300)
    in_caller = run(cartpoles(4, step_in_caller=True), 300)
    np.testing.assert_array_equal(np.stack(plain), np.stack(in_caller))


def test_group_zero_has_no_worker_process_and_the_others_do() -> None:
    manager = cartpoles(4, step_in_caller=True)
    manager.launch()
    try:
        pids = manager.worker_pids
        assert pids[0] is None and pids[1] not in (None, os.getpid())
        obs = manager.ready_obs
        assert set(obs) == {0, 1, 2, 3}
    finally:
        manager.close()
    assert manager.worker_pids == [None, None]


def test_an_env_exception_in_the_callers_group_ends_its_episode_abnormally(tmp_path: Path) -> None:
    cfgs = [{"fault": "raise", "at_step": 3, "once_path": str(tmp_path / "once")}, {}, {}, {}]
    manager = create_env_manager(
        {"type": "subprocess", "envs_per_worker": 2, "step_in_caller": True},
        [partial(FaultyEnv, cfg=c) for c in cfgs],
    )
    manager.launch()
    try:
        abnormal = []
        for _ in range(4):
            timesteps = manager.step({i: 0 for i in manager.ready_obs_id})
            abnormal += [i for i, t in timesteps.items() if t.info.get("abnormal")]
        assert abnormal == [0]
        assert sorted(manager.ready_obs_id) == [0, 1, 2, 3]  # env 0 was reset and goes on
    finally:
        manager.close()


def test_a_killed_worker_of_another_group_is_replaced() -> None:
    manager = create_env_manager(
        {"type": "subprocess", "envs_per_worker": 2, "step_in_caller": True, "step_timeout": 5.0},
        [partial(FaultyEnv, cfg={"episode_len": 1000}) for _ in range(4)],
    )
    manager.launch()
    try:
        manager.step({i: 0 for i in manager.ready_obs_id})
        victim = manager.worker_pids[1]
        assert victim is not None
        os.kill(victim, signal.SIGKILL)
        timesteps = manager.step({i: 0 for i in manager.ready_obs_id})
        assert [i for i, t in timesteps.items() if t.info.get("abnormal")] == [2, 3]
        assert not any(timesteps[i].done for i in (0, 1))
        assert manager.worker_pids[1] not in (None, victim)
    finally:
        manager.close()


def test_partial_batches_deliver_every_step_once() -> None:
    manager = create_env_manager(
        {"type": "async_subprocess", "envs_per_worker": 2, "step_in_caller": True, "wait_num": 2},
        [partial(FaultyEnv, cfg={"episode_len": 1000}) for _ in range(4)],
    )
    manager.launch()
    steps = dict.fromkeys(range(4), 0)

    def account(timesteps: dict[int, Any]) -> None:
        for env_id, timestep in timesteps.items():
            steps[env_id] += 1
            assert timestep.obs[0] == steps[env_id]  # the env's own step count: none lost, none twice

    try:
        for _ in range(50):
            account(manager.step({i: 0 for i in manager.ready_obs_id}))
        while manager.in_flight_env_ids:  # the worker's group may still be out (the caller's answers at once)
            account(manager.step({}))
    finally:
        manager.close()
    assert min(steps.values()) > 0


def test_send_recv_runs_the_callers_group() -> None:
    manager = cartpoles(4, step_in_caller=True, batch_size=4)
    manager.async_reset()
    try:
        for _ in range(20):
            batch = manager.recv()
            assert sorted(batch.env_ids.tolist()) == [0, 1, 2, 3]
            manager.send(np.zeros(len(batch.env_ids), dtype=np.int64), batch.env_ids)
        manager.recv()
    finally:
        manager.close()


def test_relaunch_after_close_builds_the_callers_envs_again() -> None:
    manager = cartpoles(2, step_in_caller=True)
    first = run(manager, 5)
    second = run(manager, 5)
    np.testing.assert_array_equal(np.stack(first), np.stack(second))


def test_step_in_caller_must_be_a_bool() -> None:
    with pytest.raises(ConfigError, match=r"env\.manager\.step_in_caller must be a bool, got 'yes'"):
        cartpoles(2, step_in_caller="yes")
