"""The profiler wrapper: per-call timings, the report at close and the cProfile dump, in and out of worker processes."""

from __future__ import annotations

import logging
import os
import pathlib
import pstats
import time
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.envs.classic_control import CartPoleEnv

from ding.envs import DingEnvWrapper
from ding.envs.env_manager import SyncSubprocessEnvManager
from ding.envs.env_wrappers import ProfilerWrapper
from ding.errors import ConfigError


class SleepyEnv(gym.Env[np.ndarray, int]):
    """``reset`` sleeps 4 ms, ``step`` 1 ms (20 ms every fifth step), ``render`` 2 ms."""

    metadata = {"render_modes": ["rgb_array"]}  # noqa: RUF012

    def __init__(self) -> None:
        self.observation_space = spaces.Box(0, 1, (1,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.render_mode = "rgb_array"
        self.t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        time.sleep(0.004)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.t += 1
        time.sleep(0.02 if self.t % 5 == 0 else 0.001)
        return np.zeros(1, np.float32), 1.0, False, False, {}

    def render(self) -> np.ndarray:
        time.sleep(0.002)
        return np.zeros((2, 2, 3), np.uint8)


def test_calls_are_counted_and_timed() -> None:
    env = ProfilerWrapper(SleepyEnv(), log_at_close=False)
    env.reset(seed=0)
    for _ in range(20):
        env.step(0)
    env.render()
    stats = env.timing_stats()
    assert (stats["reset"].count, stats["step"].count, stats["render"].count) == (1, 20, 1)
    step = stats["step"]
    assert 0.001 <= step.p50 < 0.02 <= step.p95 <= step.max  # four of twenty steps are the slow ones
    assert step.mean == pytest.approx(step.total / 20) and step.total >= 16 * 0.001 + 4 * 0.02
    assert stats["reset"].max >= 0.004 and stats["render"].mean >= 0.002
    env.close()


def test_spaces_and_values_pass_unchanged() -> None:
    plain, profiled = CartPoleEnv(), ProfilerWrapper(CartPoleEnv(), log_at_close=False)
    assert profiled.observation_space == plain.observation_space and profiled.action_space == plain.action_space
    np.testing.assert_array_equal(profiled.reset(seed=4)[0], plain.reset(seed=4)[0])
    for action in (0, 1, 1, 0):
        for got, expected in zip(profiled.step(action)[:4], plain.step(action)[:4], strict=True):
            np.testing.assert_array_equal(got, expected)


def test_close_logs_the_report_and_writes_the_profile(tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture) -> None:
    env = ProfilerWrapper(SleepyEnv(), profile_path=str(tmp_path / "prof" / "env_{pid}.prof"))
    env.reset()
    for _ in range(3):
        env.step(1)
    with caplog.at_level(logging.INFO, logger="ding.profiler"):
        env.close()
        env.close()  # once only
    reports = [r.getMessage() for r in caplog.records if r.name == "ding.profiler"]
    assert len(reports) == 1 and "env timings of" in reports[0]
    step_row = next(line for line in reports[0].splitlines() if line.startswith("step"))
    assert step_row.split()[1] == "3"
    path = tmp_path / "prof" / f"env_{os.getpid()}.prof"
    assert env.profile_file() == path and path.exists()
    functions = {name for (_, _, name) in pstats.Stats(str(path)).stats}  # type: ignore[attr-defined]
    assert {"step", "reset"} <= functions and any("sleep" in name for name in functions)


def test_without_a_path_nothing_is_written(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    env = ProfilerWrapper(SleepyEnv(), log_at_close=False)
    env.reset()
    assert env.dump_profile() is None and env.profile_file() is None
    env.close()
    assert not list(tmp_path.iterdir())


def test_each_worker_process_writes_its_own_profile(tmp_path: pathlib.Path) -> None:
    chain = [{"type": "profiler", "kwargs": {"profile_path": str(tmp_path / "w{pid}.prof"), "log_at_close": False}}]
    env_fn = partial(DingEnvWrapper, cfg={"env_id": "CartPole-v1", "env_wrapper": chain})
    with SyncSubprocessEnvManager([env_fn] * 2, {"shared_memory": True}) as manager:
        manager.seed(0)
        manager.launch()
        for _ in range(5):
            manager.step({i: np.array([0]) for i in manager.ready_obs_id})
    written = sorted(tmp_path.glob("w*.prof"))
    assert len(written) == 2 and f"w{os.getpid()}.prof" not in {p.name for p in written}
    for path in written:
        calls = {name: stat[1] for (_, _, name), stat in pstats.Stats(str(path)).stats.items()}  # type: ignore[attr-defined]
        assert calls.get("step", 0) >= 5


def test_bad_arguments_name_the_wrapper() -> None:
    with pytest.raises(ConfigError, match="profiler: profile_path must be a file path or None; got an empty string"):
        ProfilerWrapper(SleepyEnv(), profile_path=" ")
    with pytest.raises(ConfigError, match="profiler: log_at_close must be a bool; got 'yes'"):
        ProfilerWrapper(SleepyEnv(), log_at_close="yes")
