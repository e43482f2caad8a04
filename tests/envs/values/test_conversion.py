"""The per-step converters: their cheap paths give exactly what their general paths give, and refuse the same."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.values.conversion import (
    BOUND_SLACK,
    ActionError,
    ClippedBox,
    action_converter,
    observation_converter,
    reward_converter,
    within_bounds,
)


@pytest.mark.parametrize(
    "action",
    [1, np.int64(1), np.int32(1), np.uint8(1), np.array([1]), np.array(1), np.array([[1]], np.int16), True],
)
def test_discrete_accepts_every_single_integer_form_as_a_python_int(action: Any) -> None:
    value = action_converter(spaces.Discrete(2), owner="Env")(action)
    assert value == 1 and type(value) is int


@pytest.mark.parametrize(
    ("action", "error", "match"),
    [
        (np.array([0, 1]), TypeError, r"Env: action array\(\[0, 1\]\) is not a single integer"),
        (np.array([1.0]), TypeError, "is not a single integer"),
        (np.array([np.nan]), TypeError, "is not a single integer"),
        (np.array([1], dtype=object), TypeError, "is not a single integer"),
        (np.array([1], dtype="timedelta64[ns]"), TypeError, "is not a single integer"),
        (np.array([2]), ValueError, r"Env: action 2 is out of range for Discrete\(2\) \(accepted 0..1\)"),
        (np.int64(-1), ValueError, "action -1 is out of range"),
        (5, ValueError, "action 5 is out of range"),
        (1.0, TypeError, "is not a single integer"),
    ],
)
def test_discrete_refuses_wrong_actions(action: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        action_converter(spaces.Discrete(2), owner="Env")(action)


def test_discrete_with_a_start_checks_its_own_range() -> None:
    convert = action_converter(spaces.Discrete(3, start=-1))
    assert [convert(np.array([a])) for a in (-1, 0, 1)] == [-1, 0, 1]
    with pytest.raises(ValueError, match=r"accepted -1..1"):
        convert(np.array([2]))


@pytest.mark.parametrize("reward", [1.5, 2, True, np.float64(1.5), np.float32(1.5), np.array([1.5]), np.array(1.5)])
@pytest.mark.parametrize("shape", [(1,), (), (1, 1)])
def test_reward_is_a_fresh_array_of_the_declared_dtype_and_shape(reward: Any, shape: tuple[int, ...]) -> None:
    convert = reward_converter(spaces.Box(-np.inf, np.inf, shape, np.float32))
    first, second = convert(reward), convert(reward)
    shape = shape or (1,)  # a scalar reward space gives DI-engine's (1,) rewards
    expected = np.asarray(reward, np.float32).reshape(shape)
    assert first.dtype == np.float32 and first.shape == shape
    np.testing.assert_array_equal(first, expected)
    assert first is not second and not np.shares_memory(first, second)


def test_reward_of_the_wrong_size_is_refused() -> None:
    with pytest.raises(ValueError, match=r"does not fit the declared reward shape \(1,\)"):
        reward_converter(spaces.Box(-1, 1, (1,), np.float32))(np.array([1.0, 2.0]))


def test_observation_of_the_declared_dtype_passes_uncopied_and_others_are_cast() -> None:
    convert = observation_converter(spaces.Box(-1, 1, (2,), np.float32))
    frame = np.zeros(2, np.float32)
    assert convert(frame) is frame
    assert convert(frame.astype(">f4")).dtype == np.float32  # equal kind, other byte order: cast
    assert convert(np.zeros(2)).dtype == np.float32


# ----- Box, MultiDiscrete and MultiBinary bounds -----------------------------------------------------------------
TORQUE = spaces.Box(-2.0, 2.0, (1,), np.float32)


@pytest.mark.parametrize("action", [np.array([1.5], np.float32), [-2.0], 2.0, np.array([[0.0]]), np.float64(2.0)])
def test_box_actions_within_the_bounds_pass_as_the_space_dtype(action: Any) -> None:
    value = action_converter(TORQUE, owner="Env")(action)
    assert value.dtype == np.float32 and value.shape == (1,)
    np.testing.assert_array_equal(value, np.asarray(action, np.float32).reshape(1))


@pytest.mark.parametrize("past", [1e-7, 5e-7, 1.9e-6])
def test_float_rounding_past_a_bound_lands_on_the_bound(past: float) -> None:
    convert = action_converter(TORQUE)
    np.testing.assert_array_equal(convert(np.array([2.0 + past])), [2.0])
    np.testing.assert_array_equal(convert(np.array([-2.0 - past])), [-2.0])
    with pytest.raises(ActionError, match="outside the bounds"):
        convert(np.array([2.0 + 2.0 * BOUND_SLACK * 2.0 + 1e-6]))  # the slack is relative: 2e-6 at 2.0


@pytest.mark.parametrize(
    ("action", "match"),
    [
        (
            np.array([3.0], np.float32),
            r"^Pendulum: action array\(\[3\.\], dtype=float32\) is outside the bounds of Box\(-2\.0, 2\.0, \(1,\), "
            r"float32\): element 0 is 3\.0, accepted \[-2\.0, 2\.0\]; to clip such actions into the bounds instead, "
            r"add 'continuous_action_clip' to the env's wrapper chain$",
        ),
        (-2.5, r"action -2\.5 is outside the bounds of Box\(-2\.0, 2\.0.*element 0 is -2\.5, accepted \[-2\.0, 2\.0\]"),
        (
            np.array([np.nan], np.float32),
            r"^Pendulum: action array\(\[nan\], dtype=float32\) is not finite \(element 0 is nan\); "
            r"Box\(-2\.0, 2\.0, \(1,\), float32\) takes finite values in \[-2\.0, 2\.0\]$",
        ),
        (np.array([np.inf]), r"action array\(\[inf\]\) is not finite \(element 0 is inf\)"),
        (np.array([-np.inf]), r"is not finite \(element 0 is -inf\)"),
    ],
)
def test_box_actions_outside_the_bounds_or_not_finite_are_refused(action: Any, match: str) -> None:
    with pytest.raises(ActionError, match=match) as caught:
        action_converter(TORQUE, owner="Pendulum")(action)
    assert isinstance(caught.value, ValueError)


def test_the_error_names_the_first_offending_element_and_its_own_bounds() -> None:
    box = spaces.Box(np.float32([-1, 0, -3]), np.float32([1, 5, 3]))
    convert = action_converter(box, owner="")
    with pytest.raises(
        ActionError, match=r"element 1 is 6\.0 \(and 1 more\), accepted \[0\.0, 5\.0\] for that element"
    ):
        convert(np.array([0.0, 6.0, -4.0]))
    with pytest.raises(ActionError, match=r"element \(1, 0\) is nan\); .* in \[-1\.0, 1\.0\]$"):
        action_converter(spaces.Box(-1, 1, (2, 2)))(np.array([[0.0, 0.0], [np.nan, 0.0]]))


def test_infinite_bounds_take_any_finite_value_but_not_nan_or_inf() -> None:
    convert = action_converter(spaces.Box(-np.inf, np.inf, (2,), np.float32))
    np.testing.assert_array_equal(convert([1e30, -1e30]), np.float32([1e30, -1e30]))
    with pytest.raises(ActionError, match=r"not finite \(element 1 is inf\); .* in \[-inf, inf\]"):
        convert([0.0, np.inf])


def test_a_clipped_box_clips_finite_actions_and_still_refuses_nan_and_infinities() -> None:
    box = ClippedBox.of(TORQUE)
    convert = action_converter(box, owner="Pendulum")
    np.testing.assert_array_equal(convert(np.array([3.0])), np.float32([2.0]))
    np.testing.assert_array_equal(convert(-1e9), np.float32([-2.0]))
    for not_finite in (np.nan, np.inf):
        with pytest.raises(ActionError, match=rf"Pendulum: action array\(\[{not_finite}\]\) is not finite"):
            convert(np.array([not_finite]))
    assert repr(box) == "ClippedBox(-2.0, 2.0, (1,), float32)"
    plain = TORQUE
    assert box == ClippedBox.of(plain) and box != plain and plain != box
    assert box.contains(np.float32([2.0])) and not box.contains(np.float32([3.0]))
    copy = pickle.loads(pickle.dumps(box))  # as process managers send it
    assert type(copy) is ClippedBox and copy == box


@pytest.mark.parametrize(
    ("space", "action", "match"),
    [
        (
            spaces.MultiDiscrete([3, 2]),
            [1, 2],
            r"action array\(\[1, 2\]\) is outside the range of MultiDiscrete\(\[3 2\]\): ",
        ),
        (spaces.MultiDiscrete([3, 2], start=[1, -1]), [0, 0], r"element 0 is 0.*accepted \[1, 3\] for that element"),
        (
            spaces.MultiBinary(3),
            [0, 1, 2],
            r"outside the range of MultiBinary\(3\): element 2 is 2, accepted \[0, 1\]$",
        ),
        (spaces.Box(0, 10, (2,), np.int64), [3, 11], r"element 1 is 11, accepted \[0, 10\]; to clip"),
    ],
)
def test_integer_spaces_refuse_values_out_of_range(space: spaces.Space[Any], action: Any, match: str) -> None:
    with pytest.raises(ActionError, match=match):
        action_converter(space, owner="")(np.asarray(action))


@pytest.mark.parametrize(
    "space",
    [
        TORQUE,
        ClippedBox.of(spaces.Box(np.float32([-1, 0]), np.float32([1, 3]))),
        spaces.Box(-np.inf, 1.0, (3,), np.float64),
        spaces.MultiDiscrete([4, 2, 3], start=[-1, 0, 2]),
        spaces.MultiBinary(2),
    ],
)
def test_within_bounds_is_exactly_what_the_converter_passes_unchanged(space: spaces.Space[Any]) -> None:
    rng = np.random.default_rng(0)
    convert = action_converter(space)
    shape = space.shape
    for _ in range(300):
        if np.dtype(space.dtype).kind == "f":
            values = rng.uniform(-4, 4, shape)
            values[rng.random(shape) < 0.05] = np.nan
        else:
            values = rng.integers(-3, 6, shape)
        try:
            out = convert(values)
        except ActionError:
            assert not within_bounds(space, values)
            continue
        changed = not np.array_equal(out, np.asarray(values).astype(space.dtype))
        assert changed == (not within_bounds(space, values)), values
        assert within_bounds(space, out)  # whatever passes is within the bounds


# ----- real envs ---------------------------------------------------------------------------------------------------
def pendulum_after(env_cfg: dict[str, Any], action: Any) -> np.ndarray:
    from ding.envs import DingEnvWrapper

    env = DingEnvWrapper(cfg=env_cfg)
    env.seed(0, dynamic_seed=False)
    env.reset()
    try:
        return np.asarray(env.step(action).obs)
    finally:
        env.close()


@pytest.mark.parametrize(
    ("action", "match"),
    [
        (np.array([3.0], np.float32), r"element 0 is 3\.0, accepted \[-2\.0, 2\.0\]; to clip such actions"),
        (np.array([np.nan], np.float32), r"is not finite \(element 0 is nan\); Box\(-2\.0, 2\.0, \(1,\), float32\)"),
    ],
)
def test_a_single_env_refuses_pendulum_torques_outside_the_bounds(action: Any, match: str) -> None:
    owner = r"^DingEnvWrapper\(Pendulum-v1\): "
    with pytest.raises(ActionError, match=rf"{owner}action array\(\[(3\.|nan)\], dtype=float32\) .*{match}"):
        pendulum_after({"env_id": "Pendulum-v1"}, action)


def test_a_single_env_whose_chain_clips_takes_the_bound_for_a_torque_beyond_it() -> None:
    clipping = {"env_id": "Pendulum-v1", "env_wrapper": ["continuous_action_clip"]}
    np.testing.assert_array_equal(pendulum_after(clipping, np.array([3.0])), pendulum_after(clipping, [2.0]))
    with pytest.raises(ActionError, match="is not finite"):
        pendulum_after(clipping, np.array([np.nan]))


def test_dizoo_envs_clip_agent_actions_to_their_own_range_as_di_engine_s_act_scale_does() -> None:
    from dizoo.classic_control.pendulum.envs import PendulumEnv
    from dizoo.mujoco.envs import MujocoEnv

    for make in (lambda: PendulumEnv({}), lambda: MujocoEnv({"env_id": "Hopper-v5"})):  # act_scale: acts in [-1, 1]
        beyond, bound = make(), make()
        size = beyond.action_space.shape[0]
        for env in (beyond, bound):
            env.seed(0)
            env.reset()
        np.testing.assert_array_equal(beyond.step(np.full(size, 1.5)).obs, bound.step(np.full(size, 1.0)).obs)
        with pytest.raises(ActionError, match=rf"^{type(beyond).__name__}(\(.*\))?: action .* is not finite"):
            beyond.step(np.full(size, np.nan))  # clipping takes numbers only
        beyond.close()
        bound.close()
    hopper = MujocoEnv({"env_id": "Hopper-v5", "action_clip": True})
    assert hopper.action_space == ClippedBox(-1.0, 1.0, (3,), np.float32)
    hopper.seed(0)
    hopper.reset()
    assert np.isfinite(hopper.step(np.array([5.0, -5.0, 0.5])).obs).all()
    hopper.close()
