"""ManagerVectorEnv's autoreset modes, reset masks and seeds, step for step against gymnasium's SyncVectorEnv."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from ding.envs.env_manager.vector import GymnasiumPassthroughEnv, ManagerVectorEnv, gymnasium_env_fn, make_vector_env
from ding.errors import EnvManagerError
from dizoo.classic_control.cartpole.envs import CartPoleEnv

MODES = list(AutoresetMode)
KINDS: dict[str, dict[str, Any]] = {
    "base": {"type": "base"},
    "subprocess-1": {"type": "subprocess", "envs_per_worker": 1},
    "subprocess-2": {"type": "subprocess", "envs_per_worker": 2},
    "in-caller": {"type": "subprocess", "envs_per_worker": 2, "step_in_caller": True},
}
MANAGER_SETTINGS: dict[str, dict[str, Any]] = {
    "auto": {},
    "manual": {"auto_reset": False},
    "episode1": {"episode_num": 1},
}
"""The manager restarts ended envs itself (auto), leaves them waiting (manual), or is DONE after one episode."""


class CountEnv(gym.Env[np.ndarray, int]):
    """Observation: the step count (float32 (1,)); reward: the action; ends at ``max_count`` steps.

    ``truncate`` makes the end a truncation. Reset infos carry the reset's number, step infos the count.
    """

    observation_space = spaces.Box(0, 100, (1,), np.float32)
    action_space = spaces.Discrete(5)  # type: ignore[assignment]

    def __init__(self, max_count: int = 3, truncate: bool = False) -> None:
        self.max_count = max_count
        self.truncate = truncate
        self.resets = 0
        self.count = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.resets += 1
        self.count = 0
        return np.array([self.count], np.float32), {"resets": self.resets, "seed": -1 if seed is None else seed}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.count += 1
        end = self.count == self.max_count
        info = {"count": self.count}
        return np.array([self.count], np.float32), float(action), end and not self.truncate, end and self.truncate, info


def count_fns(max_counts: list[int], truncate: bool = False) -> list[Callable[[], CountEnv]]:
    return [partial(CountEnv, max_count=m, truncate=truncate) for m in max_counts]


def cartpole_fns(num: int) -> list[Callable[[], gym.Env[Any, Any]]]:
    return [partial(gym.make, "CartPole-v1") for _ in range(num)]


def assert_same_step(ours: tuple[Any, ...], theirs: tuple[Any, ...], where: str) -> None:
    obs, rewards, terminations, truncations, infos = ours
    np.testing.assert_array_equal(obs, theirs[0], err_msg=f"{where}: observations")
    assert obs.dtype == theirs[0].dtype
    np.testing.assert_array_equal(rewards, theirs[1], err_msg=f"{where}: rewards")
    np.testing.assert_array_equal(terminations, theirs[2], err_msg=f"{where}: terminations")
    np.testing.assert_array_equal(truncations, theirs[3], err_msg=f"{where}: truncations")
    assert data_equivalence(infos, theirs[4]), f"{where}: infos {infos} != {theirs[4]}"


def run_side_by_side(
    ours: ManagerVectorEnv, theirs: SyncVectorEnv, actions: np.ndarray, seed: int | list[int | None] | None
) -> int:
    """Reset both with ``seed`` and play ``actions`` (DISABLED: ended envs reset by mask); returns the episode ends."""
    mine, ref = ours.reset(seed=seed), theirs.reset(seed=seed)
    np.testing.assert_array_equal(mine[0], ref[0])
    assert data_equivalence(mine[1], ref[1]), f"reset infos {mine[1]} != {ref[1]}"
    ends = 0
    for t, row in enumerate(actions):
        step = ours.step(row)
        assert_same_step(step, theirs.step(row), f"step {t}")
        ended = step[2] | step[3]
        ends += int(ended.sum())
        if ours.autoreset_mode is AutoresetMode.DISABLED and ended.any():
            mine, ref = ours.reset(options={"reset_mask": ended}), theirs.reset(options={"reset_mask": ended})
            np.testing.assert_array_equal(mine[0], ref[0])
            assert data_equivalence(mine[1], ref[1]), f"masked reset infos {mine[1]} != {ref[1]}"
    return ends


# ----- equal to SyncVectorEnv --------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES, ids=[m.value for m in MODES])
@pytest.mark.parametrize("kind", list(KINDS))
def test_cartpole_trajectories_equal_sync_vector_env(kind: str, mode: AutoresetMode) -> None:
    actions = np.random.default_rng(0).integers(0, 2, size=(300, 3))
    theirs = SyncVectorEnv(cartpole_fns(3), autoreset_mode=mode)
    with make_vector_env(KINDS[kind], [gymnasium_env_fn(fn) for fn in cartpole_fns(3)], autoreset_mode=mode) as ours:
        assert ours.metadata["autoreset_mode"] is mode
        ends = run_side_by_side(ours, theirs, actions, seed=42)
        assert ends >= 10  # the comparison covered many episode ends
        assert ours.np_random_seed == theirs.np_random_seed == (42, 43, 44)
    theirs.close()


@pytest.mark.parametrize("mode", MODES, ids=[m.value for m in MODES])
@pytest.mark.parametrize("setting", list(MANAGER_SETTINGS))
@pytest.mark.parametrize("kind", ["base", "subprocess-2"])
@pytest.mark.parametrize("truncate", [False, True], ids=["terminate", "truncate"])
def test_counting_envs_equal_sync_vector_env(kind: str, setting: str, mode: AutoresetMode, truncate: bool) -> None:
    """Ends at different steps, reset and step infos, rewards from actions; whatever the manager does at an end."""
    fns = count_fns([2, 3, 4], truncate)
    actions = np.random.default_rng(1).integers(0, 5, size=(25, 3))
    theirs = SyncVectorEnv(fns, autoreset_mode=mode)
    cfg = {**KINDS[kind], **MANAGER_SETTINGS[setting]}
    with make_vector_env(cfg, [gymnasium_env_fn(fn) for fn in fns], autoreset_mode=mode) as ours:
        assert run_side_by_side(ours, theirs, actions, seed=None) >= 15
        assert ours.get_attr("resets") == theirs.get_attr("resets")  # nothing was reset twice
    theirs.close()


def test_next_step_starts_the_next_episode_on_the_following_step() -> None:
    with make_vector_env({"type": "subprocess"}, [gymnasium_env_fn(fn) for fn in count_fns([2, 3])]) as envs:
        obs, infos = envs.reset()
        np.testing.assert_array_equal(infos["resets"], [1, 1])
        envs.step(np.array([1, 1]))
        obs, rewards, terminations, _, infos = envs.step(np.array([2, 2]))
        np.testing.assert_array_equal(obs[:, 0], [2, 2])  # env 0's last observation, not its next episode's first
        np.testing.assert_array_equal(terminations, [True, False])
        assert "final_obs" not in infos and "resets" not in infos
        obs, rewards, terminations, _, infos = envs.step(np.array([4, 4]))
        np.testing.assert_array_equal(obs[:, 0], [0, 3])
        np.testing.assert_array_equal(rewards, [0, 4])  # env 0 ignored its action and started over
        np.testing.assert_array_equal(terminations, [False, True])
        np.testing.assert_array_equal(infos["_resets"], [True, False])
        np.testing.assert_array_equal(infos["resets"], [2, 0])
        np.testing.assert_array_equal(infos["_count"], [False, True])


def test_same_step_reports_final_obs_and_the_reset_info() -> None:
    fns = [gymnasium_env_fn(fn) for fn in count_fns([2, 3])]
    with make_vector_env({"type": "base"}, fns, autoreset_mode="SameStep") as envs:
        envs.reset()
        envs.step(np.array([1, 1]))
        obs, _, terminations, _, infos = envs.step(np.array([2, 2]))
        np.testing.assert_array_equal(obs[:, 0], [0, 2])
        np.testing.assert_array_equal(terminations, [True, False])
        np.testing.assert_array_equal(infos["_final_obs"], [True, False])
        np.testing.assert_array_equal(infos["final_obs"][0], [2])
        assert infos["final_obs"][1] is None
        assert infos["final_info"]["count"][0] == 2
        np.testing.assert_array_equal(infos["resets"], [2, 0])  # the new episode's reset info, at the top level
        np.testing.assert_array_equal(infos["count"], [0, 2])


class DiscreteCountEnv(CountEnv):
    """CountEnv with a ``Discrete`` observation returned as a Python ``int``, as gymnasium's toy-text envs do."""

    observation_space = spaces.Discrete(100)  # type: ignore[assignment]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        obs, info = super().reset(seed=seed)
        return int(obs[0]), info

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict]:
        obs, *rest = super().step(action)
        return (int(obs[0]), *rest)


