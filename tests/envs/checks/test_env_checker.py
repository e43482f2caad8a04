"""ding's env conformance checker: it passes a conforming env and names each broken rule."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from ding.envs import DingEnvWrapper, EnvSpaces
from ding.envs.checks.env_checker import check_ding_env
from ding.envs.conformance import check_value_in_space
from ding.envs.timestep import BaseEnvTimestep
from ding.errors import EnvConformanceError
from dizoo.classic_control.cartpole.envs import CartPoleEnv


def test_cartpole_conforms() -> None:
    check_ding_env(CartPoleEnv, {"max_episode_steps": 20}, steps=30)


class _DeclaresWrongShape(CartPoleEnv):
    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        return EnvSpaces(spaces.Box(-np.inf, np.inf, (5,), np.float32), spaces.Discrete(2))

    def _check_declared_spaces(self) -> None:  # let the broken declaration through to the checker
        pass


class _UnseededActions(CartPoleEnv):
    def random_action(self) -> Any:
        return int(np.random.default_rng().integers(2))


class _IgnoresSeed(CartPoleEnv):
    def reset(self) -> Any:
        self._env.reset(seed=int(np.random.default_rng().integers(1 << 30)))
        return self._to_obs(self._env.unwrapped.state)


class _NoEpisodeReturn(CartPoleEnv):
    config: ClassVar[dict[str, Any]] = {"env_wrapper": []}

    @classmethod
    def wrapper_chain(cls, cfg: Mapping[str, Any]) -> list[Any]:
        return []


class _InfoIsList(CartPoleEnv):
    def step(self, action: Any) -> BaseEnvTimestep:
        ts = super().step(action)
        return BaseEnvTimestep(ts.obs, ts.reward, ts.done, [ts.info])  # type: ignore[arg-type]


class _Float64Obs(CartPoleEnv):
    def step(self, action: Any) -> BaseEnvTimestep:
        ts = super().step(action)
        return ts._replace(obs=ts.obs.astype(np.float64))


@pytest.mark.parametrize(
    ("env_cls", "match"),
    [
        (_UnseededActions, "seeding|random_action"),
        (_IgnoresSeed, "seeding"),
        (_InfoIsList, "done must be a bool and info a dict"),
        (_Float64Obs, r"obs at step 0: dtype float64, declared float32"),
    ],
)
def test_each_broken_rule_is_named(env_cls: type[CartPoleEnv], match: str) -> None:
    with pytest.raises(EnvConformanceError, match=match):
        check_ding_env(env_cls, {"max_episode_steps": 20}, steps=30)


def test_wrong_declaration_is_named() -> None:
    with pytest.raises(EnvConformanceError, match=r"obs after reset: shape \(4,\), declared \(5,\)"):
        check_ding_env(_DeclaresWrongShape, {"max_episode_steps": 20}, steps=30)


def test_missing_episode_return_is_named() -> None:
    # DingEnvWrapper appends eval_episode_return to any chain, so strip it from the built env
    class Stripped(CartPoleEnv):
        def step(self, action: Any) -> BaseEnvTimestep:
            ts = super().step(action)
            ts.info.pop("eval_episode_return", None)
            return ts

    with pytest.raises(EnvConformanceError, match="eval_episode_return"):
        check_ding_env(Stripped, {"max_episode_steps": 10}, steps=15)


def test_episode_end_required_only_when_asked() -> None:
    with pytest.raises(EnvConformanceError, match="no episode ended within 5 steps"):
        check_ding_env(CartPoleEnv, {"max_episode_steps": 50}, steps=5)
    check_ding_env(CartPoleEnv, {"max_episode_steps": 50}, steps=5, require_episode_end=False)


def test_gymnasium_checker_runs_on_the_inner_env() -> None:
    class BadInner(gym.Env[np.ndarray, int]):
        observation_space = spaces.Box(-1, 1, (2,), np.float32)
        action_space = spaces.Discrete(2)

        def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
            super().reset(seed=seed)
            return np.zeros(2, np.float32), {}

        def step(self, action: int) -> Any:
            return np.zeros(2, np.float32), 0.0, True, False, []  # info must be a dict

    class Given(DingEnvWrapper):
        def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
            super().__init__(BadInner(), cfg=cfg)

        @classmethod
        def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
            return EnvSpaces(BadInner.observation_space, BadInner.action_space)

    with pytest.raises((AssertionError, TypeError, AttributeError)):
        check_ding_env(Given, {}, steps=3, require_episode_end=False)


@pytest.mark.parametrize(
    ("value", "space", "reason"),
    [
        (np.zeros(2, np.float32), spaces.Box(0, 1, (2,)), None),
        (np.zeros(2, np.float64), spaces.Box(0, 1, (2,)), "dtype float64, declared float32"),
        (np.full(2, 3, np.float32), spaces.Box(0, 1, (2,)), "outside"),
        ({"a": np.zeros(1, np.float32)}, spaces.Dict({"b": spaces.Box(0, 1, (1,))}), "keys"),
        ((np.zeros(1, np.float32),), spaces.Tuple([spaces.Box(0, 1, (1,))] * 2), "not a sequence of 2"),
        (3, spaces.Discrete(2), "not in Discrete"),
    ],
)
def test_value_in_space_reasons(value: Any, space: spaces.Space[Any], reason: str | None) -> None:
    got = check_value_in_space(value, space, "obs")
    assert got is None if reason is None else reason in str(got)
