"""``grid_discrete_action``: Discrete(bins ** k) over a Box, predicted space == wrapped space, indices in C order."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.envs.classic_control import PendulumEnv

from ding.errors import ShapeRuleError
from dizoo.action_grid import FlatDiscreteAction, grid_action_space, grid_discrete_action


def test_predicted_space_is_the_wrapped_envs_and_every_index_is_its_grid_point() -> None:
    box = spaces.Box(np.array([-2.0, 0.0], np.float32), np.array([2.0, 1.0], np.float32))
    env = PendulumEnv()
    env.action_space = box  # a two-dimensional box, so the order of the joint choices shows
    wrapped = grid_discrete_action(env, 3)
    assert wrapped.action_space == grid_action_space(box, 3) == spaces.Discrete(9)
    grid = list(itertools.product([-2.0, 0.0, 2.0], [0.0, 0.5, 1.0]))  # the last dimension fastest
    for index, point in enumerate(grid):
        value = wrapped.env.action(wrapped.action(index))  # the Box action the simulator receives
        np.testing.assert_array_equal(value, np.asarray(point, np.float32))


def test_an_array_index_of_shape_one_is_accepted() -> None:
    wrapped = grid_discrete_action(PendulumEnv(), 5)
    np.testing.assert_array_equal(wrapped.action(np.array([4])), [4])


def test_rules_reject_what_they_cannot_number() -> None:
    with pytest.raises(ShapeRuleError, match=r"discrete_action.*bins must be an int >= 2; got 1"):
        grid_action_space(spaces.Box(-1.0, 1.0, (2,), np.float32), 1)
    with pytest.raises(TypeError, match="needs a MultiDiscrete action space, got Discrete"):
        FlatDiscreteAction.new_shape((3,), 4, (1,))
    with pytest.raises(TypeError, match="needs a MultiDiscrete action space, got Box"):
        FlatDiscreteAction.new_space(spaces.Box(0, 1, (1,)), spaces.Box(0, 1, (2,)), spaces.Box(0, 1, (1,)))
