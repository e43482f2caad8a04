"""DI-engine's env implementation checks (``ding.envs.env``): each rule fails with its message; bad types TypeError."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from ding.envs import BaseEnv, BaseEnvTimestep, DingEnvWrapper
from ding.envs.env import (
    check_all,
    check_array_space,
    check_different_memory,
    check_obs_deepcopy,
    check_reset,
    check_space_dtype,
    check_step,
    demonstrate_correct_procedure,
)
from ding.errors import EnvConformanceError

BOX = gym.spaces.Box(0, 10, (3,), np.int64)


class CountEnv(BaseEnv):
    """A DI-engine-style env counting steps; subclasses break one rule each."""

    def __init__(self, cfg: Mapping[str, Any]) -> None:
        self._cfg = cfg
        self._observation_space = gym.spaces.Box(0.0, 100.0, (2,), np.float32)
        self._action_space = gym.spaces.Discrete(3)
        self._reward_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
        self._episode_len = int(cfg.get("episode_len", 5))

    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        self._seed = seed

    def reset(self) -> Any:
        self._t = 0
        return self._obs()

    def _obs(self) -> Any:
        return np.array([self._t, 0], np.float32)

    def step(self, action: Any) -> BaseEnvTimestep:
        self._t += 1
        done = self._t >= self._episode_len
        info = {"eval_episode_return": np.zeros(1, np.float32)} if done else {}
        return BaseEnvTimestep(self._obs(), np.ones(1, np.float32), done, info)

    def close(self) -> None:
        pass


class Float64Space(CountEnv):
    def __init__(self, cfg: Mapping[str, Any]) -> None:
        super().__init__(cfg)
        self._observation_space = gym.spaces.Box(0.0, 100.0, (2,), np.float64)


class Int32Action(CountEnv):
    def __init__(self, cfg: Mapping[str, Any]) -> None:
        super().__init__(cfg)
        self._action_space = gym.spaces.Box(0, 5, (2,), np.int32)


class Float64Reset(CountEnv):
    def reset(self) -> Any:
        super().reset()
        return np.zeros(2, np.float64)


class ListObs(CountEnv):
    def reset(self) -> Any:
        super().reset()
        return [0.0, 0.0]


class WideReward(CountEnv):
    def step(self, action: Any) -> BaseEnvTimestep:
        return super().step(action)._replace(reward=np.ones(2, np.float32))


class NoReturn(CountEnv):
    def step(self, action: Any) -> BaseEnvTimestep:
        ts = super().step(action)
        ts.info.pop("eval_episode_return", None)
        return ts


class Endless(CountEnv):
    def step(self, action: Any) -> BaseEnvTimestep:
        return super().step(action)._replace(done=False, info={})


class ReusedBuffer(CountEnv):
    def _obs(self) -> Any:
        if not hasattr(self, "_buffer"):
            self._buffer = np.zeros(2, np.float32)
        self._buffer[0] = self._t
        return self._buffer


class ForgetsSeed(CountEnv):
    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        pass


class ReseedsOnReset(CountEnv):
    def reset(self) -> Any:
        self._seed = 0
        return super().reset()


def test_a_conforming_env_and_dingenvwrapper_pass() -> None:
    check_all(CountEnv({}))
    demonstrate_correct_procedure(CountEnv)
    check_all(DingEnvWrapper(cfg={"env_id": "CartPole-v1"}))


def test_conformance_error_is_an_assertion_error() -> None:
    assert issubclass(EnvConformanceError, AssertionError)


@pytest.mark.parametrize(
    ("env_cls", "match"),
    [
        (Float64Space, r"obs space: dtype float64; float spaces must be float32"),
        (Int32Action, r"act space: dtype int32; integer spaces must be int64"),
    ],
)
def test_check_space_dtype_names_the_space(env_cls: type[CountEnv], match: str) -> None:
    with pytest.raises(EnvConformanceError, match=match):
        check_space_dtype(env_cls({}))


def test_check_space_dtype_checks_dict_leaves() -> None:
    class DictObs(CountEnv):
        def __init__(self, cfg: Mapping[str, Any]) -> None:
            super().__init__(cfg)
            self._observation_space = gym.spaces.Dict({"a": gym.spaces.Box(0, 1, (1,), np.float16)})

    with pytest.raises(EnvConformanceError, match=r"obs space\.a: dtype float16"):
        check_space_dtype(DictObs({}))


def test_check_reset_names_dtype_and_rejects_non_arrays() -> None:
    with pytest.raises(EnvConformanceError, match=r"obs: dtype float64, declared float32"):
        check_reset(Float64Reset({}))
    with pytest.raises(TypeError, match=r"obs\[0\] must be an np\.ndarray or a dict / sequence of them, got float"):
        check_reset(ListObs({}))


@pytest.mark.parametrize(
    ("env_cls", "match"),
    [
        (WideReward, r"rew: shape \(2,\), declared \(1,\)"),
        (NoReturn, r"episode end: info lacks 'eval_episode_return'"),
    ],
)
def test_check_step_names_the_broken_rule(env_cls: type[CountEnv], match: str) -> None:
    with pytest.raises(EnvConformanceError, match=match):
        check_step(env_cls({}))


def test_check_step_and_obs_deepcopy_stop_after_max_steps() -> None:
    with pytest.raises(EnvConformanceError, match="0 of 3 episodes ended within 50 steps"):
        check_step(Endless({}), max_steps=50)
    with pytest.raises(EnvConformanceError, match="no episode ended within 50 steps"):
        check_obs_deepcopy(Endless({}), max_steps=50)


def test_check_obs_deepcopy_finds_a_reused_buffer() -> None:
    with pytest.raises(EnvConformanceError, match="in step 1, the last and this observation share memory"):
        check_obs_deepcopy(ReusedBuffer({}))


@pytest.mark.parametrize(
    ("env_fn", "match"),
    [
        (ForgetsSeed, "seed\\(4\\) did not record the seed as _seed"),
        (ReseedsOnReset, "reset changed _seed from 4"),
        (NoReturn, "info lacks 'eval_episode_return'"),
    ],
)
def test_demonstrate_correct_procedure_names_the_broken_step(env_fn: type[CountEnv], match: str) -> None:
    with pytest.raises(EnvConformanceError, match=match):
        demonstrate_correct_procedure(env_fn)


def test_bad_argument_types_raise_type_error() -> None:
    with pytest.raises(TypeError, match="check_space_dtype takes an env with reset\\(\\) and step\\(\\), got object"):
        check_all(object())
    with pytest.raises(TypeError, match="check_reset takes an env with reset\\(\\) and step\\(\\), got int"):
        check_reset(3)
    with pytest.raises(TypeError, match="env_fn must be callable"):
        demonstrate_correct_procedure("CountEnv")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "space", "match"),
    [
        (np.array([1, 2, 3]), BOX, None),
        (np.array([1, 2, 11]), BOX, "value outside the declared Box"),
        (np.array([1.0, 2.0, 3.0], np.float32), BOX, "dtype float32, declared int64"),
        (np.array([1, 2]), BOX, r"shape \(2,\), declared \(3,\)"),
        ((np.array([1, 2, 3]), np.array([4.0, 5.0, 6.0], np.float32)), [BOX, BOX], r"seq\[1\]: dtype float32"),
        ({"a": np.array([1, 2, 3])}, {"a": BOX, "b": BOX}, r"keys \['a'\], declared \['a', 'b'\]"),
        ({"a": np.array([1, 2, 3])}, gym.spaces.Dict({"a": BOX}), None),
        (np.array(2), gym.spaces.Discrete(3), None),
        (np.array(5), gym.spaces.Discrete(3), "is not in Discrete"),
    ],
)
def test_check_array_space(value: Any, space: Any, match: str | None) -> None:
    if match is None:
        check_array_space(value, space, "seq")
    else:
        with pytest.raises(EnvConformanceError, match=match):
            check_array_space(value, space, "seq")


@pytest.mark.parametrize(
    ("value", "space", "name", "match"),
    [
        (1, BOX, "x", "x must be an np.ndarray or a dict / sequence of them, got int 1"),
        ({"a": "text"}, {"a": BOX}, "x", r"x\.a must be an np\.ndarray"),
        (np.zeros(3), "box", "x", "the space of x must be a gymnasium space, or a dict / list of them; got 'box'"),
        (np.zeros(3), {"a": 3}, "x", r"the space of x\.a must be a gymnasium space"),
        (np.zeros(3), BOX, 7, "name must be a str, got int 7"),
    ],
)
def test_check_array_space_type_errors(value: Any, space: Any, name: Any, match: str) -> None:
    with pytest.raises(TypeError, match=match):
        check_array_space(value, space, name)


def test_check_different_memory() -> None:
    a, b = np.zeros(3), np.zeros(3)
    check_different_memory(a, b, 1)
    check_different_memory({"x": (a, a.copy())}, {"x": (b, b.copy())}, 1)
    cases: list[tuple[Any, Any, str]] = [
        (a, a, "in step 2, the last and this observation share memory"),
        (a, a[1:], "share memory"),
        ((a,), [b], "differ in type: tuple and list"),
        ({"x": a}, {"y": b}, r"different keys: \['x'\] and \['y'\]"),
        ((a,), (b, b), "lengths 1 and 2"),
        (1, {"x": a}, "differ in type: int and dict"),
    ]
    for first, second, match in cases:
        with pytest.raises(EnvConformanceError, match=match):
            check_different_memory(first, second, 2)
    with pytest.raises(TypeError, match=r"observations must be np\.ndarrays or dicts / sequences of them, got int 1"):
        check_different_memory(1, 2, 2)
