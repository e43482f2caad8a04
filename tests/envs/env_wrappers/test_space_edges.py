"""Spaces true at their edges: the reproducers of defects once found by random chains, as regression tests.

Each test runs the reported chain on the reported env and checks that the chain is either rejected ahead of
time, naming the wrapper and the requirement, or that every value it produces lies in its declared spaces.
"""

from __future__ import annotations

import inspect
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.wrappers import AddRenderObservation

from ding.envs.env_wrappers import (
    FrameFlipWrapper,
    FrameStack,
    TimeLimitWrapper,
    apply_wrappers,
    update_shape,
    update_space,
)
from ding.envs.env_wrappers.reward import RewardSum, summed_reward_box
from ding.envs.values.spaces import TupleShape, is_flat_shape, reward_space_of, shape_to_space, space_to_shape
from ding.errors import ConfigError, ShapeRuleError, UnknownNameError
from tests.envs.env_wrappers.checks import assert_matches_space, assert_reward_matches
from tests.envs.env_wrappers.image_envs import FnEnv


def run_chain(env: gym.Env[Any, Any], chain: list[Any], steps: int = 200) -> gym.Env[Any, Any]:
    """Wrap ``env`` with ``chain`` and step it: every observation and reward lies in the predicted spaces."""
    predicted = update_space(env.observation_space, env.action_space, reward_space_of(env), chain)
    wrapped = apply_wrappers(env, chain)
    assert wrapped.observation_space == predicted.observation and reward_space_of(wrapped) == predicted.reward
    obs, _ = wrapped.reset(seed=0)
    assert_matches_space(obs, predicted.observation, "obs after reset")
    wrapped.action_space.seed(0)
    for t in range(steps):
        obs, reward, terminated, truncated, _ = wrapped.step(wrapped.action_space.sample())
        assert_matches_space(obs, predicted.observation, f"obs at step {t}")
        assert_reward_matches(reward, predicted.reward, f"reward at step {t}")
        if terminated or truncated:
            obs, _ = wrapped.reset()
            assert_matches_space(obs, predicted.observation, f"obs after the reset at step {t}")
    return wrapped


# --- F1: the previous reward shown after a reset ---------------------------------------------------------------


def test_f1_prev_reward_after_reset_lies_in_the_declared_bounds() -> None:
    chain = [("clip_reward", {"low": 0.5, "high": 1.0, "sign": False}), "obs_plus_prev_action_reward"]
    env = run_chain(gym.make("CartPole-v1"), chain)
    # rewards lie in [0.5, 1]; the 0 shown after a reset widens the entry's bounds to [0, 1]
    assert env.observation_space["prev_reward_extrinsic"] == spaces.Box(0.0, 1.0, (1,), np.float32)


# --- F2: scaled_float_frame declares the input's bounds scaled ---------------------------------------------------


def test_f2_scaled_float_frame_scales_the_declared_bounds() -> None:
    env = run_chain(gym.make("CartPole-v1"), ["scaled_float_frame"])
    inner = gym.make("CartPole-v1").observation_space
    np.testing.assert_array_equal(env.observation_space.low, inner.low * np.float32(1 / 255))
    assert env.observation_space.low[0] < 0
    uint16 = spaces.Box(0, 65535, (6, 5), np.uint16)
    frames = FnEnv(uint16, lambda t: np.full((6, 5), 65535 if t % 2 else 0, np.uint16), episode_len=10)
    env = run_chain(frames, ["scaled_float_frame"], steps=12)
    assert env.observation_space == spaces.Box(0.0, 257.0, (6, 5), np.float32)
    uint8 = update_space(spaces.Box(0, 255, (4, 4), np.uint8), spaces.Discrete(2), None, ["scaled_float_frame"])
    assert uint8.observation == spaces.Box(0.0, 1.0, (4, 4), np.float32)


# --- F3: computed float pixels stay inside the declared range ---------------------------------------------------


def test_f3_float_frames_resized_or_gray_stay_within_the_declared_high() -> None:
    pixels = AddRenderObservation(gym.make("CartPole-v1", render_mode="rgb_array"), render_only=True)
    run_chain(pixels, ["scaled_float_frame", ("warp_frame", {"size": 64})], steps=10)
    # frames at their declared high, for which OpenCV's float results land an ulp above it
    for high, shape, chains in (
        (0.040973525, (1, 1, 3), [[("frame_resize", {"height": 7, "width": 5, "interpolation": "linear"})]]),
        (0.9179061, (9, 7, 3), [["gray_scale"], [("warp_frame", {"size": 5})], [("frame_resize", {"height": 4})]]),
    ):
        top = np.full(shape, high, np.float32)
        frames = FnEnv(spaces.Box(0.0, high, shape, np.float32), lambda t, top=top: top.copy(), episode_len=5)
        for chain in chains:
            run_chain(frames, chain, steps=3)


