"""Batches read from the step buffers at once (``recv``, ``step_batch``) equal the per-env path, end to end."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import pytest

from ding.envs.env_manager import BaseEnvManager, create_env_manager
from dizoo.classic_control.cartpole.envs import CartPoleEnv
from dizoo.classic_control.pendulum.envs import PendulumEnv

KINDS = [
    {"type": "subprocess", "envs_per_worker": 2},
    {"type": "subprocess", "envs_per_worker": 2, "shared_memory": False},
]


def launched(cfg: dict[str, Any], env_fn: Any, n: int = 4, **extra: Any) -> BaseEnvManager:
    manager = create_env_manager({**cfg, **extra}, [env_fn] * n)
    manager.seed(0)
    manager.launch()
    return manager


@pytest.mark.parametrize("episode_num", [2, float("inf")])
@pytest.mark.parametrize("cfg", KINDS, ids=["shm", "private"])
def test_recv_of_arrays_equals_step_of_dicts_across_episode_ends(cfg: dict[str, Any], episode_num: float) -> None:
    cartpole = partial(CartPoleEnv, cfg={"max_episode_steps": 6})
    rng = np.random.default_rng(3)
    with (
        launched(cfg, cartpole, episode_num=episode_num) as batched,
        launched({"type": "base"}, cartpole, episode_num=episode_num) as reference,
    ):
        ended = 0
        for _ in range(40):
            if batched.done:
                break
            ids = np.asarray(batched.ready_obs_id)
            actions = rng.integers(0, 2, size=len(ids))
            batched.send(actions, ids)
            batch = batched.recv(batch_size=len(ids))
            timesteps = reference.step({int(i): int(a) for i, a in zip(ids, actions, strict=True)})
            assert batch.env_ids.tolist() == sorted(timesteps)
            for j, env_id in enumerate(batch.env_ids.tolist()):
                ts = timesteps[env_id]
                np.testing.assert_array_equal(batch.reward[j], ts.reward)
                assert bool(batch.done[j]) == ts.done and bool(batch.terminated[j]) == ts.terminated
                expected = reference.ready_obs.get(env_id, ts.obs)  # a new episode's first obs, else the last
                np.testing.assert_array_equal(batch.obs[j], expected)
                if ts.done:
                    ended += 1
                    np.testing.assert_array_equal(batch.final_obs[env_id], ts.obs)
            assert batched.ready_obs_id == reference.ready_obs_id
        assert batched.done == reference.done and ended >= 8
        assert reference.done == (episode_num == 2)


@pytest.mark.parametrize("cfg", KINDS, ids=["shm", "private"])
def test_a_bad_row_of_an_action_array_names_its_env_and_moves_nothing(cfg: dict[str, Any]) -> None:
    with launched(cfg, partial(CartPoleEnv, cfg={})) as manager:
        before = manager.ready_obs_batch().obs.copy()
        with pytest.raises(ValueError, match=r"env 2: action 5 is out of range for Discrete\(2\) \(accepted 0\.\.1\)"):
            manager.send(np.array([0, 1, 5, 0]), [0, 1, 2, 3])
        with pytest.raises(TypeError, match=r"env 0: action np\.float64\(0\.5\) is not a single integer"):
            manager.send(np.array([0.5, 1.0]), [0, 1])
        assert manager.ready_obs_id == [0, 1, 2, 3]
        np.testing.assert_array_equal(manager.ready_obs_batch().obs, before)
        manager.send(np.array([0, 1]), [2, 3])
        assert manager.recv().env_ids.tolist() == [2, 3]


def test_a_box_action_array_is_cast_once_and_a_wrong_shape_names_the_env() -> None:
    with launched(KINDS[0], partial(PendulumEnv, cfg={})) as manager:
        with pytest.raises(ValueError, match=r"env 0: action of shape \(2,\) does not fit (Clipped)?Box"):
            manager.send(np.zeros((2, 2)), [0, 1])
        manager.send(np.full((4, 1), 0.5, dtype=np.float64), [0, 1, 2, 3])
        batch = manager.recv()
        assert batch.reward.shape[0] == 4 and batch.obs.dtype == np.float32
