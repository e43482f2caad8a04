"""Seeds a user can trust: the full 32-bit range, one stream per env and role, the same seed the same run."""

from __future__ import annotations

import numpy as np
import pytest

from ding.envs import DingEnvWrapper
from ding.envs.values.seeding import SEED_BOUND, EpisodeSeeds, role_seeds
from ding.errors import ConfigError


def test_3000_collector_resets_of_one_env_start_3000_distinct_episodes() -> None:
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    env.seed(0)  # dynamic_seed: a collector's env
    starts = {env.reset().tobytes() for _ in range(3000)}
    assert len(starts) == 3000


def test_the_same_seed_replays_the_same_episodes_and_another_does_not() -> None:
    def starts(seed: int) -> list[bytes]:
        env = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
        env.seed(seed)
        return [env.reset().tobytes() for _ in range(50)]

    first = starts(3)
    assert starts(3) == first
    assert not set(starts(4)) & set(first)


def test_reseeding_restarts_the_stream() -> None:
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    env.seed(7)
    first = [env.reset().tobytes() for _ in range(5)]
    env.seed(7)
    assert [env.reset().tobytes() for _ in range(5)] == first


def test_episode_seeds_cover_the_full_32_bit_range() -> None:
    stream = EpisodeSeeds(0)
    seeds = np.array([stream.draw() for _ in range(20_000)])
    assert seeds.min() >= 0 and seeds.max() < SEED_BOUND
    assert seeds.max() > 2**31 and len(set(seeds.tolist())) > 19_990  # not DI-engine's 999 values
    assert np.histogram(seeds, bins=4, range=(0, SEED_BOUND))[0].min() > 4_500  # spread over the range


def test_role_seeds_are_per_role_per_env_distinct_and_reproducible() -> None:
    seeds = role_seeds(5, {"collector": 8, "evaluator": 5})
    every = seeds["collector"] + seeds["evaluator"]
    assert len(set(every)) == 13 and all(0 <= s < SEED_BOUND for s in every)
    assert role_seeds(5, {"collector": 8, "evaluator": 5}) == seeds
    assert role_seeds(6, {"collector": 8})["collector"] != seeds["collector"]
    assert role_seeds(5, {"evaluator": 5})["evaluator"] == seeds["evaluator"]  # a role's seeds are its own


def test_collector_episode_seeds_do_not_meet_the_evaluator_seeds() -> None:
    seeds = role_seeds(0, {"collector": 2, "evaluator": 2})
    collector = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    collector.seed(seeds["collector"][0])
    drawn = {collector._next_episode_seed() for _ in range(3000)}
    assert len(drawn) == 3000 and not drawn & set(seeds["evaluator"]) and not drawn & set(seeds["collector"])
    evaluator = DingEnvWrapper(cfg={"env_id": "CartPole-v1"}, caller="evaluator")
    evaluator.seed(seeds["evaluator"][0], dynamic_seed=False)
    assert {evaluator._next_episode_seed() for _ in range(3)} == {seeds["evaluator"][0]}


def test_bad_seeds_and_roles_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"a seed must be an int >= 0, got -1"):
        EpisodeSeeds(-1)
    with pytest.raises(ConfigError, match=r"unknown roles \['learner'\]; roles: \['collector', 'evaluator'\]"):
        role_seeds(0, {"learner": 1})
    with pytest.raises(ConfigError, match=r"env_nums\['collector'\] must be an int >= 0, got 1.5"):
        role_seeds(0, {"collector": 1.5})  # type: ignore[dict-item]
