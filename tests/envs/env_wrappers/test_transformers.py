"""The ``transformers`` wrapper: transformers that see the episode's history, declared spaces, refusals."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.envs.classic_control import CartPoleEnv

from ding.envs import DingEnvWrapper
from ding.envs.env_wrappers import (
    EpisodeHistory,
    TransformedSpace,
    TransformersWrapper,
    apply_wrappers,
    update_shape,
    update_space,
)
from ding.errors import ConfigError, EnvConformanceError, ShapeRuleError, SpaceKindError
from tests.envs.env_wrappers.catalogue import make_catalogue_env


class CountingEnv(gym.Env[np.ndarray, Any]):
    """Observation: the step count t (float32 (1,)); reward 10 * t; actions recorded in ``taken``."""

    observation_space = spaces.Box(0, 1000, (1,), np.float32)

    def __init__(self, action_space: spaces.Space[Any] | None = None, episode_len: int = 1000) -> None:
        self.action_space = action_space or spaces.Discrete(3)
        self.episode_len = episode_len
        self.t = 0
        self.taken: list[Any] = []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        self.taken.append(action)
        self.t += 1
        return np.array([self.t], np.float32), 10.0 * self.t, self.t >= self.episode_len, False, {}


class Recorder:
    """A transformer that keeps what it saw (len(history), the last row of each column) and counts its resets."""

    def __init__(self, value: Any = None) -> None:
        self.seen: list[tuple[int, list[float], list[Any], list[float]]] = []
        self.resets = 0
        self.value = value

    def __call__(self, value: Any, history: EpisodeHistory) -> Any:
        self.seen.append(
            (len(history), history.observations[:, 0].tolist(), history.actions.tolist(), history.rewards.tolist())
        )
        return value if self.value is None else self.value

    def reset(self) -> None:
        self.resets += 1


def same(space: spaces.Space[Any]) -> spaces.Space[Any]:
    return space


def test_history_holds_the_episode_and_each_transformer_sees_it_at_its_moment() -> None:
    state, reward, action = Recorder(), Recorder(), Recorder()
    env = TransformersWrapper(
        CountingEnv(),
        state_transformer=TransformedSpace(state, same),
        reward_transformer=TransformedSpace(reward, same),
        action_transformer=TransformedSpace(action, same),
    )
    env.reset(seed=0)
    env.step(2)
    env.step(1)
    # the state transformer sees the reset, then each step with the step in the history
    assert state.seen == [
        (0, [0.0], [], []),
        (1, [0.0, 1.0], [2], [[10.0]]),
        (2, [0.0, 1.0, 2.0], [2, 1], [[10.0], [20.0]]),
    ]
    assert reward.seen == state.seen[1:]
    # the action transformer sees the history up to the previous step
    assert action.seen == [(0, [0.0], [], []), (1, [0.0, 1.0], [2], [[10.0]])]
    env.reset()
    assert (state.resets, reward.resets, action.resets) == (2, 2, 2)
    assert len(env.history) == 0 and env.history.observations.tolist() == [[0.0]]


def test_values_are_transformed_and_actions_reach_the_env_transformed() -> None:
    inner = CountingEnv(spaces.Discrete(3))
    double = TransformedSpace(lambda obs, h: obs * 2, lambda box: spaces.Box(0, 2000, box.shape, box.dtype))
    sign = TransformedSpace(lambda r, h: float(np.sign(r)), spaces.Box(-1, 1, (1,), np.float32))
    shift = TransformedSpace(lambda a, h: (a + 1) % 3, same)
    env = TransformersWrapper(inner, state_transformer=double, reward_transformer=sign, action_transformer=shift)
    assert env.observation_space == spaces.Box(0, 2000, (1,), np.float32)
    assert env.reward_space == spaces.Box(-1, 1, (1,), np.float32)
    env.reset(seed=0)
    obs, rew, *_ = env.step(0)
    obs, rew, *_ = env.step(2)
    assert obs.tolist() == [4.0] and rew == 1.0
    assert inner.taken == [1, 0]
    assert env.history.actions.tolist() == [0, 2]  # the agent's actions
    assert env.history.rewards[:, 0].tolist() == [10.0, 20.0]  # the env's rewards


def test_history_starts_at_the_expected_length_and_doubles() -> None:
    env = TransformersWrapper(CountingEnv(), expected_episode_length=2)
    env.reset(seed=0)
    assert env.history.capacity == 2
    for t in range(5):
        env.step(t % 3)
    assert env.history.capacity == 8 and len(env.history) == 5
    dumped = env.dump_history()
    assert dumped["observations"][:, 0].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert dumped["actions"].tolist() == [0, 1, 2, 0, 1]
    assert dumped["rewards"].dtype == np.float32 and dumped["rewards"].shape == (5, 1)
    env.step(2)
    assert len(dumped["actions"]) == 5  # a dump is a copy
    with pytest.raises(ValueError, match="read-only"):
        env.history.actions[0] = 1


def test_nested_observations_are_recorded_leaf_by_leaf() -> None:
    env = TransformersWrapper(make_catalogue_env("dict_obs"), expected_episode_length=3)
    first, _ = env.reset(seed=0)
    env.action_space.seed(0)
    actions = [env.action_space.sample() for _ in range(4)]
    observations = [first] + [env.step(a)[0] for a in actions]
    history = env.dump_history()
    np.testing.assert_array_equal(history["observations"]["state"]["pos"], [o["state"]["pos"] for o in observations])
    np.testing.assert_array_equal(history["observations"]["image"][-1], observations[-1]["image"])
    np.testing.assert_array_equal(history["actions"], actions)


def test_a_transformer_outside_its_declared_space_is_refused_naming_both() -> None:
    small = spaces.Box(0, 1, (1,), np.float32)
    half = spaces.Box(0, 0.5, (1,), np.float32)
    env = TransformersWrapper(CountingEnv(), state_transformer=TransformedSpace(lambda obs, h: obs, half))
    env.reset(seed=0)
    with pytest.raises(
        EnvConformanceError,
        match=r"state_transformer TransformedSpace\(.*<lambda>.*declared space Box\(0.0, 0.5, .*value outside",
    ):
        env.step(0)

    env = TransformersWrapper(CountingEnv(), reward_transformer=TransformedSpace(lambda r, h: r, small))
    env.reset(seed=0)
    with pytest.raises(EnvConformanceError, match=r"reward_transformer .* Box\(0.0, 1.0, \(1,\), float32\): reward 10"):
        env.step(0)

    env = TransformersWrapper(CountingEnv(), reward_transformer=TransformedSpace(lambda r, h: [r, r], small))
    env.reset(seed=0)
    with pytest.raises(EnvConformanceError, match=r"does not fit the declared reward shape \(1,\)"):
        env.step(0)

    env = TransformersWrapper(CountingEnv(), action_transformer=TransformedSpace(lambda a, h: a + 5, same))
    env.reset(seed=0)
    with pytest.raises(EnvConformanceError, match=r"action_transformer .* Discrete\(3\): action for the wrapped env"):
        env.step(0)


def test_a_transformer_must_declare_its_space() -> None:
    with pytest.raises(ConfigError, match=r"state_transformer must be None or a TransformedSpace.*got <function"):
        TransformersWrapper(CountingEnv(), state_transformer=lambda obs, h: obs)
    with pytest.raises(TypeError, match=r"space must be a gymnasium space or a function of the input space, got 3"):
        TransformedSpace(lambda obs, h: obs, 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"transformer must be callable, got 'x'"):
        TransformedSpace("x", same)  # type: ignore[arg-type]
    bad_rule = TransformedSpace(lambda obs, h: obs, lambda space: space.shape)
    with pytest.raises(ShapeRuleError, match=r"returned \(1,\) for Box\(0.0, 1000.0, \(1,\), float32\)"):
        update_space(
            CountingEnv.observation_space, spaces.Discrete(3), None, [("transformers", {"state_transformer": bad_rule})]
        )


def test_unknown_arguments_and_unrecordable_spaces_are_refused() -> None:
    with pytest.raises(
        ConfigError, match=r"unknown argument 'expected_length'.*Did you mean 'expected_episode_length'"
    ):
        TransformersWrapper(CountingEnv(), expected_length=4)
    with pytest.raises(ConfigError, match=r"expected_episode_length must be a positive int; got 0"):
        TransformersWrapper(CountingEnv(), expected_episode_length=0)
    text = spaces.Dict({"word": spaces.Text(5)})
    with pytest.raises(SpaceKindError, match=r"the observation space has a Text leaf at \('word',\)"):
        TransformersWrapper.new_space(text, spaces.Discrete(2), None)


def test_declared_spaces_compose_ahead_of_time_with_update_shape() -> None:
    stack = TransformedSpace(
        lambda obs, h: np.stack([obs, obs]), lambda box: spaces.Box(0, 255, (2, *box.shape), box.dtype)
    )
    chain = [("warp_frame", {"size": 42}), ("transformers", {"state_transformer": stack}), "frame_stack"]
    assert update_shape((210, 160, 3), 6, (1,), chain) == ((4, 2, 42, 42), 6, (1,))
    env = apply_wrappers(make_catalogue_env("image_hwc"), chain)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (4, 2, 42, 42) and obs.dtype == np.uint8 and env.observation_space.contains(obs)


def test_a_ding_env_knows_the_transformed_spaces_from_its_config() -> None:
    sign = TransformedSpace(lambda r, h: float(np.sign(r)), spaces.Box(-1, 1, (1,), np.float32))
    frame = TransformedSpace(lambda obs, h: np.append(obs, len(h)).astype(np.float32), _one_longer)
    cfg = {
        "env_id": "CartPole-v1",
        "env_wrapper": [{"type": "transformers", "kwargs": {"state_transformer": frame, "reward_transformer": sign}}],
    }
    declared = DingEnvWrapper.spaces_from_config(cfg)
    assert declared.observation.shape == (5,) and declared.reward == sign.space
    env = DingEnvWrapper(cfg=cfg)
    env.seed(0)
    assert env.reset()[4] == 0.0
    ts = env.step(env.random_action())
    assert ts.obs[4] == 1.0 and ts.reward.tolist() == [1.0]
    assert env.env.get_wrapper_attr("dump_history")()["rewards"].tolist() == [[1.0]]
    env.close()


def _one_longer(box: spaces.Box) -> spaces.Box:
    return spaces.Box(-np.inf, np.inf, (box.shape[0] + 1,), np.float32)


def test_a_stateful_transformer_is_reset_each_episode() -> None:
    class Difference:
        """Observation minus the previous one (prl's Pong transformer's idea)."""

        def __init__(self) -> None:
            self.previous: np.ndarray | None = None

        def __call__(self, obs: np.ndarray, history: EpisodeHistory) -> np.ndarray:
            out = obs if self.previous is None else obs - self.previous
            self.previous = obs
            return out.astype(np.float32)

        def reset(self) -> None:
            self.previous = None

    env = TransformersWrapper(
        CartPoleEnv(), state_transformer=TransformedSpace(Difference(), lambda b: spaces.Box(-np.inf, np.inf, (4,)))
    )
    first, _ = env.reset(seed=0)
    moved, *_ = env.step(0)
    np.testing.assert_allclose(moved, env.history.observations[1] - env.history.observations[0])
    again, _ = env.reset(seed=0)
    np.testing.assert_array_equal(again, first)  # no difference against the last episode's observation
