"""Real gym 0.26 envs (``pip install gym==0.26.2``, beside numpy 2 with gym's env checker off) through ding."""

from __future__ import annotations

import contextlib
import io
from typing import Any

import numpy as np
import pytest

from ding.envs import DingEnvWrapper
from ding.envs.bridges.from_old_gym import OldGymAPIAdapter
from ding.envs.env_manager import BaseEnvManager

with contextlib.redirect_stderr(io.StringIO()):  # gym prints a notice about its maintenance on import
    gym = pytest.importorskip("gym", minversion="0.26")


def make(**kwargs: Any) -> Any:
    return gym.make("CartPole-v1", disable_env_checker=True, **kwargs)


def first_obs_of_gym(seed: int) -> np.ndarray:
    obs, _ = make().reset(seed=seed)
    return np.asarray(obs)


def test_gym_026_env_steps_and_honours_its_seed_exactly() -> None:
    env = DingEnvWrapper(make())
    env.seed(7, dynamic_seed=False)
    obs = env.reset()
    assert np.array_equal(obs, first_obs_of_gym(7)) and obs.dtype == np.float32
    timestep = env.step(0)
    assert timestep.obs.shape == (4,) and timestep.reward.tolist() == [1.0] and not timestep.done
    assert np.array_equal(env.reset(), obs)  # the fixed seed again


def test_gym_026_time_limit_is_a_truncation_and_dynamic_seeds_vary() -> None:
    env = DingEnvWrapper(make(max_episode_steps=3))
    env.seed(0)  # a new episode seed at each reset
    starts = [env.reset()]
    ends = [env.step(np.int64(i % 2)) for i in range(3)]
    assert [(ts.terminated, ts.truncated) for ts in ends] == [(False, False), (False, False), (False, True)]
    starts.append(env.reset())
    assert not np.array_equal(starts[0], starts[1])
    twin = DingEnvWrapper(make(max_episode_steps=3))
    twin.seed(0)
    assert np.array_equal(twin.reset(), starts[0]) and np.array_equal(twin.reset(), starts[1])


def test_gym_026_wrappers_forward_the_seed() -> None:
    stats = gym.wrappers.RecordEpisodeStatistics(make())
    adapter = OldGymAPIAdapter(stats)
    assert adapter.reset_takes_seed
    obs, info = adapter.reset(seed=3)
    assert np.array_equal(obs, first_obs_of_gym(3)) and isinstance(info, dict)


def test_gym_026_env_checker_under_numpy_2_is_refused_with_the_fix() -> None:
    if int(np.__version__.split(".")[0]) < 2:
        pytest.skip("gym's env checker works with numpy 1")
    with pytest.raises(TypeError, match=r"PassiveEnvChecker, which fails under numpy .*disable_env_checker=True"):
        DingEnvWrapper(gym.make("CartPole-v1"))


def test_gym_026_envs_in_a_manager_play_seeded_episodes() -> None:
    with BaseEnvManager([lambda: DingEnvWrapper(make())] * 2, {"episode_num": 1}) as manager:
        manager.seed([5, 6], dynamic_seed=False)
        manager.launch()
        first = manager.ready_obs
        assert np.array_equal(first[0], first_obs_of_gym(5)) and np.array_equal(first[1], first_obs_of_gym(6))
        while not manager.done:
            manager.step({i: np.int64(0) for i in manager.ready_obs_id})
