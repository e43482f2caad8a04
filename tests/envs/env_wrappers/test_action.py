"""Behaviour of the action wrappers: what the inner env really receives."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.env_wrappers import update_shape, update_space
from ding.envs.env_wrappers.action import (
    ActionOffsetWrapper,
    ContinuousActionClipWrapper,
    DiscreteActionWrapper,
    NormalizedActionWrapper,
    TemporallyCorrelatedNoiseWrapper,
    TimeShiftWrapper,
    zero_action,
)
from ding.envs.values.conversion import ClippedBox
from ding.errors import ConfigError, ShapeRuleError


class RecordingEnv(gym.Env[np.ndarray, Any]):
    """Records every action it receives; the observation is the step counter, episodes last ``episode_len``."""

    def __init__(self, action_space: spaces.Space[Any], episode_len: int = 1000) -> None:
        self.observation_space = spaces.Box(0, episode_len, (1,), np.float32)
        self.action_space = action_space
        self.episode_len = episode_len
        self.received: list[Any] = []
        self.t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        self.received.append(action)
        self.t += 1
        return np.array([self.t], np.float32), float(self.t), self.t >= self.episode_len, False, {}


def _box(low: Any, high: Any, dtype: Any = np.float32) -> spaces.Box:
    return spaces.Box(np.array(low, dtype=dtype), np.array(high, dtype=dtype), dtype=dtype)


# --- continuous_action_clip -------------------------------------------------------------------------------------


def test_clip_clips_each_dimension_to_its_bounds() -> None:
    inner = RecordingEnv(_box([-2.0, 0.0], [3.0, 1.0]))
    env = ContinuousActionClipWrapper(inner)
    env.reset(seed=0)
    env.step(np.array([10.0, -5.0]))
    env.step(np.array([-9.0, 0.25]))
    np.testing.assert_array_equal(inner.received[0], [3.0, 0.0])
    np.testing.assert_array_equal(inner.received[1], [-2.0, 0.25])
    assert inner.received[0].dtype == np.float32
    assert isinstance(env.action_space, ClippedBox) and env.action_space == ClippedBox.of(inner.action_space)
    assert env.action_space != inner.action_space  # same bounds, but it takes actions the inner space refuses


def test_clip_rejects_discrete_and_multibinary() -> None:
    with pytest.raises(ShapeRuleError, match=r"continuous_action_clip needs a continuous \(Box\).*got Discrete\(3\)"):
        ContinuousActionClipWrapper(RecordingEnv(spaces.Discrete(3)))
    with pytest.raises(
        TypeError, match=r"continuous_action_clip needs a continuous \(Box\) action space; got MultiBinary\(2\)"
    ):
        ContinuousActionClipWrapper(RecordingEnv(spaces.MultiBinary(2)))


def test_clip_declares_a_clipped_box_that_normalized_action_keeps() -> None:
    box = _box([-2.0], [2.0])
    clipped = update_space(spaces.Box(-1, 1, (3,)), box, None, ["continuous_action_clip"]).action
    assert isinstance(clipped, ClippedBox) and clipped == ClippedBox.of(box)
    unit = update_space(spaces.Box(-1, 1, (3,)), box, None, ["continuous_action_clip", "normalized_action"]).action
    assert unit == ClippedBox(-1.0, 1.0, (1,), np.float32)
    plain = update_space(spaces.Box(-1, 1, (3,)), box, None, ["normalized_action"]).action
    assert type(plain) is spaces.Box  # strict unless something in the chain clips
    assert update_shape((3,), (1,), (1,), ["continuous_action_clip", "normalized_action"]) == ((3,), (1,), (1,))


# --- normalized_action ------------------------------------------------------------------------------------------


def test_normalized_maps_minus_one_zero_one_to_low_mid_high_exactly() -> None:
    low, high = [-2.0, 0.0, 0.1], [3.0, 10.0, 0.7]
    inner = RecordingEnv(_box(low, high))
    env = NormalizedActionWrapper(inner)
    assert env.action_space == spaces.Box(-1.0, 1.0, (3,), np.float32)
    env.reset(seed=0)
    for a in (-1.0, 0.0, 1.0, 7.0, -7.0):
        env.step(np.full(3, a, np.float32))
    lo, hi = np.array(low, np.float32), np.array(high, np.float32)
    mid = ((lo.astype(np.float64) + hi.astype(np.float64)) / 2).astype(np.float32)
    for got, want in zip(inner.received, [lo, mid, hi, hi, lo], strict=True):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == np.float32


def test_normalized_on_pendulum() -> None:
    inner = gym.make("Pendulum-v1").unwrapped
    env = NormalizedActionWrapper(inner)
    assert env.action(np.array([0.5])) == pytest.approx([1.0])
    predicted = update_space(inner.observation_space, inner.action_space, None, "mujoco_default")
    assert predicted.action == spaces.Box(-1.0, 1.0, (1,), np.float32)


def test_normalized_errors() -> None:
    with pytest.raises(ShapeRuleError, match=r"normalized_action needs a continuous \(Box\).*got Discrete\(3\)"):
        NormalizedActionWrapper(RecordingEnv(spaces.Discrete(3)))
    with pytest.raises(ShapeRuleError, match=r"normalized_action needs finite action bounds; got low=\[-inf, 0.0\]"):
        NormalizedActionWrapper(RecordingEnv(_box([-np.inf, 0.0], [1.0, np.inf])))
    with pytest.raises(ShapeRuleError, match=r"wrapper chain step 0 normalized_action\(\).*got action shape 6"):
        update_shape((4,), 6, (1,), ["normalized_action"])


# --- discrete_action --------------------------------------------------------------------------------------------


def test_discrete_maps_indices_to_evenly_spaced_values() -> None:
    inner = RecordingEnv(_box([-2.0, 0.0], [3.0, 1.0]))
    env = DiscreteActionWrapper(inner, bins=5)
    assert env.action_space == spaces.MultiDiscrete([5, 5])
    env.reset(seed=0)
    for index in ([0, 0], [4, 4], [2, 1], [1, 3]):
        env.step(np.array(index))
    np.testing.assert_array_equal(inner.received[0], [-2.0, 0.0])
    np.testing.assert_array_equal(inner.received[1], [3.0, 1.0])
    np.testing.assert_allclose(inner.received[2], [0.5, 0.25])
    np.testing.assert_allclose(inner.received[3], [-0.75, 0.75])
    assert all(a.dtype == np.float32 for a in inner.received)


def test_discrete_single_dimension_and_higher_rank() -> None:
    assert update_shape((3,), (1,), (1,), [("discrete_action", {"bins": 3})]) == ((3,), [3], (1,))
    inner = RecordingEnv(_box([[0.0, 10.0], [20.0, 30.0]], [[1.0, 11.0], [21.0, 31.0]]))
    env = DiscreteActionWrapper(inner, bins=2)
    assert env.action_space == spaces.MultiDiscrete([2, 2, 2, 2])
    env.reset(seed=0)
    env.step(np.array([0, 1, 1, 0]))  # C order: [0, 0], [0, 1], [1, 0], [1, 1]
    np.testing.assert_array_equal(inner.received[0], [[0.0, 11.0], [21.0, 30.0]])


def test_discrete_errors() -> None:
    box = _box([-1.0], [1.0])
    with pytest.raises(ConfigError, match=r"discrete_action: bins must be an int >= 2; got 1"):
        DiscreteActionWrapper(RecordingEnv(box), bins=1)
    with pytest.raises(ShapeRuleError, match=r"step 0 discrete_action.*ConfigError: .*must be an int >= 2; got 2.5"):
        update_space(spaces.Box(-1, 1, (2,)), box, None, [("discrete_action", {"bins": 2.5})])
    with pytest.raises(ShapeRuleError, match=r"discrete_action needs finite action bounds; got low=\[-inf\]"):
        DiscreteActionWrapper(RecordingEnv(_box([-np.inf], [1.0])))
    with pytest.raises(ShapeRuleError, match=r"discrete_action needs a continuous \(Box\).*\[3, 3\] \(MultiDiscrete\)"):
        update_shape((4,), [3, 3], (1,), ["discrete_action"])
    env = DiscreteActionWrapper(RecordingEnv(box), bins=3)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"discrete_action got indices \[3\]; each must be in \[0, 2\]"):
        env.step(np.array([3]))


# --- action_offset ----------------------------------------------------------------------------------------------


def test_offset_discrete_adds_the_start_back() -> None:
    inner = RecordingEnv(spaces.Discrete(5, start=3))
    env = ActionOffsetWrapper(inner)
    assert env.action_space == spaces.Discrete(5)
    env.reset(seed=0)
    env.step(0)
    env.step(np.int64(4))
    assert inner.received == [3, 7]
    assert all(inner.action_space.contains(a) for a in inner.received)


def test_offset_multidiscrete_adds_the_start_back() -> None:
    inner = RecordingEnv(spaces.MultiDiscrete([3, 4], start=[1, -2]))
    env = ActionOffsetWrapper(inner)
    assert env.action_space == spaces.MultiDiscrete([3, 4])
    env.reset(seed=0)
    env.step(np.array([0, 0]))
    env.step(np.array([2, 3]))
    np.testing.assert_array_equal(inner.received, [[1, -2], [3, 1]])


def test_offset_zero_based_passes_through() -> None:
    inner = RecordingEnv(spaces.Discrete(4))
    env = ActionOffsetWrapper(inner)
    assert env.action_space is inner.action_space
    env.reset(seed=0)
    env.step(2)
    assert inner.received == [2]


def test_offset_spaces_ahead_of_time_and_errors() -> None:
    obs = spaces.Box(-1, 1, (3,))
    assert update_space(obs, spaces.Discrete(6, start=-3), None, ["action_offset"]).action == spaces.Discrete(6)
    with pytest.raises(
        ShapeRuleError, match=r"action_offset needs a Discrete or MultiDiscrete.*got Box\(0.0, 1.0, \(2,\), float32\)"
    ):
        ActionOffsetWrapper(RecordingEnv(_box([0.0, 0.0], [1.0, 1.0])))


# --- temporally_correlated_noise --------------------------------------------------------------------------------


def _noisy_run(seed: int, steps: int, **kwargs: Any) -> np.ndarray:
    inner = RecordingEnv(_box([-100.0] * 2, [100.0] * 2, np.float64), episode_len=steps)
    env = TemporallyCorrelatedNoiseWrapper(inner, **kwargs)
    env.reset(seed=seed)
    zero = np.zeros(2)
    for _ in range(steps):
        env.step(zero)
    return np.array(inner.received)


def test_noise_is_deterministic_under_seed() -> None:
    first, again, other = _noisy_run(3, 50), _noisy_run(3, 50), _noisy_run(4, 50)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    assert np.all(first != 0.0)


def test_noise_is_mean_reverting_ornstein_uhlenbeck() -> None:
    theta, sigma, dt = 1.0, 1.0, 0.1
    noise = _noisy_run(0, 20000, theta=theta, sigma=sigma, dt=dt)[1000:]
    decay = 1 - theta * dt
    stationary_var = sigma**2 * dt / (1 - decay**2)  # a random walk (theta=0) would have growing variance
    assert noise.var(axis=0) == pytest.approx([stationary_var] * 2, rel=0.15)
    assert abs(noise.mean()) < 0.1
    lag1 = [np.corrcoef(noise[:-1, i], noise[1:, i])[0, 1] for i in range(2)]
    assert lag1 == pytest.approx([decay] * 2, abs=0.02)


def test_noise_restarts_each_episode_and_stays_in_bounds() -> None:
    inner = RecordingEnv(_box([-0.1, -0.1], [0.1, 0.1]), episode_len=30)
    env = TemporallyCorrelatedNoiseWrapper(inner, sigma=50.0)
    env.reset(seed=0)
    for _ in range(30):
        env.step(np.zeros(2, np.float32))
    assert np.any(env.noise != 0.0)
    received = np.array(inner.received)
    assert received.min() == pytest.approx(-0.1) and received.max() == pytest.approx(0.1)
    assert all(inner.action_space.contains(a) for a in inner.received)
    env.reset()
    np.testing.assert_array_equal(env.noise, [0.0, 0.0])


def test_noise_errors() -> None:
    with pytest.raises(
        ShapeRuleError, match=r"temporally_correlated_noise needs a continuous \(Box\).*got Discrete\(2\)"
    ):
        TemporallyCorrelatedNoiseWrapper(RecordingEnv(spaces.Discrete(2)))
    with pytest.raises(
        ShapeRuleError, match=r"step 0 temporally_correlated_noise.*sigma must be a finite number >= 0; got -1.0"
    ):
        update_shape((3,), (1,), (1,), [("temporally_correlated_noise", {"sigma": -1.0})])
    with pytest.raises(ConfigError, match=r"temporally_correlated_noise: dt must be a finite number > 0; got 0"):
        TemporallyCorrelatedNoiseWrapper(RecordingEnv(_box([0.0], [1.0])), dt=0)
    with pytest.raises(ConfigError, match=r"theta \* dt <= 1.*theta=20.0, dt=0.1"):
        TemporallyCorrelatedNoiseWrapper(RecordingEnv(_box([0.0], [1.0])), theta=20.0, dt=0.1)


# --- time_shift -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shift", [0, 1, 3])
def test_time_shift_lags_exactly_shift_steps_with_default_at_episode_start(shift: int) -> None:
    inner = RecordingEnv(spaces.Discrete(10), episode_len=6)
    env = TimeShiftWrapper(inner, shift=shift, default_action=9)
    for _ in range(2):  # the lag restarts with each episode
        inner.received.clear()
        env.reset(seed=0)
        for t in range(6):
            env.step(t)
        assert inner.received == [9] * shift + list(range(6 - shift))


def test_time_shift_default_action_is_zero_or_low_bound() -> None:
    inner = RecordingEnv(_box([1.0, -1.0], [2.0, 1.0]))
    env = TimeShiftWrapper(inner, shift=1)
    env.reset(seed=0)
    env.step(np.array([1.5, 0.5], np.float32))
    env.step(np.array([2.0, 1.0], np.float32))
    np.testing.assert_array_equal(inner.received, [[1.0, 0.0], [1.5, 0.5]])
    assert zero_action(spaces.Discrete(3, start=2)) == 2
    assert zero_action(spaces.Discrete(3, start=-1)) == 0
    np.testing.assert_array_equal(zero_action(spaces.MultiDiscrete([2, 2], start=[1, 0])), [1, 0])
    np.testing.assert_array_equal(zero_action(_box([-np.inf], [-3.0])), [-3.0])


def test_time_shift_copies_waiting_actions() -> None:
    inner = RecordingEnv(_box([-1.0], [1.0]))
    env = TimeShiftWrapper(inner, shift=1)
    env.reset(seed=0)
    buffer = np.array([0.5], np.float32)
    env.step(buffer)
    buffer[0] = -0.5  # an agent reusing its action buffer
    env.step(buffer)
    np.testing.assert_array_equal(inner.received, [[0.0], [0.5]])


def test_time_shift_errors() -> None:
    with pytest.raises(ConfigError, match=r"time_shift: shift must be an int >= 0; got -1"):
        TimeShiftWrapper(RecordingEnv(spaces.Discrete(2)), shift=-1)
    with pytest.raises(ShapeRuleError, match=r"wrapper chain step 0 time_shift.*got 1.5"):
        update_shape((3,), 2, (1,), [("time_shift", {"shift": 1.5})])
    with pytest.raises(ConfigError, match=r"time_shift default_action 5 is not in the action space Discrete\(2\)"):
        TimeShiftWrapper(RecordingEnv(spaces.Discrete(2)), default_action=5)
    with pytest.raises(ConfigError, match=r"time_shift default_action \[0.0, 0.0\] does not fit.*Box"):
        TimeShiftWrapper(RecordingEnv(_box([-1.0], [1.0])), default_action=[0.0, 0.0])
