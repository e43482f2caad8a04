"""``get_state`` / ``set_state`` on every manager kind: a snapshot replays the steps that followed it."""

from __future__ import annotations

import functools

import numpy as np

from dizoo.classic_control.cartpole.envs import CartPoleEnv
from tests.envs.env_manager.conftest import MakeManager


def play(manager: object, steps: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rows = []
    for t in range(steps):
        timesteps = manager.step({i: (t + i) % 2 for i in range(manager.env_num)})  # type: ignore[attr-defined]
        rows.append((np.stack([timesteps[i].obs for i in range(2)]), np.stack([timesteps[i].reward for i in range(2)])))
    return rows


def test_set_state_replays_what_followed_get_state(manager_kind: str, new_manager: MakeManager) -> None:
    manager = new_manager(manager_kind, [functools.partial(CartPoleEnv, cfg={}) for _ in range(2)])
    manager.seed(3)
    manager.launch()
    play(manager, 4)
    saved = manager.get_state()
    ready = manager.ready_obs_batch().obs.copy()
    first = play(manager, 6)
    manager.set_state(saved)
    np.testing.assert_array_equal(manager.ready_obs_batch().obs, ready)
    np.testing.assert_array_equal(np.stack([manager.ready_obs[i] for i in range(2)]), ready)
    again = play(manager, 6)
    for (obs_a, rew_a), (obs_b, rew_b) in zip(first, again, strict=True):
        np.testing.assert_array_equal(obs_a, obs_b)
        np.testing.assert_array_equal(rew_a, rew_b)
