"""BaseEnv: spaces before reset, seeding semantics, config copies."""

from __future__ import annotations

import copy
from typing import Any, ClassVar

import numpy as np
import pytest
from easydict import EasyDict
from gymnasium import spaces

from ding.envs import BaseEnv, BaseEnvTimestep, EnvSpaces


class CountingEnv(BaseEnv):
    """A minimal BaseEnv whose episode seed shows in its first observation."""

    config: ClassVar[dict[str, Any]] = {"size": 3}

    @classmethod
    def raw_spaces(cls, cfg: Any) -> EnvSpaces:
        return EnvSpaces(spaces.Box(-np.inf, np.inf, (cfg["size"],), np.float32), spaces.Discrete(2))

    def reset(self) -> Any:
        self.episode_seed = self._next_episode_seed()
        return np.full(self._cfg.size, float(self.episode_seed or 0), np.float32)

    def step(self, action: Any) -> BaseEnvTimestep:
        return BaseEnvTimestep(np.zeros(self._cfg.size, np.float32), np.zeros(1, np.float32), True, {})

    def close(self) -> None:
        pass


def test_spaces_exist_before_reset_and_follow_config() -> None:
    env = CountingEnv({"size": 5})
    assert env.observation_space.shape == (5,)
    assert env.reward_space == spaces.Box(-np.inf, np.inf, (1,), np.float32)
    assert CountingEnv.spaces_from_config({"size": 7}).shapes == ((7,), 2, (1,))


def test_dynamic_seed_varies_episodes_reproducibly() -> None:
    def seeds(dynamic: bool) -> list[int | None]:
        env = CountingEnv()
        env.seed(3, dynamic_seed=dynamic)
        out = []
        for _ in range(4):
            env.reset()
            out.append(env.episode_seed)
        return out

    dynamic = seeds(True)
    assert len(set(dynamic)) > 1 and dynamic == seeds(True)
    assert seeds(False) == [3, 3, 3, 3]


def test_seed_rejects_non_int() -> None:
    with pytest.raises(TypeError, match="seed must be an int, got '3'"):
        CountingEnv().seed("3")  # type: ignore[arg-type]


def test_random_action_is_seeded() -> None:
    a, b = CountingEnv(), CountingEnv()
    a.seed(1)
    b.seed(1)
    assert [a.random_action() for _ in range(10)] == [b.random_action() for _ in range(10)]


def test_collector_and_evaluator_cfgs_are_independent_copies() -> None:
    cfg = EasyDict({"collector_env_num": 3, "evaluator_env_num": 2, "nested": {"x": [1]}})
    before = copy.deepcopy(cfg)
    collectors = CountingEnv.create_collector_env_cfg(cfg)
    evaluators = CountingEnv.create_evaluator_env_cfg(cfg)
    assert len(collectors) == 3 and len(evaluators) == 2
    assert all(c.is_train for c in collectors) and not any(e.is_train for e in evaluators)
    collectors[0].nested.x.append(2)
    assert collectors[1].nested.x == [1] and cfg == before and "is_train" not in cfg
    with pytest.raises(ValueError, match=r"collector_env_num must be an int in \[1, 1024\] \(.*\), got 0"):
        CountingEnv.create_collector_env_cfg({"collector_env_num": 0})


def test_default_config_merges_class_keys_over_common_ones() -> None:
    cfg = CountingEnv.default_config()
    assert cfg.size == 3 and cfg.collector_env_num == 8 and cfg.manager == {}