# --- F4: a field named twice ------------------------------------------------------------------------------------


def test_f4_repeated_or_nested_fields_are_rejected_ahead_of_time() -> None:
    obs = spaces.Dict(
        {"image": spaces.Box(0, 255, (20, 20, 3), np.uint8), "state": spaces.Dict({"pos": spaces.Box(-1, 1, (3,))})}
    )
    crop = ("episodic_random_frame_crop", {"height": 10, "width": 10, "fields": ["image", "image"]})
    with pytest.raises(
        ShapeRuleError, match=r"fields must be a list of 'a.b.c' paths, none repeated.*\['image', 'image'\]"
    ):
        update_space(obs, spaces.Discrete(2), None, [crop])
    with pytest.raises(ShapeRuleError, match=r"frame_stack: fields must be .*; got \['state', 'state.pos'\]"):
        update_shape(space_to_shape(obs), 2, (1,), [("frame_stack", {"fields": ["state", "state.pos"]})])


# --- F5: what the spaces can decide is decided ahead of time ----------------------------------------------------


@pytest.mark.parametrize(
    ("chain", "action", "message"),
    [
        ([("noop_reset", {"noop_action": 5})], spaces.Discrete(2), r"noop_action 5 is not in the action space"),
        ([("time_shift", {"default_action": 5})], spaces.Discrete(2), r"default_action 5 is not in the action space"),
        (["continuous_action_clip"], spaces.MultiBinary(3), r"continuous_action_clip needs a continuous \(Box\)"),
        (["temporally_correlated_noise"], spaces.MultiBinary(3), r"temporally_correlated_noise needs a continuous"),
        (["episodic_life"], spaces.Discrete(3, start=5), r"no-op action 0, which is not in the action space"),
    ],
)
def test_f5_chains_the_spaces_decide_are_rejected(chain: list[Any], action: spaces.Space[Any], message: str) -> None:
    with pytest.raises(ShapeRuleError, match=message):
        update_space(spaces.Box(-1, 1, (3,)), action, None, chain)


def test_f5_shapes_alone_reject_nothing_they_cannot_tell() -> None:
    # a shape does not carry a Discrete's start or a Box's bounds: the chains are accepted from shapes
    assert update_shape((3,), 2, (1,), [("noop_reset", {"noop_action": 5})]) == ((3,), 2, (1,))
    assert update_shape((3,), (2,), (1,), ["normalized_action"]) == ((3,), (2,), (1,))
    assert update_shape((3,), (2,), (1,), [("time_shift", {"default_action": [9.0, -9.0]})]) == ((3,), (2,), (1,))
    hybrid = [
        "gym_hybrid_dict_action",
        ("time_shift", {"default_action": {"type": 1, "mask": [1, 1], "args": [0.4, 0.5]}}),
    ]
    assert update_shape((3,), (3, (2,)), (1,), hybrid)[1] == {"type": 3, "mask": (2,), "args": (2,)}
    with pytest.raises(ShapeRuleError, match=r"normalized_action needs finite action bounds"):
        update_space(spaces.Box(-1, 1, (3,)), spaces.Box(-np.inf, 0.0, (2,)), None, ["normalized_action"])


# --- F8: the error names the action space's kind ----------------------------------------------------------------


def test_f8_action_offset_names_a_box_a_box() -> None:
    with pytest.raises(
        ShapeRuleError, match=r"needs a Discrete or MultiDiscrete action space; got action shape \(1,\) \(Box\)"
    ):
        update_shape((3,), (1,), (1,), ["action_offset"])


# --- F10: a Tuple of Discretes is not a Box ---------------------------------------------------------------------


def test_f10_blackjack_flat_obs_is_gymnasiums_flattening() -> None:
    env = gym.make("Blackjack-v1")
    shape = space_to_shape(env.observation_space)
    assert shape == (32, 11, 2) and isinstance(shape, TupleShape) and not is_flat_shape(shape)
    assert isinstance(shape_to_space(shape), spaces.Tuple) and isinstance(shape_to_space((32, 11, 2)), spaces.Box)
    assert update_shape(shape, 2, (1,), ["flat_obs"]) == ((45,), 2, (1,))
    assert spaces.flatdim(env.observation_space) == 45
    run_chain(env, ["flat_obs"])