@pytest.mark.parametrize("kind", list(KINDS))
def test_same_step_final_obs_is_what_the_env_returned(kind: str) -> None:
    """A Python ``int`` stays one in ``final_obs`` (SyncVectorEnv keeps the env's object), wherever the env runs."""
    fns = [partial(DiscreteCountEnv, max_count=m) for m in (2, 3, 3)]
    actions = np.random.default_rng(2).integers(0, 5, size=(12, 3))
    theirs = SyncVectorEnv(fns, autoreset_mode=AutoresetMode.SAME_STEP)
    with make_vector_env(KINDS[kind], [gymnasium_env_fn(fn) for fn in fns], autoreset_mode="SameStep") as ours:
        assert run_side_by_side(ours, theirs, actions, seed=None) >= 8
        ours.reset()
        ours.step(actions[0])
        infos = ours.step(actions[1])[-1]
        assert type(infos["final_obs"][0]) is int and infos["final_obs"][0] == 2
        assert infos["final_obs"][1] is None
    theirs.close()


def test_same_step_final_obs_of_ding_envs_are_their_arrays() -> None:
    """DI-engine-style envs hand out arrays of their spaces' dtypes; their final observations are those arrays."""
    with make_vector_env({"type": "subprocess"}, [partial(CartPoleEnv, cfg={})] * 2, autoreset_mode="SameStep") as envs:
        envs.reset(seed=0)
        for _ in range(500):
            infos = envs.step(np.array([0, 0]))[-1]
            if "final_obs" in infos:
                break
        final = next(obs for obs in infos["final_obs"] if obs is not None)
        assert isinstance(final, np.ndarray) and final.dtype == np.float32 and final.shape == (4,)


