"""Reward and episode end of the CARLA env, as pure functions of the sensor readings.

Per step, with ``w`` the ``reward`` settings and ``v*`` the target speed::

    reward = w.progress_weight * (metres of route covered since the previous step)
           + w.speed_weight * (1 - |speed - v*| / v*)
           - w.deviation_weight * (metres from the route)
           - w.lane_invasion_penalty * (lane markings crossed)
           - w.collision_penalty   (when a collision was reported)
           + w.success_bonus       (when the goal is reached)

The episode ends, first match wins: ``collision`` (any collision impulse), ``off_route`` (farther than
``max_route_deviation`` from the route), ``goal`` (within ``goal_tolerance`` of the route's end) and ``stuck``
(``max_stuck_steps`` consecutive steps slower than ``stuck_speed``) terminate it; reaching ``max_episode_steps``
truncates it (``time_limit``).
"""

from __future__ import annotations

import dataclasses

from dizoo.carla.driving.envs.sensors import SensorReadings, route_deviation, route_distance
from dizoo.carla.driving.envs.settings import CarlaSettings

END_REASONS = ("collision", "off_route", "goal", "stuck", "time_limit")


@dataclasses.dataclass(frozen=True)
class DrivingState:
    """The quantities reward and termination depend on, derived from one step's readings."""

    speed: float
    distance_to_goal: float
    route_deviation: float
    collision_intensity: float = 0.0
    lane_invasions: int = 0


@dataclasses.dataclass(frozen=True)
class Termination:
    """Whether and why an episode ends after a step."""

    terminated: bool = False
    truncated: bool = False
    reason: str | None = None


def driving_state(readings: SensorReadings) -> DrivingState:
    """Derive the driving state from sensor readings.

    >>> import numpy as np
    >>> driving_state(SensorReadings((0.0, 1.0), 0.0, 4.0, np.array([[0.0, 0.0], [10.0, 0.0]])))
    DrivingState(speed=4.0, distance_to_goal=11.0, route_deviation=1.0, collision_intensity=0.0, lane_invasions=0)
    """
    return DrivingState(
        speed=max(float(readings.speed), 0.0),
        distance_to_goal=route_distance(readings.location, readings.route),
        route_deviation=route_deviation(readings.location, readings.route, readings.route_origin),
        collision_intensity=float(readings.collision_intensity),
        lane_invasions=int(readings.lane_invasions),
    )


def reached_goal(state: DrivingState, settings: CarlaSettings) -> bool:
    return state.distance_to_goal <= settings.termination.goal_tolerance


def reward_from_state(previous: DrivingState | None, current: DrivingState, settings: CarlaSettings) -> float:
    """The step's reward (see the module docstring); no progress term on an episode's first step."""
    w = settings.reward
    progress = 0.0 if previous is None else previous.distance_to_goal - current.distance_to_goal
    reward = w.progress_weight * progress
    reward += w.speed_weight * (1.0 - abs(current.speed - w.target_speed) / w.target_speed)
    reward -= w.deviation_weight * current.route_deviation
    reward -= w.lane_invasion_penalty * current.lane_invasions
    if current.collision_intensity > 0.0:
        reward -= w.collision_penalty
    if reached_goal(current, settings):
        reward += w.success_bonus
    return float(reward)


def next_stuck_steps(stuck_steps: int, state: DrivingState, settings: CarlaSettings) -> int:
    """Consecutive steps spent slower than ``stuck_speed``, including this one."""
    return stuck_steps + 1 if state.speed < settings.termination.stuck_speed else 0


def termination_from_state(state: DrivingState, steps: int, stuck_steps: int, settings: CarlaSettings) -> Termination:
    """Whether the episode ends after step number ``steps`` (1 for the first step), and why."""
    t = settings.termination
    if state.collision_intensity > 0.0:
        return Termination(terminated=True, reason="collision")
    if state.route_deviation > t.max_route_deviation:
        return Termination(terminated=True, reason="off_route")
    if reached_goal(state, settings):
        return Termination(terminated=True, reason="goal")
    if stuck_steps >= t.max_stuck_steps:
        return Termination(terminated=True, reason="stuck")
    if steps >= settings.max_episode_steps:
        return Termination(truncated=True, reason="time_limit")
    return Termination()
