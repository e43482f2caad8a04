"""BaseEnv subclasses written DI-engine's way: own ``__init__(cfg)``, spaces as properties, their own ``seed``.

Three variants: spaces set in ``__init__`` behind properties (:class:`LineWalkEnv`), properties whose
spaces are first known after ``reset`` (:class:`LazyLineWalkEnv`, as DI-engine's Atari env), and plain
attributes set in ``reset`` through ``BaseEnv``'s setters (:class:`AttributeLineWalkEnv`). Each is
built, used through every ``BaseEnv`` helper, checked with ``check_all``, probed in a child process
and traced by ``spec_trace_of``; :class:`MigratedLineWalkEnv` is the one-step migration (``raw_spaces``).
"""

from __future__ import annotations

import functools
import os
import pathlib
from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import pytest
from easydict import EasyDict

from ding.envs import BaseEnv, BaseEnvTimestep, EnvSpaces
from ding.envs.env import check_all, demonstrate_correct_procedure
from ding.envs.probe import PROBED_LABEL, probe_spaces, spec_trace_of
from ding.errors import EnvSpecError, SpacesNotKnownError


def _record_build(cfg: Mapping[str, Any]) -> None:
    """Append this process's pid to ``cfg['pid_file']``, so a test sees where and how often the env was built."""
    if cfg.get("pid_file"):
        with open(cfg["pid_file"], "a") as file:
            file.write(f"{os.getpid()}\n")


def _builds(path: pathlib.Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


class LineWalkEnv(BaseEnv):
    """Walk on a line of ``length`` cells; reach the end (+1) or run out of time (truncated)."""

    def __init__(self, cfg: Mapping[str, Any]) -> None:  # DI-engine's way: BaseEnv.__init__ is not called
        self._cfg = cfg
        self._length = int(cfg.get("length", 4))
        self._init_flag = False
        _record_build(cfg)
        self._make_spaces()

    def _make_spaces(self) -> None:
        self._observation_space = gym.spaces.Box(0.0, float(self._length), (2,), np.float32)
        self._action_space = gym.spaces.Discrete(2)
        self._reward_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)

    @property
    def observation_space(self) -> gym.spaces.Space[Any]:
        return self._observation_space

    @property
    def action_space(self) -> gym.spaces.Space[Any]:
        return self._action_space

    @property
    def reward_space(self) -> gym.spaces.Space[Any]:
        return self._reward_space

    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        self._seed = seed
        self._dynamic_seed = dynamic_seed

    def reset(self) -> np.ndarray:
        self._init_flag = True
        self._rng = np.random.default_rng(self._next_episode_seed())
        self._pos, self._t, self._return = int(self._rng.integers(0, self._length)), 0, 0.0
        return self._obs()

    def _obs(self) -> np.ndarray:
        return np.array([self._pos, min(self._t, self._length)], np.float32)

    def step(self, action: Any) -> BaseEnvTimestep:
        move = 1 if int(np.asarray(action).reshape(())) == 1 else -1
        self._pos = min(max(self._pos + move, 0), self._length)
        self._t += 1
        reached = self._pos == self._length
        reward = np.array([1.0 if reached else 0.0], np.float32)
        self._return += float(reward[0])
        done = reached or self._t >= 3 * self._length
        info = {"eval_episode_return": np.array([self._return], np.float32)} if done else {}
        return BaseEnvTimestep(self._obs(), reward, done, info)

    def close(self) -> None:
        self._init_flag = False

    def __repr__(self) -> str:
        return f"LineWalkEnv(length={self._length})"


class LazyLineWalkEnv(LineWalkEnv):
    """Spaces behind properties, first known after ``reset`` (reading them before raises AttributeError)."""

    def __init__(self, cfg: Mapping[str, Any]) -> None:
        self._cfg = cfg
        self._length = int(cfg.get("length", 4))
        _record_build(cfg)

    def reset(self) -> np.ndarray:
        if not hasattr(self, "_observation_space"):
            self._make_spaces()
        return super().reset()


class AttributeLineWalkEnv(LineWalkEnv):
    """No properties of its own: ``reset`` assigns ``self.observation_space = ...`` as on a gym.Env."""

    observation_space = BaseEnv.observation_space  # type: ignore[assignment]
    action_space = BaseEnv.action_space  # type: ignore[assignment]
    reward_space = BaseEnv.reward_space  # type: ignore[assignment]

    def __init__(self, cfg: Mapping[str, Any]) -> None:
        self._cfg = cfg
        self._length = int(cfg.get("length", 4))
        _record_build(cfg)

    def reset(self) -> np.ndarray:
        self.observation_space = gym.spaces.Box(0.0, float(self._length), (2,), np.float32)
        self.action_space = gym.spaces.Discrete(2)
        self.reward_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
        return super().reset()


class MigratedLineWalkEnv(LineWalkEnv):
    """The one-step migration: ``raw_spaces`` (and ``config``) state the spaces from the config alone."""

    config: ClassVar[dict[str, Any]] = {"length": 4, "pid_file": None}

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        length = float(cfg.get("length", 4))
        return EnvSpaces(
            gym.spaces.Box(0.0, length, (2,), np.float32),
            gym.spaces.Discrete(2),
            gym.spaces.Box(-1.0, 1.0, (1,), np.float32),
        )