# ----- DISABLED and reset masks --------------------------------------------------------------------------------
@pytest.mark.parametrize("setting", list(MANAGER_SETTINGS))
def test_disabled_mode_needs_a_masked_reset(setting: str) -> None:
    cfg = {"type": "subprocess", **MANAGER_SETTINGS[setting]}
    with make_vector_env(cfg, [gymnasium_env_fn(fn) for fn in count_fns([1, 3])], autoreset_mode="Disabled") as envs:
        envs.reset()
        obs, _, terminations, _, _ = envs.step(np.array([1, 1]))
        np.testing.assert_array_equal(terminations, [True, False])
        with pytest.raises(EnvManagerError, match=r"envs \[0\] ended their episodes and autoreset_mode is DISABLED"):
            envs.step(np.array([1, 1]))
        obs, infos = envs.reset(options={"reset_mask": terminations})
        np.testing.assert_array_equal(obs[:, 0], [0, 1])  # env 1 keeps its observation
        np.testing.assert_array_equal(infos["resets"], [2, 0])
        assert envs.get_attr("resets") == (2, 1)  # env 0 was reset once, however its manager handles ends
        obs, *_ = envs.step(np.array([1, 1]))
        np.testing.assert_array_equal(obs[:, 0], [1, 2])


def test_reset_mask_keeps_other_envs_and_seeds_only_masked_ones() -> None:
    theirs = SyncVectorEnv(cartpole_fns(3), autoreset_mode=AutoresetMode.DISABLED)
    fns = [gymnasium_env_fn(fn) for fn in cartpole_fns(3)]
    with make_vector_env({"type": "subprocess"}, fns, autoreset_mode="Disabled") as ours:
        for envs in (ours, theirs):
            start, _ = envs.reset(seed=[0, 1, 2])
            for _ in range(3):
                moved, *_ = envs.step(np.array([1, 0, 1]))
            obs, _ = envs.reset(seed=[0, 1, 0], options={"reset_mask": np.array([True, True, False])})
            np.testing.assert_array_equal(obs[:2], start[:2])
            np.testing.assert_array_equal(obs[2], moved[2])
        assert ours.np_random_seed == theirs.np_random_seed == (0, 1, 2)
    theirs.close()


