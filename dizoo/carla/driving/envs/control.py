"""The CARLA env's action: (steer, throttle, brake) and its mapping onto ``carla.VehicleControl``."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

ACTION_NAMES = ("steer", "throttle", "brake")
ACTION_SPACE = spaces.Box(
    low=np.array([-1.0, 0.0, 0.0], dtype=np.float32), high=np.array([1.0, 1.0, 1.0], dtype=np.float32), dtype=np.float32
)
"""Steer in [-1, 1] (negative: left), throttle and brake in [0, 1]."""


def control_values(action: Any) -> tuple[float, float, float]:
    """``(steer, throttle, brake)`` from an action, clipped into :data:`ACTION_SPACE`.

    >>> control_values([0.25, 1.5, -0.1])
    (0.25, 1.0, 0.0)
    """
    arr = np.asarray(action, dtype=np.float64)
    if arr.shape != (3,):
        raise ValueError(f"a CARLA action is (steer, throttle, brake) of shape (3,), got shape {arr.shape}: {action!r}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"a CARLA action must be finite, got {action!r}")
    clipped = np.clip(arr, ACTION_SPACE.low, ACTION_SPACE.high)
    return float(clipped[0]), float(clipped[1]), float(clipped[2])


def vehicle_control_from_action(action: Any) -> Any:
    """The ``carla.VehicleControl`` applying ``action`` (forward gear, no hand brake)."""
    import carla

    steer, throttle, brake = control_values(action)
    return carla.VehicleControl(throttle=throttle, steer=steer, brake=brake, hand_brake=False, reverse=False)
