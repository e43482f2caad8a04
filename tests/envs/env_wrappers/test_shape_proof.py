"""Every registered wrapper's declared shape rule, proven against real envs.

For each case: the ``update_shape`` prediction equals the ``update_space`` prediction's shapes,
which equal the wrapped env's declared spaces, which match the shape and dtype of real
observations and rewards after reset and over 20 steps (crossing episode boundaries).
"""

from __future__ import annotations

import pytest

from ding.envs.env_wrappers import WRAPPER_REGISTRY, apply_wrappers, update_shape, update_space
from ding.envs.values.spaces import EnvSpaces, reward_space_of
from tests.envs.env_wrappers import catalogue
from tests.envs.env_wrappers.catalogue import ALE_CATALOGUE, ShapeCase, make_catalogue_env, shape_cases
from tests.envs.env_wrappers.checks import assert_matches_space, assert_reward_matches

ALL_CASES = shape_cases()


def test_every_registered_wrapper_is_proven() -> None:
    covered = {case.wrapper for case in ALL_CASES}
    missing = sorted(set(WRAPPER_REGISTRY) - covered)
    assert not missing, f"registered wrappers without a shape-proof case: {missing}"


def test_every_wrapper_declares_its_own_static_space_rule() -> None:
    for name, cls in WRAPPER_REGISTRY.items():
        assert isinstance(cls.__dict__.get("space_rule"), staticmethod), name


@pytest.mark.parametrize("case", ALL_CASES, ids=str)
def test_declared_shape_is_true(case: ShapeCase) -> None:
    if case.env in ALE_CATALOGUE:
        pytest.importorskip("ale_py")
    env = make_catalogue_env(case.env)
    base = EnvSpaces(env.observation_space, env.action_space, reward_space_of(env))
    chain = [(case.wrapper, case.kwargs)]

    predicted_shapes = update_shape(*base.shapes, chain)
    predicted = update_space(*base, chain)
    assert predicted.shapes == predicted_shapes

    wrapped = apply_wrappers(env, chain)
    assert wrapped.observation_space == predicted.observation
    assert wrapped.action_space == predicted.action
    assert reward_space_of(wrapped) == predicted.reward

    obs, _ = wrapped.reset(seed=0)
    assert_matches_space(obs, predicted.observation, "obs after reset")
    wrapped.action_space.seed(0)
    for t in range(20):
        obs, reward, terminated, truncated, _ = wrapped.step(wrapped.action_space.sample())
        assert_matches_space(obs, predicted.observation, f"obs at step {t}")
        assert_reward_matches(reward, predicted.reward, f"reward at step {t}")
        if terminated or truncated:
            obs, _ = wrapped.reset()
            assert_matches_space(obs, predicted.observation, f"obs after reset at step {t}")
    wrapped.close()


def test_catalogue_has_each_input_kind() -> None:
    kinds = set(catalogue.CATALOGUE)
    assert {"vector", "image_hwc", "image_chw", "dict_obs", "vector_box_action", "vector_reward"} <= kinds