def test_reset_argument_errors_are_gymnasiums() -> None:
    with make_vector_env({"type": "base"}, [gymnasium_env_fn(fn) for fn in cartpole_fns(3)]) as envs:
        envs.reset(options={"reset_mask": np.array([True, False, True])})  # a mask on the first reset is fine
        with pytest.raises(ValueError, match=r"must have shape `\(3,\)`, got \(1, 3\)"):
            envs.reset(options={"reset_mask": np.array([[True, True, True]])})
        with pytest.raises(TypeError, match=r"must have `dtype=np.bool_`, got int64"):
            envs.reset(options={"reset_mask": np.array([1, 0, 1])})
        with pytest.raises(TypeError, match=r"must be a numpy array, got <class 'list'>"):
            envs.reset(options={"reset_mask": [True, True, True]})
        with pytest.raises(ValueError, match=r"at least one True value, got reset_mask=\[False False False\]"):
            envs.reset(options={"reset_mask": np.zeros(3, bool)})
        with pytest.raises(ValueError, match=r"accept only 'reset_mask'.*\['difficulty'\]"):
            envs.reset(options={"difficulty": 2})
        with pytest.raises(ValueError, match=r"one entry per env \(3\), got 2"):
            envs.reset(seed=[1, 2])
        with pytest.raises(TypeError, match=r"seed must be an int, a list of ints \(or None\) per env, or None"):
            envs.reset(seed=1.5)  # type: ignore[arg-type]


# ----- seeds -----------------------------------------------------------------------------------------------------
def test_unseeded_first_reset_is_the_launch_itself() -> None:
    """Envs seeded in their constructors (as gymnasium's tests make them) give SyncVectorEnv's unseeded reset."""

    def seeded(i: int) -> gym.Env[Any, Any]:
        env = gym.make("CartPole-v1")
        env.reset(seed=i)
        return env

    fns = [partial(seeded, i) for i in range(3)]
    theirs = SyncVectorEnv(fns)
    with make_vector_env({"type": "subprocess"}, [gymnasium_env_fn(fn) for fn in fns]) as ours:
        assert ours.np_random_seed == (0, 1, 2)
        np.testing.assert_array_equal(ours.reset()[0], theirs.reset()[0])
        actions = np.random.default_rng(3).integers(0, 2, size=(60, 3))
        for t, row in enumerate(actions):
            assert_same_step(ours.step(row), theirs.step(row), f"step {t}")
        ours.set_attr("gravity", 9.8)  # touching the envs makes the next reset a real one
        np.testing.assert_array_equal(ours.reset()[0], theirs.reset()[0])
    theirs.close()


def test_ding_envs_get_their_seeds_through_the_manager() -> None:
    """A DI-engine-style env seeds each episode from its seed: the same seed replays the same episodes."""
    fns = [partial(CartPoleEnv, cfg={}) for _ in range(2)]
    actions = np.random.default_rng(0).integers(0, 2, size=(120, 2))
    runs = []
    for _ in range(2):
        with make_vector_env({"type": "subprocess"}, fns) as envs:
            observations = [envs.reset(seed=7)[0].copy()]
            observations += [envs.step(row)[0].copy() for row in actions]
            runs.append(np.stack(observations))
            assert envs.np_random_seed == (7, 8)  # ding envs have none of their own: the seeds reset gave
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0][:, 0], runs[0][:, 1])


def test_gymnasium_env_seeds_only_the_next_reset() -> None:
    env = GymnasiumPassthroughEnv(gym.make("CartPole-v1"))
    reference = gym.make("CartPole-v1")
    env.seed(3)
    starts = [env.reset() for _ in range(3)]
    expected = [reference.reset(seed=3)[0]] + [reference.reset()[0] for _ in range(2)]
    np.testing.assert_array_equal(np.stack(starts), np.stack(expected))
    env.close()
    reference.close()
