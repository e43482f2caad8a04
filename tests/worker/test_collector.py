"""SampleSerialCollector: counts steps, episodes and samples; holds n-step windows; discards abnormal episodes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ding.envs.env_manager import create_env_manager
from ding.errors import EnvManagerError
from ding.policy.dqn import DQNPolicy
from ding.worker import SampleSerialCollector
from tests.worker.envs import count_env


def dqn(nstep: int = 1) -> DQNPolicy:
    return DQNPolicy({"model": {"obs_shape": 2, "action_shape": 2, "encoder_hidden_size_list": [8]}, "nstep": nstep})


def collector_for(env_fns: list[Any], nstep: int = 1, **manager: Any) -> SampleSerialCollector:
    env = create_env_manager({"type": "base", **manager}, env_fns)
    env.seed(0)
    return SampleSerialCollector(env, dqn(nstep).collect_mode)


def test_counts_steps_episodes_and_returns() -> None:
    collector = collector_for([count_env(tag=0), count_env(tag=1, reward=2.0)])
    samples = collector.collect(n_sample=10, policy_kwargs={"eps": 0.5})
    assert len(samples) == 10 and collector.env_step == 10 and collector.episode_count == 2
    assert sorted(collector.pop_returns()) == [5.0, 10.0] and collector.pop_returns() == []
    assert collector.stats.sample_count == 10 and collector.stats.abnormal_episode_count == 0
    first = [s for s in samples if s["obs"][1] == 0]
    assert [s["obs"][0] for s in first] == [0, 1, 2, 3, 4] and [s["done"] for s in first] == [False] * 4 + [True]
    np.testing.assert_array_equal(first[0]["next_obs"], [1, 0])
    collector.close()


def test_collects_at_least_n_sample_and_defaults_to_the_policy_n_sample() -> None:
    collector = collector_for([count_env() for _ in range(3)])
    assert len(collector.collect(n_sample=4)) == 6  # two steps of three envs
    assert len(collector.collect()) == 9  # the policy's n_sample is 8: three steps of three envs
    assert collector.env_step == 15
    collector.close()


def test_nstep_samples_wait_for_their_window() -> None:
    collector = collector_for([count_env(episode_len=5)], nstep=3)
    samples = collector.collect(n_sample=1)
    assert collector.env_step == 3 and len(samples) == 1
    assert samples[0]["reward"] == pytest.approx(1 + 0.97 + 0.97**2) and samples[0]["discount"] == pytest.approx(
        0.97**3
    )
    samples = collector.collect(n_sample=2)  # step 4 gives sample 1; step 5 ends the episode and flushes 2, 3, 4
    assert collector.env_step == 5 and [s["obs"][0] for s in samples] == [1, 2, 3, 4]
    assert [s["done"] for s in samples] == [False, True, True, True]
    assert [s["discount"] for s in samples] == pytest.approx([0.97**3, 0.97**3, 0.97**2, 0.97])
    collector.close()


def test_an_abnormal_episode_is_discarded_and_not_counted() -> None:
    # env 0 raises at its third step: its first episode is cut after two steps and the env is reset
    collector = collector_for([count_env(tag=0, fail_at=3), count_env(tag=1)], nstep=5)
    samples: list[dict[str, Any]] = []
    while collector.episode_count < 4:
        samples += collector.collect(n_sample=1)
    stats = collector.stats
    assert stats.abnormal_episode_count == 1
    from_env0 = [s for s in samples if s["obs"][1] == 0]
    from_env1 = [s for s in samples if s["obs"][1] == 1]
    # 13 manager steps of two envs, less the abnormal one: 2 steps of the cut episode were discarded and
    # env 1's third episode has 3 steps waiting for their n-step window
    assert collector.env_step == 25 == len(samples) + 2 + 3
    assert len(from_env0) == len(from_env1) == 10
    assert [s["obs"][0] for s in from_env0[:5]] == [0, 1, 2, 3, 4]  # a whole, fresh episode
    assert sorted(collector.pop_returns()) == [5.0] * collector.episode_count
    collector.close()


def test_a_manager_whose_envs_are_done_is_an_error() -> None:
    collector = collector_for([count_env()], episode_num=1)
    collector.collect(n_sample=5)
    with pytest.raises(EnvManagerError, match=r"finished env.manager.episode_num episodes; training needs"):
        collector.collect(n_sample=1)
    collector.close()


def test_bad_n_sample() -> None:
    collector = collector_for([count_env()])
    with pytest.raises(ValueError, match=r"n_sample must be an int >= 1, got 0"):
        collector.collect(n_sample=0)
    collector.close()


def test_collects_through_a_subprocess_manager() -> None:
    env = create_env_manager({"type": "subprocess"}, [count_env(tag=i) for i in range(2)])
    env.seed(0)
    collector = SampleSerialCollector(env, dqn().collect_mode)
    try:
        samples = collector.collect(n_sample=20)
        assert len(samples) == 20 and collector.episode_count == 4
        obs = [s["obs"] for s in samples]
        assert len({id(o) for o in obs}) == len(obs)  # every sample owns its observation
        assert sorted(int(o[0]) for o in obs if o[1] == 0) == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    finally:
        collector.close()
