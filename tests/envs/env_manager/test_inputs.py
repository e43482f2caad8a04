"""Box actions outside the bounds or not finite are refused by every manager before anything moves, and clipped
where the env's chain says so (``continuous_action_clip``): the managers check with the env's own converter."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import pytest

from ding.errors import ActionError
from dizoo.classic_control.pendulum.envs import PendulumEnv
from dizoo.mujoco.envs import MujocoEnv
from tests.envs.env_manager.conftest import MakeManager
from tests.envs.env_manager.test_bad_input import assert_twins_agree, launched

TORQUE = partial(PendulumEnv, cfg={"act_scale": False})  # Box(-2.0, 2.0, (1,), float32)
CLIPPED_TORQUE = partial(PendulumEnv, cfg={"act_scale": False, "env_wrapper": ["continuous_action_clip"]})
BOUNDS = r"Box\(-2\.0, 2\.0, \(1,\), float32\)"

REFUSED: dict[str, tuple[Any, str]] = {
    "above": (
        np.array([3.0], np.float32),
        rf"outside the bounds of {BOUNDS}: element 0 is 3\.0, accepted \[-2\.0, 2\.0\]",
    ),
    "below": ([-2.5], rf"outside the bounds of {BOUNDS}: element 0 is -2\.5, accepted \[-2\.0, 2\.0\]"),
    "nan": (np.array([np.nan], np.float32), rf"is not finite \(element 0 is nan\); {BOUNDS} takes finite values in"),
    "inf": (np.array([np.inf]), r"is not finite \(element 0 is inf\)"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_box_action_outside_the_bounds_or_not_finite_is_refused_without_effect(
    case: str, manager_kind: str, new_manager: MakeManager
) -> None:
    action, match = REFUSED[case]
    manager = launched(new_manager, manager_kind, TORQUE)
    twin = launched(new_manager, manager_kind, TORQUE)
    with pytest.raises(ActionError, match=rf"^env 1: action .*{match}"):
        manager.step({0: np.array([0.5], np.float32), 1: action})
    assert_twins_agree(manager, twin, {0: np.array([0.5], np.float32), 1: np.array([-2.0], np.float32)})


def test_an_env_that_clips_takes_actions_outside_the_bounds_as_the_bounds(
    manager_kind: str, new_manager: MakeManager
) -> None:
    manager = launched(new_manager, manager_kind, CLIPPED_TORQUE)
    twin = launched(new_manager, manager_kind, CLIPPED_TORQUE)
    for far, bound in ((3.0, 2.0), (-1e6, -2.0)):
        a = manager.step({0: np.array([far]), 1: np.array([0.1])})
        b = twin.step({0: np.array([bound]), 1: np.array([0.1])})
        np.testing.assert_array_equal(a[0].obs, b[0].obs)
        np.testing.assert_array_equal(a[0].reward, b[0].reward)
    with pytest.raises(ActionError, match=r"env 0: action array\(\[nan\]\) is not finite"):
        manager.step({0: np.array([np.nan]), 1: np.array([0.1])})


@pytest.mark.parametrize("kind", ["base", "subprocess-1", "async", "zmq"])
def test_step_batch_refuses_a_row_outside_the_bounds_before_anything_moves(kind: str, new_manager: MakeManager) -> None:
    """Every manager checks a ``step_batch`` row as it checks one action, before any env moves."""
    manager = launched(new_manager, kind, TORQUE)
    twin = launched(new_manager, kind, TORQUE)
    with pytest.raises(ActionError, match=r"env 1: action array\(\[nan\], dtype=float32\) is not finite"):
        manager.step_batch(np.array([[0.5], [np.nan]], np.float32))
    assert_twins_agree(manager, twin, {0: np.array([0.5], np.float32), 1: np.array([-2.0], np.float32)})


@pytest.mark.parametrize("kind", ["base", "subprocess-1"])
def test_a_mujoco_env_refuses_or_clips_as_its_config_says(kind: str, new_manager: MakeManager) -> None:
    strict = launched(new_manager, kind, partial(MujocoEnv, cfg={"env_id": "Hopper-v5", "act_scale": False}), n=1)
    with pytest.raises(
        ActionError, match=r"env 0: action .* outside the bounds of Box\(-1\.0, 1\.0, \(3,\), float32\)"
    ):
        strict.step({0: np.array([0.0, 1.5, 0.0])})
    clipped = partial(MujocoEnv, cfg={"env_id": "Hopper-v5", "action_clip": True})
    a = launched(new_manager, kind, clipped, n=1).step({0: np.array([0.0, 1.5, -7.0])})
    b = launched(new_manager, kind, clipped, n=1).step({0: np.array([0.0, 1.0, -1.0])})
    np.testing.assert_array_equal(a[0].obs, b[0].obs)
    scaled = partial(MujocoEnv, cfg={"env_id": "Hopper-v5"})  # act_scale (the default) clips to [-1, 1] too
    c = launched(new_manager, kind, scaled, n=1).step({0: np.array([0.0, 1.5, -7.0])})
    d = launched(new_manager, kind, scaled, n=1).step({0: np.array([0.0, 1.0, -1.0])})
    np.testing.assert_array_equal(c[0].obs, d[0].obs)