# --- F11: sums of clipped rewards within the widened bounds -----------------------------------------------------


@pytest.mark.parametrize(
    "step",
    [
        ("action_repeat", {"action_repeat": 3}),
        ("frame_skip", {"skip": 3}),
        ("max_and_skip", {"skip": 3}),
        ("delay_reward", {"delay_reward_step": 3}),
    ],
)
def test_f11_summed_clipped_rewards_stay_inside(step: tuple[str, dict[str, Any]]) -> None:
    run_chain(gym.make("CartPole-v1"), [("clip_reward", {"low": 0, "high": 0.055, "sign": False}), step])


def test_f11_float32_sums_of_edge_rewards_are_inside_the_summed_bounds() -> None:
    box = spaces.Box(np.float32([0.0, -0.3]), np.float32([0.055, 0.1]), dtype=np.float32)
    for times in (2, 3, 7):
        summed = summed_reward_box(box, times)
        total = RewardSum((2,))
        for _ in range(times):  # float64 rewards just past the float32 high, still inside once held as float32
            total.add(box.high.astype(np.float64) + 0.45 * np.spacing(box.high).astype(np.float64))
        assert summed.contains(total.take())


# --- the three minor items --------------------------------------------------------------------------------------


def test_boolean_arguments_must_be_real_bools() -> None:
    frames = FnEnv(spaces.Box(0, 255, (4, 6), np.uint8), lambda t: np.zeros((4, 6), np.uint8))
    with pytest.raises(ConfigError, match=r"frame_flip: horizontal must be a bool; got 'no'"):
        FrameFlipWrapper(frames, horizontal="no")
    with pytest.raises(ShapeRuleError, match=r"frame_flip: vertical must be a bool; got 1"):
        update_shape((4, 6), 2, (1,), [("frame_flip", {"vertical": 1})])
    assert FrameFlipWrapper(frames, horizontal=np.bool_(False)).horizontal is False


def test_a_preset_inside_a_list_is_explained() -> None:
    with pytest.raises(
        UnknownNameError, match=r"'atari_default' is a preset, a whole chain.*env_wrapper='atari_default'"
    ):
        update_shape((210, 160, 3), 6, (1,), ["atari_default", "frame_stack"])


def test_time_limit_carries_its_limit_in_the_spec() -> None:
    env = TimeLimitWrapper(gym.make("CartPole-v1"), 7)
    assert env.spec is not None and env.spec.max_episode_steps == 7
    assert gym.make("CartPole-v1").spec.max_episode_steps == 500  # type: ignore[union-attr]
    chained = apply_wrappers(
        gym.make("CartPole-v1"), [("time_limit", {"max_episode_steps": 7}), "time_limit", "random_first_episode_length"]
    )
    assert chained.env.max_episode_steps == 7 and chained.max_first_episode_length == 7  # type: ignore[attr-defined]


# --- one rule per wrapper: signature, positional and aliased arguments ------------------------------------------


def test_constructors_are_derived_from_the_rule() -> None:
    assert (
        str(inspect.signature(FrameStack))
        == "(env: 'gym.Env[Any, Any]', n_frames: 'PositiveInt' = 4, fields: 'Fields' = None)"
    )
    env = FrameStack(gym.make("CartPole-v1"), 3)
    assert env.n_frames == 3 and env.observation_space.shape == (3, 4)
    assert FrameStack.new_shape((4,), 2, (1,), 5) == ((5, 4), 2, (1,))
    with pytest.raises(TypeError, match=r"wrapper 'frame_stack' takes 2 positional arguments after env"):
        FrameStack(gym.make("CartPole-v1"), 3, None, 1)
    assert TimeLimitWrapper(gym.make("CartPole-v1"), max_limit=9).max_episode_steps == 9


# --- what only the built env can tell fails at construction, naming the wrapper ---------------------------------


def test_requirements_of_the_built_env_fail_at_construction() -> None:
    image = FnEnv(spaces.Box(0, 255, (8, 8, 3), np.uint8), lambda t: np.zeros((8, 8, 3), np.uint8))
    assert update_shape((8, 8, 3), 2, (1,), ["ram"]) == ((128, 1, 1), 2, (1,))
    with pytest.raises(ConfigError, match=r"^ram reads the RAM of an ALE env"):
        apply_wrappers(image, ["ram"])
    with pytest.raises(ConfigError, match=r"^time_limit: max_episode_steps=None takes the limit from env.spec"):
        apply_wrappers(image, ["time_limit"])
