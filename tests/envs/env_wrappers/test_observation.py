"""Behaviour of the observation reshaping wrappers: content, order, dtype, bounds and errors."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.env_wrappers import update_shape, update_space
from ding.envs.env_wrappers.observation import FlatObsWrapper, FlattenObservationWrapper
from ding.envs.values.spaces import DEFAULT_REWARD_SPACE
from ding.errors import FieldPathError, ShapeRuleError
from tests.envs.env_wrappers.catalogue import CatalogueEnv, make_catalogue_env

MIXED = spaces.Dict(
    {
        "z_img": spaces.Box(0, 255, (2, 3), np.uint8),
        "mode": spaces.Discrete(4, start=-1),
        "keys": spaces.MultiDiscrete([3, 2], start=[1, 0]),
        "bits": spaces.MultiBinary(3),
        "pair": spaces.Tuple((spaces.Box(-1.0, 1.0, (2,), np.float64), spaces.Discrete(2))),
    }
)


def paired(space_or_entry: spaces.Space[Any] | str, wrapper: type, **kwargs: Any) -> tuple[Any, Any]:
    """A raw env and a wrapped twin that produce the same observations under the same seed."""
    if isinstance(space_or_entry, str):
        return make_catalogue_env(space_or_entry), wrapper(make_catalogue_env(space_or_entry), **kwargs)
    # Each env samples from its own copy of the space, so the twins' generators stay independent.
    raw = CatalogueEnv(copy.deepcopy(space_or_entry), spaces.Discrete(2))
    return raw, wrapper(CatalogueEnv(copy.deepcopy(space_or_entry), spaces.Discrete(2)), **kwargs)


def twin_observations(raw: Any, wrapped: Any, steps: int = 5) -> list[tuple[Any, Any]]:
    pairs = [(raw.reset(seed=1)[0], wrapped.reset(seed=1)[0])]
    for _ in range(steps):
        action = raw.action_space.sample()
        pairs.append((raw.step(action)[0], wrapped.step(action)[0]))
    return pairs


def box(space: spaces.Space[Any]) -> spaces.Box:
    assert isinstance(space, spaces.Box), space
    return space


# ---- flat_obs ----


@pytest.mark.parametrize("source", ["dict_obs", "image_chw", "vector_float64", MIXED], ids=str)
def test_flat_obs_equals_gymnasium_flatten(source: Any) -> None:
    raw, wrapped = paired(source, FlatObsWrapper)
    for raw_obs, flat in twin_observations(raw, wrapped):
        expected = np.asarray(spaces.flatten(raw.observation_space, raw_obs), dtype=np.float32)
        assert flat.dtype == np.float32 and flat.shape == expected.shape
        np.testing.assert_array_equal(flat, expected)
        assert wrapped.observation_space.contains(flat)


def test_flat_obs_orders_dict_keys_sorted_and_one_hot_encodes() -> None:
    space = spaces.Dict({"b": spaces.Box(-5, 5, (2,), np.float32), "a": spaces.Discrete(3), "c": spaces.Box(0, 9, ())})
    env = FlatObsWrapper(CatalogueEnv(space, spaces.Discrete(2)))
    obs = {"c": np.float32(7.0), "b": np.array([1.5, -2.0], np.float32), "a": 2}
    np.testing.assert_array_equal(env.observation(obs), [0.0, 0.0, 1.0, 1.5, -2.0, 7.0])
    out = box(env.observation_space)
    np.testing.assert_array_equal(out.low, [0, 0, 0, -5, -5, 0])
    np.testing.assert_array_equal(out.high, [1, 1, 1, 5, 5, 9])


def test_flat_obs_bounds_are_the_flattened_bounds_in_float32() -> None:
    low = np.array([[0, -1], [-2, -3]], np.float64)
    space = spaces.Dict({"m": spaces.Box(low, 4.0, dtype=np.float64), "k": spaces.MultiDiscrete([2, 3])})
    out = box(update_space(space, spaces.Discrete(2), None, ["flat_obs"]).observation)
    reference = box(spaces.flatten_space(space))
    assert out.dtype == np.float32 and out.shape == (9,)
    np.testing.assert_array_equal(out.low, reference.low.astype(np.float32))
    np.testing.assert_array_equal(out.high, reference.high.astype(np.float32))


def test_flat_obs_returns_a_fresh_array_each_step() -> None:
    env = FlatObsWrapper(make_catalogue_env("vector"))
    first, _ = env.reset(seed=0)
    kept = first.copy()
    second = env.step(0)[0]
    assert second is not first and not np.shares_memory(first, second)
    np.testing.assert_array_equal(first, kept)


def test_flat_obs_shape_rule_counts_one_hot_widths() -> None:
    shape = {"img": (3, 4, 4), "mode": 5, "keys": [2, 3], "t": ((2,), 4)}
    assert update_shape(shape, 6, (1,), ["flat_obs"]) == ((48 + 5 + 5 + 2 + 4,), 6, (1,))


def test_flat_obs_errors() -> None:
    text = spaces.Dict({"ok": spaces.Box(0, 1, (2,)), "note": spaces.Text(5)})
    with pytest.raises(
        TypeError, match=r"flat_obs supports Box, Discrete, MultiDiscrete and MultiBinary.*Text.* at note"
    ):
        FlatObsWrapper.new_space(text, spaces.Discrete(2), DEFAULT_REWARD_SPACE)
    with pytest.raises(
        ShapeRuleError, match=r"flat_obs needs an observation with at least one element; got shape \{\}"
    ):
        update_shape({}, 2, (1,), ["flat_obs"])
    with pytest.raises(ShapeRuleError, match=r"flat_obs\(\): TypeError: cannot interpret 'x' as a shape"):
        update_shape({"a": "x"}, 2, (1,), ["flat_obs"])


# ---- flatten_observation ----

NESTED = spaces.Dict(
    {
        "a": spaces.Box(0, 255, (2, 3), np.uint8),
        "b": spaces.Dict({"c": spaces.Box(np.arange(8.0).reshape(4, 2), 100.0, dtype=np.float64)}),
        "v": spaces.Box(-1, 1, (3,), np.float32),
    }
)


def test_flatten_observation_on_one_field_keeps_the_rest_and_the_dtype() -> None:
    raw, wrapped = paired(NESTED, FlattenObservationWrapper, fields=["b.c"])
    out_space = wrapped.observation_space
    assert isinstance(out_space, spaces.Dict)
    assert out_space == spaces.Dict(
        {
            "a": NESTED["a"],
            "b": spaces.Dict({"c": spaces.Box(np.arange(8.0), 100.0, dtype=np.float64)}),
            "v": NESTED["v"],
        }
    )
    for raw_obs, obs in twin_observations(raw, wrapped):
        assert obs["b"]["c"].dtype == np.float64 and obs["b"]["c"].shape == (8,)
        np.testing.assert_array_equal(obs["b"]["c"], raw_obs["b"]["c"].reshape(-1))
        assert obs["a"].shape == (2, 3)
        np.testing.assert_array_equal(obs["a"], raw_obs["a"])


def test_flatten_observation_whole_dict_flattens_every_leaf_keeping_structure() -> None:
    raw, wrapped = paired(NESTED, FlattenObservationWrapper)
    assert update_shape({"a": (2, 3), "b": {"c": (4, 2)}, "v": (3,)}, 2, (1,), ["flatten_observation"])[0] == {
        "a": (6,),
        "b": {"c": (8,)},
        "v": (3,),
    }
    for raw_obs, obs in twin_observations(raw, wrapped):
        assert set(obs) == {"a", "b", "v"} and obs["a"].dtype == np.uint8
        np.testing.assert_array_equal(obs["a"], raw_obs["a"].reshape(-1))
        np.testing.assert_array_equal(obs["b"]["c"], raw_obs["b"]["c"].reshape(-1))
        assert wrapped.observation_space.contains(obs)


def test_flatten_observation_image_is_row_major_and_differs_from_flat_obs_in_dtype() -> None:
    raw, wrapped = paired("image_chw", FlattenObservationWrapper)
    for raw_obs, obs in twin_observations(raw, wrapped, steps=2):
        assert obs.shape == (3 * 48 * 64,) and obs.dtype == np.uint8
        np.testing.assert_array_equal(obs, raw_obs.reshape(-1))
        assert obs[64] == raw_obs[0, 1, 0]
    assert FlatObsWrapper(make_catalogue_env("image_chw")).observation_space.dtype == np.float32


def test_flatten_observation_keeps_multibinary_leaves() -> None:
    space = spaces.Dict({"bits": spaces.MultiBinary((2, 2)), "x": spaces.Box(0, 1, (1, 2))})
    out = FlattenObservationWrapper.new_space(space, spaces.Discrete(2), DEFAULT_REWARD_SPACE)[0]
    assert isinstance(out, spaces.Dict)
    assert out["bits"] == spaces.MultiBinary(4) and out["x"].shape == (2,)


def test_flatten_observation_errors() -> None:
    env = make_catalogue_env("dict_obs")
    with pytest.raises(FieldPathError, match=r"field path 'state.nope': no key 'nope' at depth 1; available: pos, vel"):
        FlattenObservationWrapper(env, fields=["state.nope"])
    with_discrete = spaces.Dict({"mode": spaces.Discrete(3), "x": spaces.Box(0, 1, (2, 2))})
    with pytest.raises(TypeError, match=r"needs Box \(or MultiBinary\) leaves; got Discrete\(3\) at field 'mode'"):
        FlattenObservationWrapper(CatalogueEnv(with_discrete, spaces.Discrete(2)), fields=["mode"])
    with pytest.raises(TypeError, match=r"got Discrete\(3\) at the observation\.mode.*use flat_obs"):
        FlattenObservationWrapper(CatalogueEnv(with_discrete, spaces.Discrete(2)))
    with pytest.raises(ShapeRuleError, match=r"flatten_observation.*got shape \[2, 3\] \(MultiDiscrete\) at field 'k'"):
        update_shape({"k": [2, 3]}, 2, (1,), [("flatten_observation", {"fields": ["k"]})])
    with pytest.raises(
        ShapeRuleError,
        match=r"fields must be a list of 'a.b.c' paths, none repeated or inside another, or None; got 'image'",
    ):
        update_shape({"image": (2, 2)}, 2, (1,), [("flatten_observation", {"fields": "image"})])
    selected = FlattenObservationWrapper(CatalogueEnv(with_discrete, spaces.Discrete(2)), fields=["x"])
    assert selected.observation_space == spaces.Dict({"mode": spaces.Discrete(3), "x": spaces.Box(0, 1, (4,))})
