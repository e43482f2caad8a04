"""step_batch: the vectorized step equals stepping each env, and rejects bad batches whole."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import pytest

from ding.envs.env_manager import BaseEnvManager, create_env_manager
from ding.errors import EnvManagerError
from dizoo.classic_control.cartpole.envs import CartPoleEnv
from dizoo.classic_control.pendulum.envs import PendulumEnv

KINDS = [
    {"type": "base"},
    {"type": "subprocess", "envs_per_worker": 2},
    {"type": "subprocess", "envs_per_worker": 1},
    {"type": "subprocess", "envs_per_worker": 2, "shared_memory": False},
]


def kind_id(cfg: dict[str, Any]) -> str:
    return "-".join(str(v) for v in cfg.values())


def cartpoles(cfg: dict[str, Any], n: int = 4) -> BaseEnvManager:
    manager = create_env_manager(cfg, [partial(CartPoleEnv, cfg={"max_episode_steps": 15})] * n)
    manager.seed(0)
    manager.launch()
    return manager


@pytest.mark.parametrize("cfg", KINDS, ids=kind_id)
def test_step_batch_equals_per_env_steps(cfg: dict[str, Any]) -> None:
    actions = np.random.default_rng(1).integers(0, 2, size=(40, 4))
    with cartpoles(cfg) as batched, cartpoles({"type": "base"}) as reference:
        episodes_ended = 0
        for row in actions:
            batch = batched.step_batch(row)
            timesteps = reference.step({i: int(a) for i, a in enumerate(row)})
            for env_id, ts in timesteps.items():
                np.testing.assert_array_equal(batch.reward[env_id], ts.reward)
                assert batch.done[env_id] == ts.done and batch.truncated[env_id] == ts.truncated
                if ts.done:
                    episodes_ended += 1
                    np.testing.assert_array_equal(batch.final_obs[env_id], ts.obs)
                    np.testing.assert_array_equal(
                        batch.info[env_id]["eval_episode_return"], ts.info["eval_episode_return"]
                    )
                    np.testing.assert_array_equal(batch.obs[env_id], reference.ready_obs[env_id])
                else:
                    np.testing.assert_array_equal(batch.obs[env_id], ts.obs)
            assert set(batch.final_obs) == {i for i, ts in timesteps.items() if ts.done}
        assert episodes_ended > 4
        np.testing.assert_array_equal(batched.ready_obs_batch().obs, reference.ready_obs_batch().obs)


@pytest.mark.parametrize("cfg", KINDS, ids=kind_id)
def test_bad_batches_are_rejected_whole(cfg: dict[str, Any]) -> None:
    with cartpoles(cfg) as manager, cartpoles({"type": "base"}) as twin:
        with pytest.raises(ValueError, match=r"env 2: action 5 is out of range for Discrete\(2\)"):
            manager.step_batch(np.array([0, 1, 5, 0]))
        with pytest.raises(TypeError, match=r"takes integers|is not a single integer"):
            manager.step_batch(np.array([0.0, 1.0, 0.5, 0.0]))
        with pytest.raises(ValueError, match=r"3 actions for 4 envs|shape \(3,\); expected \(4,\)"):
            manager.step_batch(np.array([0, 1, 1]))
        np.testing.assert_array_equal(manager.step_batch([1, 1, 0, 0]).obs, twin.step_batch([1, 1, 0, 0]).obs)


def test_step_batch_needs_every_env_ready() -> None:
    manager = create_env_manager({"type": "base", "auto_reset": False}, [partial(CartPoleEnv, cfg={})] * 2)
    manager.launch()
    while len(manager.ready_obs) == 2:
        manager.step({i: 0 for i in manager.ready_obs_id})
    with pytest.raises(EnvManagerError, match="step_batch needs every env waiting for an action"):
        manager.step_batch([0, 0])
    manager.close()


def test_box_actions_batch() -> None:
    with create_env_manager({"type": "subprocess", "envs_per_worker": 2}, [partial(PendulumEnv, cfg={})] * 2) as m:
        m.seed(3)
        m.launch()
        batch = m.step_batch(np.zeros((2, 1), np.float32))
        assert batch.reward.shape == (2, 1) and batch.obs.shape == (2, 3)
        with pytest.raises(ValueError, match=r"shape \(2, 2\); expected \(2, 1\)"):
            m.step_batch(np.zeros((2, 2), np.float32))


def test_private_buffers_use_no_shared_memory() -> None:
    cfg = {"type": "subprocess", "envs_per_worker": 2, "shared_memory": False}
    with cartpoles(cfg) as manager, cartpoles({"type": "subprocess", "envs_per_worker": 2}) as shared:
        assert manager.shared_memory_names == [] and shared.shared_memory_names
        for _ in range(30):
            np.testing.assert_array_equal(manager.step_batch([0, 1, 1, 0]).obs, shared.step_batch([0, 1, 1, 0]).obs)


@pytest.mark.parametrize("context", ["spawn", "forkserver"])
def test_other_start_methods_give_the_same_steps(context: str) -> None:
    cfg = {"type": "subprocess", "envs_per_worker": 2, "context": context}
    with cartpoles(cfg) as manager, cartpoles({"type": "base"}) as reference:
        for _ in range(20):
            batch = manager.step_batch([1, 0, 1, 0])
            np.testing.assert_array_equal(batch.obs, reference.step_batch([1, 0, 1, 0]).obs)
