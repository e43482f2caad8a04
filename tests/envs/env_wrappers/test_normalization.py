"""Behaviour of the normalization wrappers and of RunningMeanStd."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.envs.classic_control import CartPoleEnv

from ding.envs.env_wrappers import update_shape, update_space
from ding.envs.env_wrappers.normalization import (
    ObsNormWrapper,
    RewardNormWrapper,
    RunningMeanStd,
    StaticObsNormWrapper,
)
from ding.envs.values.spaces import reward_space_of
from ding.errors import ConfigError, FieldPathError, ShapeRuleError
from tests.envs.env_wrappers.catalogue import make_catalogue_env


class Recorder(gym.Wrapper[Any, Any, Any, Any]):
    """Keeps the raw observations and rewards of the env it wraps, and forwards its reward space."""

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self.reward_space = reward_space_of(env)
        self.obs: list[Any] = []
        self.rewards: list[Any] = []
        self.resets: list[int] = []  # index into ``rewards`` at which each episode starts

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self.obs.append(obs)
        self.resets.append(len(self.rewards))
        return obs, info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.obs.append(obs)
        self.rewards.append(reward)
        return obs, reward, terminated, truncated, info


def run(env: gym.Env[Any, Any], steps: int, seed: int = 0) -> list[Any]:
    """Step ``env`` with seeded random actions, resetting at episode ends; return every observation it gave."""
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    seen = [obs]
    for _ in range(steps):
        obs, _, terminated, truncated, _ = env.step(env.action_space.sample())
        seen.append(obs)
        if terminated or truncated:
            obs, _ = env.reset()
            seen.append(obs)
    return seen


# --- RunningMeanStd ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(), (3,), (2, 4)])
def test_running_mean_std_matches_numpy_over_uneven_batches(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(0)
    rms = RunningMeanStd(shape=shape, epsilon=1e-6)
    seen = []
    for size in [1, 7, 1, 1, 30, 2, 0, 1, 64]:
        batch = rng.normal(3.0, 2.5, size=(size, *shape))
        rms.update(batch)
        seen.append(batch)
        data = np.concatenate(seen)
        if len(data):
            np.testing.assert_allclose(rms.mean, data.mean(axis=0), rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(rms.var, data.var(axis=0), rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(rms.std, np.sqrt(data.var(axis=0)) + 1e-6, rtol=1e-10)
        assert rms.count == len(data)
    assert rms.mean.dtype == rms.var.dtype == np.float64 and rms.mean.shape == shape


def test_running_mean_std_single_samples_and_reset() -> None:
    rms = RunningMeanStd(shape=(2,))
    assert rms.count == 0 and np.all(rms.mean == 0.0) and np.all(rms.var == 1.0)
    samples = np.array([[1.0, -1.0], [4.0, -1.0], [10.0, -1.0]])
    for sample in samples:
        rms.update(sample[None])
    np.testing.assert_allclose(rms.mean, [5.0, -1.0])
    np.testing.assert_allclose(rms.var, [14.0, 0.0])
    np.testing.assert_allclose(rms.std, np.sqrt([14.0, 0.0]) + 1e-4)
    rms.reset()
    assert rms.count == 0 and np.all(rms.mean == 0.0) and np.all(rms.var == 1.0)


def test_running_mean_std_state_round_trip_and_errors() -> None:
    rms = RunningMeanStd(shape=(3,))
    rms.update(np.arange(12.0).reshape(4, 3))
    state = rms.state_dict()
    other = RunningMeanStd(shape=(3,))
    other.load_state_dict(state)
    rms.update(np.ones((1, 3)))  # the saved state is a copy, unaffected by later updates
    assert other.count == 4
    np.testing.assert_allclose(other.mean, [4.5, 5.5, 6.5])
    with pytest.raises(ValueError, match=r"cannot load mean of shape \(2,\) and var of shape \(2,\)"):
        other.load_state_dict({"mean": [0.0, 0.0], "var": [1.0, 1.0], "count": 1})
    with pytest.raises(
        ValueError, match=r"RunningMeanStd of shape \(3,\) needs a batch of shape \(n, \*\(3,\)\); got \(3,\)"
    ):
        rms.update(np.ones(3))
    with pytest.raises(ConfigError, match=r"RunningMeanStd needs epsilon >= 0; got -1\.0"):
        RunningMeanStd(epsilon=-1.0)


# --- obs_norm --------------------------------------------------------------------------------------


def test_obs_norm_on_cartpole_uses_running_stats_of_every_observation() -> None:
    recorder = Recorder(CartPoleEnv())
    env = ObsNormWrapper(recorder, warmup=10)
    out = run(env, 400)
    raw = np.asarray(recorder.obs, dtype=np.float64)
    assert len(out) == len(raw)
    for t, obs in enumerate(out):
        assert obs.dtype == np.float32 and env.observation_space.contains(obs)
        if t < 10:  # warm-up: the raw observation, cast to float32
            np.testing.assert_array_equal(obs, np.clip(raw[t].astype(np.float32), -5.0, 5.0))
        else:
            seen = raw[: t + 1]
            expected = np.clip((raw[t] - seen.mean(axis=0)) / (np.sqrt(seen.var(axis=0)) + 1e-4), -5.0, 5.0)
            np.testing.assert_allclose(obs, expected, rtol=1e-5, atol=1e-5)
    rms = env.obs_rms[""]
    assert rms.count == len(raw)
    np.testing.assert_allclose(rms.mean, raw.mean(axis=0), atol=1e-12)


def test_obs_norm_converges_to_zero_mean_unit_std_on_cartpole() -> None:
    env = ObsNormWrapper(CartPoleEnv())
    run(env, 1500, seed=1)
    env.freeze()
    count = env.obs_rms[""].count
    out = np.asarray(run(env, 1500, seed=2))
    assert env.obs_rms[""].count == count  # frozen: statistics unchanged
    np.testing.assert_allclose(out.mean(axis=0), 0.0, atol=0.15)
    np.testing.assert_allclose(out.std(axis=0), 1.0, atol=0.15)


class SpikeEnv(gym.Env[np.ndarray, Any]):
    """Observation ``[0, t]`` for ``t`` steps, then a spike of 1000 in the first entry at step ``spike``."""

    def __init__(self, spike: int = 60) -> None:
        self.observation_space = spaces.Box(-np.inf, np.inf, (2,), np.float64)
        self.action_space = spaces.Discrete(1)
        self.spike = spike
        self.t = 0

    def _obs(self) -> np.ndarray:
        return np.array([1000.0 if self.t == self.spike else 0.0, float(self.t)])

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.t += 1
        return self._obs(), 0.0, False, False, {}


def test_obs_norm_clips_outliers_and_raw_warmup_observations() -> None:
    env = ObsNormWrapper(SpikeEnv(spike=60), clip_range=(-2.0, 2.5), warmup=40)
    assert env.observation_space == spaces.Box(-2.0, 2.5, (2,), np.float32)
    out = [env.reset(seed=0)[0]] + [env.step(0)[0] for _ in range(60)]
    # Warm-up (the first 40 observations): raw values, clipped into the declared bounds.
    np.testing.assert_array_equal(out[1], [0.0, 1.0])
    np.testing.assert_array_equal(out[39], [0.0, 2.5])
    # After warm-up the counter is normalized, not clipped: t=40 is 1.71 std above the mean of 0..40.
    np.testing.assert_allclose(out[40][1], (40 - 20) / (np.sqrt(np.var(np.arange(41.0))) + 1e-4), rtol=1e-6)
    assert out[59][0] == 0.0
    assert out[60][0] == np.float32(2.5)  # the spike is many std away: clipped to the top of the range


def test_obs_norm_frozen_with_loaded_statistics() -> None:
    source = RunningMeanStd(shape=(2,))
    source.update(np.array([[0.0, 10.0], [2.0, 30.0]]))  # mean [1, 20], var [1, 100]
    env = ObsNormWrapper(SpikeEnv(), update=False, warmup=1, epsilon=0.0)
    env.obs_rms[""].load_state_dict(source.state_dict())
    obs, _ = env.reset(seed=0)
    np.testing.assert_allclose(obs, [-1.0, -2.0])
    for t in range(1, 4):
        obs = env.step(0)[0]
        np.testing.assert_allclose(obs, [-1.0, (t - 20) / 10.0], rtol=1e-6)
    assert env.obs_rms[""].count == 2


def test_obs_norm_fields_normalize_only_the_named_entries() -> None:
    recorder = Recorder(make_catalogue_env("dict_obs"))
    env = ObsNormWrapper(recorder, warmup=0, fields=["state.pos"])
    assert set(env.obs_rms) == {"state.pos"}
    out = run(env, 25)
    raw = recorder.obs
    for t, obs in enumerate(out):
        np.testing.assert_array_equal(obs["image"], raw[t]["image"])
        np.testing.assert_array_equal(obs["state"]["vel"], raw[t]["state"]["vel"])
        assert obs["state"]["pos"].dtype == np.float32
    pos = np.asarray([o["state"]["pos"] for o in raw], dtype=np.float64)
    expected = np.clip((pos[-1] - pos.mean(axis=0)) / (np.sqrt(pos.var(axis=0)) + 1e-4), -5, 5)
    np.testing.assert_allclose(out[-1]["state"]["pos"], expected, rtol=1e-5)
    assert env.obs_rms["state.pos"].count == len(raw)


def test_obs_norm_rule_errors() -> None:
    with pytest.raises(
        ShapeRuleError, match=r"obs_norm needs Box observations; got observation shape \{'image'.*fields="
    ):
        update_shape({"image": (4, 4), "pos": (3,)}, 2, (1,), ["obs_norm"])
    with pytest.raises(
        ShapeRuleError, match=r"wrapper chain step 0 obs_norm.*needs Box observations; got observation shape 6"
    ):
        update_shape(6, 2, (1,), ["obs_norm"])
    with pytest.raises(ShapeRuleError, match=r"obs_norm needs Box observations; got observation shape 3 \(Discrete\)"):
        update_shape({"a": 3}, 2, (1,), [("obs_norm", {"fields": ["a"]})])
    with pytest.raises(FieldPathError, match="no key 'pos' at depth 1"):
        ObsNormWrapper.new_shape({"state": {"p": (3,)}}, 2, (1,), fields=["state.pos"])
    with pytest.raises(TypeError, match=r"obs_norm needs Box observations; got MultiBinary\(4\)"):
        ObsNormWrapper.new_space(spaces.MultiBinary(4), spaces.Discrete(2), spaces.Box(-1, 1, (1,)))
    with pytest.raises(ConfigError, match=r"obs_norm clip_range needs low < high; got \(1.0, -1.0\)"):
        ObsNormWrapper(CartPoleEnv(), clip_range=(1.0, -1.0))
    with pytest.raises(
        ShapeRuleError,
        match=r"ConfigError: obs_norm: clip_range must be a \(low, high\) pair of numbers or None; got 5.0",
    ):
        update_shape((4,), 2, (1,), [("obs_norm", {"clip_range": 5.0})])
    with pytest.raises(ConfigError, match="obs_norm: warmup must be an int >= 0; got -1"):
        ObsNormWrapper(CartPoleEnv(), warmup=-1)
    with pytest.raises(ConfigError, match=r"obs_norm: epsilon must be a finite number >= 0; got -0\.1"):
        ObsNormWrapper(CartPoleEnv(), epsilon=-0.1)


# --- static_obs_norm -------------------------------------------------------------------------------


def test_static_obs_norm_exact_values_and_clipping() -> None:
    recorder = Recorder(make_catalogue_env("vector_float64"))
    mean, std = [0.1, -0.2, 0.3], [0.5, 0.25, 2.0]
    env = StaticObsNormWrapper(recorder, mean=mean, std=std, clip_range=(-1.5, 1.5))
    assert env.observation_space == spaces.Box(-1.5, 1.5, (3,), np.float32)
    out = run(env, 30)
    raw = np.asarray(recorder.obs)
    expected = np.clip((raw - np.array(mean)) / np.array(std), -1.5, 1.5)
    got = np.asarray(out)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    assert np.any(np.abs(got) == np.float32(1.5))  # some entries really were clipped


def test_static_obs_norm_broadcasts_per_channel_statistics_over_images() -> None:
    recorder = Recorder(make_catalogue_env("image_hwc"))
    env = StaticObsNormWrapper(recorder, mean=[100.0, 50.0, 0.0], std=[10.0, 20.0, 255.0])
    assert env.observation_space == spaces.Box(-np.inf, np.inf, (48, 64, 3), np.float32)
    obs, _ = env.reset(seed=3)
    raw = recorder.obs[-1].astype(np.float64)
    np.testing.assert_allclose(obs[..., 0], (raw[..., 0] - 100.0) / 10.0, rtol=1e-6)
    np.testing.assert_allclose(obs[..., 1], (raw[..., 1] - 50.0) / 20.0, rtol=1e-6)
    np.testing.assert_allclose(obs[..., 2], raw[..., 2] / 255.0, rtol=1e-6)


def test_static_obs_norm_on_a_field() -> None:
    recorder = Recorder(make_catalogue_env("dict_obs"))
    env = StaticObsNormWrapper(recorder, mean=1.0, std=2.0, fields=["state.pos"])
    obs, _ = env.reset(seed=0)
    raw = recorder.obs[-1]
    np.testing.assert_allclose(obs["state"]["pos"], (raw["state"]["pos"] - 1.0) / 2.0, rtol=1e-6)
    assert obs["image"] is raw["image"] and obs["state"]["vel"] is raw["state"]["vel"]


def test_static_obs_norm_errors() -> None:
    with pytest.raises(
        ShapeRuleError, match=r"static_obs_norm mean of shape \(2,\) does not broadcast to the observation shape \(4,\)"
    ):
        StaticObsNormWrapper(CartPoleEnv(), mean=[0.0, 1.0], std=1.0)
    with pytest.raises(
        ShapeRuleError, match=r"static_obs_norm std of shape \(4,\) does not broadcast to the field 'state.pos' shape"
    ):
        update_shape(
            {"state": {"pos": (3,)}},
            2,
            (1,),
            [("static_obs_norm", {"mean": 0, "std": [1] * 4, "fields": ["state.pos"]})],
        )
    with pytest.raises(
        ConfigError, match=r"static_obs_norm needs finite mean and std > 0; got mean=0.0, std=\[1.0, 0.0"
    ):
        StaticObsNormWrapper(CartPoleEnv(), mean=0.0, std=[1.0, 0.0, 1.0, 1.0])
    with pytest.raises(ConfigError, match="static_obs_norm mean must be a number or a list of numbers; got 'zero'"):
        StaticObsNormWrapper(CartPoleEnv(), mean="zero", std=1.0)
    with pytest.raises(ConfigError, match=r"static_obs_norm clip_range needs low < high; got \(2.0, 2.0\)"):
        StaticObsNormWrapper(CartPoleEnv(), mean=0.0, std=1.0, clip_range=(2, 2))
    with pytest.raises(ConfigError, match="wrapper 'static_obs_norm' needs argument 'mean'"):
        update_shape((4,), 2, (1,), [("static_obs_norm", {"std": 1.0})])
    with pytest.raises(ShapeRuleError, match=r"static_obs_norm needs Box observations; got observation shape 5"):
        update_shape(5, 2, (1,), [("static_obs_norm", {"mean": 0.0, "std": 1.0})])


# --- reward_norm -----------------------------------------------------------------------------------


def expected_reward_norm(rewards: list[Any], resets: list[int], discount: float, warmup: int) -> np.ndarray:
    """Each reward divided by the std of every discounted return so far (returns restart at resets)."""
    rewards_arr = np.asarray(rewards, dtype=np.float64)
    returns = np.zeros_like(rewards_arr)
    ret = np.zeros_like(rewards_arr[0])
    for t, reward in enumerate(rewards_arr):
        ret = (0.0 if t in resets else ret) * discount + reward
        returns[t] = ret
    out = rewards_arr.copy()
    for t in range(warmup, len(rewards_arr)):
        out[t] = rewards_arr[t] / (np.sqrt(returns[: t + 1].var(axis=0)) + 1e-4)
    return out


def test_reward_norm_divides_by_running_std_of_discounted_return() -> None:
    recorder = Recorder(make_catalogue_env("vector"))
    env = RewardNormWrapper(recorder, reward_discount=0.9, warmup=12)
    assert reward_space_of(env) == spaces.Box(-np.inf, np.inf, (1,), np.float32)
    env.reset(seed=0)
    env.action_space.seed(0)
    got = []
    for _ in range(70):
        _, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        assert isinstance(reward, float)
        got.append(reward)
        if terminated or truncated:
            env.reset()
    assert len(recorder.resets) == 5  # episodes of 15 steps: the return restarted four times
    expected = expected_reward_norm(recorder.rewards, recorder.resets, 0.9, 12)
    np.testing.assert_array_equal(got[:12], recorder.rewards[:12])
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    assert not np.allclose(got[12:], recorder.rewards[12:])
    assert env.return_rms.count == 70


def test_reward_norm_vector_rewards_per_entry() -> None:
    recorder = Recorder(make_catalogue_env("vector_reward"))
    env = RewardNormWrapper(recorder, reward_discount=0.5, warmup=0)
    assert reward_space_of(env) == spaces.Box(-np.inf, np.inf, (3,), np.float32)
    env.reset(seed=1)
    got = []
    for _ in range(20):
        _, reward, terminated, _, _ = env.step(0)
        assert reward.dtype == np.float32 and reward.shape == (3,)
        got.append(reward)
        if terminated:
            env.reset()
    expected = expected_reward_norm(recorder.rewards, recorder.resets, 0.5, 0)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5)


def test_reward_norm_errors() -> None:
    with pytest.raises(ConfigError, match=r"reward_norm: reward_discount must be a number in \[0, 1\]; got 1.5"):
        RewardNormWrapper(CartPoleEnv(), reward_discount=1.5)
    with pytest.raises(ShapeRuleError, match=r"ConfigError: reward_norm: warmup must be an int >= 0; got 2\.5"):
        update_shape((4,), 2, (1,), [("reward_norm", {"warmup": 2.5})])
    with pytest.raises(
        ShapeRuleError, match=r"reward_norm needs a Box reward of shape \(1,\) or \(k,\); got reward shape 3"
    ):
        update_shape((4,), 2, 3, ["reward_norm"])
    with pytest.raises(TypeError, match=r"reward_norm needs a Box reward of shape \(1,\) or \(k,\); got Discrete\(3\)"):
        RewardNormWrapper.new_space(spaces.Box(-1, 1, (4,)), spaces.Discrete(2), spaces.Discrete(3))


def test_normalizers_compose_with_update_space() -> None:
    chain: list[Any] = [("obs_norm", {"clip_range": (-4.0, 4.0)}), "reward_norm"]
    out = update_space(spaces.Box(-10, 10, (5,), np.float64), spaces.Discrete(3), None, chain)
    assert out.observation == spaces.Box(-4.0, 4.0, (5,), np.float32)
    assert out.reward == spaces.Box(-np.inf, np.inf, (1,), np.float32)
