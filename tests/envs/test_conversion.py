"""The per-step converters: their cheap paths give exactly what their general paths give, and refuse the same."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.conversion import action_converter, observation_converter, reward_converter


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
