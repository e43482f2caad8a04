"""Assertions shared by the wrapper proofs: a value lies in a declared space, and two spaces are the same exactly."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces


def assert_matches_space(value: Any, space: spaces.Space[Any], what: str) -> None:
    """Leaf-wise: exact shape and dtype, and inside the space's bounds."""
    if isinstance(space, spaces.Dict):
        assert isinstance(value, dict) and set(value) == set(space.spaces), f"{what}: keys {set(value)}"
        for key, sub in space.spaces.items():
            assert_matches_space(value[key], sub, f"{what}.{key}")
        return
    if isinstance(space, spaces.Tuple):
        assert len(value) == len(space.spaces), what
        for i, sub in enumerate(space.spaces):
            assert_matches_space(value[i], sub, f"{what}.{i}")
        return
    arr = np.asarray(value)
    assert arr.shape == space.shape, f"{what}: shape {arr.shape} != declared {space.shape}"
    assert arr.dtype == space.dtype, f"{what}: dtype {arr.dtype} != declared {space.dtype}"
    assert space.contains(arr), f"{what}: value {arr!r} outside declared {space}"


def assert_reward_matches(reward: Any, space: spaces.Space[Any], what: str) -> None:
    """A reward fits its declared space: as many elements, and inside the bounds once held as float32."""
    arr = np.asarray(reward, dtype=np.float32)
    assert arr.size == int(np.prod(space.shape)), f"{what}: reward {arr.shape} does not fit declared {space.shape}"
    assert space.contains(arr.reshape(space.shape).astype(space.dtype)), f"{what}: reward {reward!r} outside {space}"


def assert_same_space(got: spaces.Space[Any], expected: spaces.Space[Any], what: str) -> None:
    """Equal spaces, Box bounds compared exactly (gymnasium's ``==`` compares them with a tolerance)."""
    if isinstance(expected, spaces.Dict):
        assert isinstance(got, spaces.Dict) and list(got.spaces) == list(expected.spaces), f"{what}: {got}"
        for key in expected.spaces:
            assert_same_space(got[key], expected[key], f"{what}.{key}")
        return
    if isinstance(expected, spaces.Tuple):
        assert isinstance(got, spaces.Tuple) and len(got.spaces) == len(expected.spaces), f"{what}: {got}"
        for i, (a, b) in enumerate(zip(got.spaces, expected.spaces, strict=True)):
            assert_same_space(a, b, f"{what}.{i}")
        return
    assert got == expected, f"{what}: {got} != {expected}"
    if isinstance(expected, spaces.Box):
        assert isinstance(got, spaces.Box)
        assert np.array_equal(got.low, expected.low) and np.array_equal(got.high, expected.high), (
            f"{what}: bounds differ: {got.low}..{got.high} vs {expected.low}..{expected.high}"
        )
