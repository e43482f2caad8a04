"""transition_collect_mode: every transition at once, tagged with its env and where its episode begins and ends."""

from __future__ import annotations

from typing import Any

from ding.envs.env_manager import create_env_manager
from ding.policy.dqn import DQNPolicy
from ding.worker import SampleSerialCollector
from ding.worker.transitions import ENV_ID, EPISODE_END, EPISODE_START, transition_collect_mode
from tests.worker.envs import count_env


def collector_for(env_fns: list[Any], nstep: int = 3) -> SampleSerialCollector:
    env = create_env_manager({"type": "base"}, env_fns)
    env.seed(0)
    policy = DQNPolicy({"model": {"obs_shape": 2, "action_shape": 2, "encoder_hidden_size_list": [8]}, "nstep": nstep})
    return SampleSerialCollector(env, transition_collect_mode(policy.collect_mode))


def flags(transitions: list[dict[str, Any]], env_id: int) -> list[tuple[int, bool, bool]]:
    return [(int(t["obs"][0]), t[EPISODE_START], t[EPISODE_END]) for t in transitions if t[ENV_ID] == env_id]


def test_each_step_is_returned_at_once_with_its_tags() -> None:
    collector = collector_for([count_env(tag=0, episode_len=3), count_env(tag=1, episode_len=2)])
    first = collector.collect(n_sample=1)  # an n-step policy, yet no window is held back
    assert len(first) == 2 and collector.env_step == 2
    transitions = first + collector.collect(n_sample=6)
    assert sorted(transitions[0]) == sorted(
        ["obs", "action", "reward", "next_obs", "done", ENV_ID, EPISODE_START, EPISODE_END]
    )
    assert flags(transitions, 0) == [(0, True, False), (1, False, False), (2, False, True), (0, True, False)]
    assert flags(transitions, 1) == [(0, True, False), (1, False, True), (0, True, False), (1, False, True)]
    assert [t["done"] for t in transitions if t[ENV_ID] == 1] == [False, True, False, True]
    collector.close()


def test_the_step_after_an_abnormal_one_starts_an_episode() -> None:
    # env 0 raises at its 3rd step, in the middle of its first episode: the collector drops that step
    collector = collector_for([count_env(tag=0, episode_len=5, fail_at=3), count_env(tag=1, episode_len=5)])
    transitions = []
    while collector.env_step < 12:
        transitions += collector.collect(n_sample=1)
    assert collector.stats.abnormal_episode_count == 1
    assert flags(transitions, 0)[:4] == [(0, True, False), (1, False, False), (0, True, False), (1, False, False)]
    assert flags(transitions, 1)[:5] == [(0, True, False), (1, False, False), (2, False, False), (3, False, False),
                                         (4, False, True)]  # fmt: skip
    collector.close()