VARIANTS = [LineWalkEnv, LazyLineWalkEnv, AttributeLineWalkEnv]
EXPECTED = EnvSpaces(
    gym.spaces.Box(0.0, 5.0, (2,), np.float32), gym.spaces.Discrete(2), gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
)


def test_spaces_before_reset_are_there_or_an_attribute_error() -> None:
    assert LineWalkEnv({"length": 5}).observation_space == EXPECTED.observation
    for cls in (LazyLineWalkEnv, AttributeLineWalkEnv):
        env = cls({"length": 5})
        assert not hasattr(env, "observation_space") and getattr(env, "action_space", None) is None
        assert "spaces not known yet" in BaseEnv.__repr__(env)
        env.reset()
        assert (env.observation_space, env.action_space) == (EXPECTED.observation, EXPECTED.action)
    with pytest.raises(SpacesNotKnownError, match=r"AttributeLineWalkEnv\.observation_space is not known"):
        _ = AttributeLineWalkEnv({}).observation_space


def test_a_reward_space_never_stated_is_di_engines_default() -> None:
    env = AttributeLineWalkEnv({})
    assert env.reward_space == gym.spaces.Box(-np.inf, np.inf, (1,), np.float32)
    env.reset()
    assert env.reward_space == EXPECTED.reward


@pytest.mark.parametrize("cls", VARIANTS)
def test_every_base_env_helper_works(cls: type[LineWalkEnv], tmp_path: pathlib.Path) -> None:
    env = cls({"length": 5})
    env.seed(3)
    env.reset()
    actions = [env.random_action() for _ in range(8)]
    assert all(a.shape == (1,) and a.dtype == np.int64 for a in actions)
    twin = cls({"length": 5})
    twin.seed(3)
    twin.reset()
    assert [int(a[0]) for a in actions] == [int(twin.random_action()[0]) for _ in range(8)]
    cfg = EasyDict({"length": 5, "collector_env_num": 3, "evaluator_env_num": 2})
    collectors, evaluators = cls.create_collector_env_cfg(cfg), cls.create_evaluator_env_cfg(cfg)
    assert [c.is_train for c in collectors] == [True] * 3 and [e.is_train for e in evaluators] == [False] * 2
    env.enable_save_replay(str(tmp_path))
    assert env._replay_path == str(tmp_path)
    assert repr(env) == "LineWalkEnv(length=5)"
    with env:
        ts = env.step(env.random_action())
    assert isinstance(ts.done, bool) and ts.reward.shape == (1,)


def test_dynamic_seed_through_base_env_gives_reproducible_varied_episodes() -> None:
    def starts(dynamic: bool) -> list[float]:
        env = LineWalkEnv({"length": 50})
        env.seed(11, dynamic_seed=dynamic)
        return [float(env.reset()[0]) for _ in range(6)]

    assert starts(True) == starts(True) and len(set(starts(True))) > 1
    assert len(set(starts(False))) == 1


@pytest.mark.parametrize("cls", VARIANTS)
def test_check_all_and_the_demonstrated_procedure_pass(cls: type[LineWalkEnv]) -> None:
    check_all(cls({"length": 3}))
    demonstrate_correct_procedure(cls)


@pytest.mark.parametrize("cls", VARIANTS)
def test_probe_builds_the_env_in_a_child_process(cls: type[LineWalkEnv], tmp_path: pathlib.Path) -> None:
    pid_file = tmp_path / "builds"
    probed = probe_spaces(functools.partial(cls, cfg={"length": 5, "pid_file": str(pid_file)}))
    assert probed == EXPECTED
    builds = _builds(pid_file)
    assert len(builds) == 1 and builds[0] != os.getpid()


def test_probe_reports_the_constructor_error_with_its_traceback() -> None:
    with pytest.raises(EnvSpecError, match=r"(?s)raised ValueError: invalid literal.*original traceback.*int\("):
        probe_spaces(functools.partial(LineWalkEnv, cfg={"length": "long"}))


def test_spec_trace_of_labels_probed_spaces_and_builds_once(tmp_path: pathlib.Path) -> None:
    pid_file = tmp_path / "builds"
    cfg = {"length": 5, "pid_file": str(pid_file)}
    trace = spec_trace_of(LazyLineWalkEnv, cfg)
    assert trace == [(f"env ({PROBED_LABEL})", EXPECTED)]
    assert spec_trace_of(LazyLineWalkEnv, EasyDict(cfg)) == trace  # same class and config: not built again
    assert len(_builds(pid_file)) == 1
    spec_trace_of(LazyLineWalkEnv, {**cfg, "length": 6})
    assert len(_builds(pid_file)) == 2


def test_migrated_env_declares_its_spaces_and_is_never_built(tmp_path: pathlib.Path) -> None:
    pid_file = tmp_path / "builds"
    cfg = {"length": 5, "pid_file": str(pid_file)}
    assert not LineWalkEnv.declares_spaces() and MigratedLineWalkEnv.declares_spaces()
    trace = spec_trace_of(MigratedLineWalkEnv, cfg)
    assert PROBED_LABEL not in trace[0][0] and trace[-1][1] == EXPECTED
    assert not pid_file.exists()
    assert MigratedLineWalkEnv.spaces_from_config(cfg) == probe_spaces(functools.partial(LineWalkEnv, cfg=cfg))
    env = MigratedLineWalkEnv(cfg)  # its DI-engine-style __init__ still works, and agrees with the declaration
    assert (env.observation_space, env.action_space, env.reward_space) == tuple(EXPECTED)
    check_all(env)
