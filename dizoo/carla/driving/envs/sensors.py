"""Sensor readings of one CARLA step and the observation built from them, as pure functions.

Coordinates follow CARLA's world frame (metres; x, y on the ground, yaw in radians, positive turning from +x
towards +y). The ego frame has ``forward`` along the vehicle's heading and ``right`` to its right, so the
birdview and the navigation vector are not mirrored against CARLA's own views.

The observation is a Dict:

- ``camera``: ``(height, width, 3)`` uint8 RGB from a front camera (only when ``camera.enabled``);
- ``birdview``: ``(4, size, size)`` float32 in {0, 1}, a top-down raster around the ego vehicle drawn from the
  simulator's actor list and map (no lidar), heading up, ego at the centre; channels :data:`BIRDVIEW_CHANNELS`;
- ``speed``: ``(1,)`` float32, m/s;
- ``navigation``: ``(2 * n_waypoints + 2,)`` float32: the next ``n_waypoints`` route points as (forward, right)
  in the ego frame (padded with the last point), the bearing of the first one in [-pi, pi], and the
  distance left along the route.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from gymnasium import spaces

from dizoo.carla.driving.envs.settings import CarlaSettings

BIRDVIEW_CHANNELS = ("road", "route", "vehicles", "walkers")
ROUTE_HALF_WIDTH = 1.0  # metres drawn either side of a route point in the birdview


@dataclasses.dataclass(frozen=True)
class SensorReadings:
    """What the simulator reports after one tick.

    Attributes:
        location: the ego vehicle's (x, y).
        yaw: its heading in radians.
        speed: its speed in m/s.
        route: ``(N, 2)`` route points still ahead, nearest first; the last is the goal.
        route_origin: the route point passed last (or the start), from which the route deviation is measured.
        lanes: ``(L, 2)`` lane-centre points of the road near the ego vehicle.
        vehicles: ``(M, 5)`` other vehicles as (x, y, yaw, half length, half width).
        walkers: ``(K, 5)`` pedestrians, likewise.
        collision_intensity: norm of the collision impulses since the previous tick (0: no collision).
        lane_invasions: lane markings crossed since the previous tick.
        camera: ``(H, W, 3)`` uint8 RGB frame, or None without a camera.
        lane_half_width: half the lane width, drawn around each lane point.
    """

    location: tuple[float, float]
    yaw: float
    speed: float
    route: np.ndarray
    lanes: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 2)))
    vehicles: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 5)))
    walkers: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 5)))
    collision_intensity: float = 0.0
    lane_invasions: int = 0
    camera: np.ndarray | None = None
    lane_half_width: float = 1.75
    route_origin: tuple[float, float] | None = None


def observation_space(settings: CarlaSettings) -> spaces.Dict:
    """The Dict observation space for ``settings``, known without a server.

    >>> from dizoo.carla.driving.envs.settings import CARLA_CONFIG, parse_settings
    >>> space = observation_space(parse_settings(CARLA_CONFIG))
    >>> {key: sub.shape for key, sub in space.spaces.items()}
    {'birdview': (4, 64, 64), 'camera': (96, 96, 3), 'navigation': (12,), 'speed': (1,)}
    """
    size, n = settings.birdview.size, settings.navigation.n_waypoints
    nav_low = np.array([-np.inf] * (2 * n) + [-math.pi, 0.0], dtype=np.float32)
    nav_high = np.array([np.inf] * (2 * n) + [math.pi, np.inf], dtype=np.float32)
    items: dict[str, spaces.Space[Any]] = {}  # gymnasium orders a Dict space's keys alphabetically
    if settings.camera.enabled:
        items["camera"] = spaces.Box(0, 255, (settings.camera.height, settings.camera.width, 3), dtype=np.uint8)
    items["birdview"] = spaces.Box(0.0, 1.0, (len(BIRDVIEW_CHANNELS), size, size), dtype=np.float32)
    items["speed"] = spaces.Box(0.0, np.inf, (1,), dtype=np.float32)
    items["navigation"] = spaces.Box(nav_low, nav_high, dtype=np.float32)
    return spaces.Dict(items)


def to_ego_frame(points: np.ndarray, location: tuple[float, float], yaw: float) -> np.ndarray:
    """World ``(N, 2)`` points as ``(N, 2)`` (forward, right) offsets from the vehicle.

    >>> to_ego_frame(np.array([[0.0, 5.0]]), (0.0, 0.0), math.pi / 2).round(6).tolist()
    [[5.0, 0.0]]
    """
    d = np.asarray(points, dtype=np.float64).reshape(-1, 2) - np.asarray(location, dtype=np.float64)
    cos, sin = math.cos(yaw), math.sin(yaw)
    return np.stack([cos * d[:, 0] + sin * d[:, 1], -sin * d[:, 0] + cos * d[:, 1]], axis=1)


def route_distance(location: tuple[float, float], route: np.ndarray) -> float:
    """Metres left: to the first route point, then along the route to its end (0 for an empty route).

    >>> route_distance((0.0, 0.0), np.array([[3.0, 4.0], [3.0, 10.0]]))
    11.0
    """
    pts = np.asarray(route, dtype=np.float64).reshape(-1, 2)
    if len(pts) == 0:
        return 0.0
    path = np.concatenate([np.asarray(location, dtype=np.float64).reshape(1, 2), pts])
    return float(np.linalg.norm(np.diff(path, axis=0), axis=1).sum())


def route_deviation(
    location: tuple[float, float], route: np.ndarray, origin: tuple[float, float] | None = None
) -> float:
    """Distance from the vehicle to the route polyline ``origin -> route[0] -> ...`` (0 for an empty route).

    >>> route_deviation((1.0, 2.0), np.array([[0.0, 0.0], [10.0, 0.0]]))
    2.0
    >>> route_deviation((5.0, -1.0), np.array([[10.0, 0.0]]), origin=(0.0, 0.0))
    1.0
    """
    pts = np.asarray(route, dtype=np.float64).reshape(-1, 2)
    if len(pts) == 0:
        return 0.0
    if origin is not None:
        pts = np.concatenate([np.asarray(origin, dtype=np.float64).reshape(1, 2), pts])
    p = np.asarray(location, dtype=np.float64)
    if len(pts) == 1:
        return float(np.linalg.norm(p - pts[0]))
    a, b = pts[:-1], pts[1:]
    ab = b - a
    length2 = np.maximum((ab * ab).sum(axis=1), 1e-12)
    t = np.clip(((p - a) * ab).sum(axis=1) / length2, 0.0, 1.0)
    return float(np.linalg.norm(a + t[:, None] * ab - p, axis=1).min())


def advance_route(route: np.ndarray, location: tuple[float, float], reach_radius: float) -> np.ndarray:
    """Drop the leading route points the vehicle has reached (within ``reach_radius``) or already passed.

    A point counts as passed when the vehicle lies beyond it along the segment to the next point.

    >>> advance_route(np.array([[0.0, 0.0], [2.0, 0.0], [4.0, 0.0]]), (2.5, 0.3), 1.0).tolist()
    [[4.0, 0.0]]
    """
    pts = np.asarray(route, dtype=np.float64).reshape(-1, 2)
    p = np.asarray(location, dtype=np.float64)
    start = 0
    while start < len(pts):
        here = pts[start]
        reached = np.linalg.norm(p - here) <= reach_radius
        passed = start + 1 < len(pts) and float(np.dot(p - here, pts[start + 1] - here)) > 0.0
        if not (reached or passed):
            break
        start += 1
    return pts[start:]


def navigation_vector(readings: SensorReadings, n_waypoints: int) -> np.ndarray:
    """The ``navigation`` entry: next waypoints in the ego frame, bearing of the first, distance left."""
    route = np.asarray(readings.route, dtype=np.float64).reshape(-1, 2)
    if len(route) == 0:
        ahead = np.zeros((n_waypoints, 2))
    else:
        picked = route[np.minimum(np.arange(n_waypoints), len(route) - 1)]
        ahead = to_ego_frame(picked, readings.location, readings.yaw)
    bearing = math.atan2(ahead[0, 1], ahead[0, 0]) if len(route) else 0.0
    tail = [bearing, route_distance(readings.location, route)]
    return np.concatenate([ahead.reshape(-1), tail]).astype(np.float32)


def _cell_centres(size: int, pixels_per_meter: float) -> tuple[np.ndarray, np.ndarray]:
    """Ego-frame (forward, right) of every birdview cell: row 0 is the farthest ahead, column 0 the leftmost."""
    offsets = (np.arange(size) + 0.5 - size / 2) / pixels_per_meter
    forward = np.broadcast_to(-offsets[:, None], (size, size))
    right = np.broadcast_to(offsets[None, :], (size, size))
    return forward, right


def _disks(forward: np.ndarray, right: np.ndarray, centres: np.ndarray, radius: float) -> np.ndarray:
    if len(centres) == 0:
        return np.zeros(forward.shape, dtype=bool)
    d2 = (forward[..., None] - centres[:, 0]) ** 2 + (right[..., None] - centres[:, 1]) ** 2
    return np.asarray((d2 <= radius * radius).any(axis=-1))


def _boxes(forward: np.ndarray, right: np.ndarray, actors: np.ndarray, readings: SensorReadings) -> np.ndarray:
    boxes = np.asarray(actors, dtype=np.float64).reshape(-1, 5)
    if len(boxes) == 0:
        return np.zeros(forward.shape, dtype=bool)
    centres = to_ego_frame(boxes[:, :2], readings.location, readings.yaw)
    rel_yaw = boxes[:, 2] - readings.yaw
    d_fwd = forward[..., None] - centres[:, 0]
    d_right = right[..., None] - centres[:, 1]
    cos, sin = np.cos(rel_yaw), np.sin(rel_yaw)
    along = cos * d_fwd + sin * d_right
    across = -sin * d_fwd + cos * d_right
    return np.asarray(((np.abs(along) <= boxes[:, 3]) & (np.abs(across) <= boxes[:, 4])).any(axis=-1))


def birdview_from_sensors(readings: SensorReadings, size: int, pixels_per_meter: float) -> np.ndarray:
    """The ``birdview`` entry: ``(4, size, size)`` float32 masks of road, route, vehicles and walkers."""
    forward, right = _cell_centres(size, pixels_per_meter)
    reach = size / pixels_per_meter + 2 * readings.lane_half_width  # farther points cannot touch the raster

    def near(points: np.ndarray) -> np.ndarray:
        local = to_ego_frame(points, readings.location, readings.yaw)
        return local[np.abs(local).max(axis=1) <= reach] if len(local) else local

    layers = [
        _disks(forward, right, near(readings.lanes), readings.lane_half_width),
        _disks(forward, right, near(readings.route), ROUTE_HALF_WIDTH),
        _boxes(forward, right, readings.vehicles, readings),
        _boxes(forward, right, readings.walkers, readings),
    ]
    return np.stack(layers).astype(np.float32)


def camera_from_bgra(raw: Any, height: int, width: int) -> np.ndarray:
    """A CARLA camera buffer (BGRA bytes, as ``carla.Image.raw_data``) as an ``(H, W, 3)`` uint8 RGB array.

    >>> camera_from_bgra(bytes([10, 20, 30, 255]), 1, 1).tolist()
    [[[30, 20, 10]]]
    """
    flat = np.frombuffer(bytes(raw), dtype=np.uint8)
    if flat.size != height * width * 4:
        raise ValueError(f"camera buffer has {flat.size} bytes; a {height}x{width} BGRA image has {height * width * 4}")
    return np.ascontiguousarray(flat.reshape(height, width, 4)[:, :, 2::-1])


def observation_from_sensors(readings: SensorReadings, settings: CarlaSettings) -> dict[str, np.ndarray]:
    """The observation for ``readings``; it lies in :func:`observation_space` of the same settings."""
    obs: dict[str, np.ndarray] = {}
    if settings.camera.enabled:
        expected = (settings.camera.height, settings.camera.width, 3)
        frame = readings.camera
        if frame is None or np.shape(frame) != expected or np.asarray(frame).dtype != np.uint8:
            got = None if frame is None else (np.shape(frame), np.asarray(frame).dtype)
            raise ValueError(f"camera readings must be uint8 frames of shape {expected}, got {got}")
        obs["camera"] = np.asarray(frame)
    obs["birdview"] = birdview_from_sensors(readings, settings.birdview.size, settings.birdview.pixels_per_meter)
    obs["speed"] = np.array([max(float(readings.speed), 0.0)], dtype=np.float32)
    obs["navigation"] = navigation_vector(readings, settings.navigation.n_waypoints)
    return obs


BIRDVIEW_COLOURS = np.array([[90, 90, 90], [60, 160, 255], [255, 200, 0], [255, 60, 60]], dtype=np.uint8)


def birdview_to_rgb(birdview: np.ndarray) -> np.ndarray:
    """Paint a birdview as an ``(size, size, 3)`` uint8 image (later channels drawn over earlier ones).

    >>> bv = np.zeros((4, 2, 2), np.float32); bv[2, 0, 0] = 1.0
    >>> birdview_to_rgb(bv)[0, 0].tolist(), birdview_to_rgb(bv)[1, 1].tolist()
    ([255, 200, 0], [0, 0, 0])
    """
    image = np.zeros((*birdview.shape[1:], 3), dtype=np.uint8)
    for channel, colour in enumerate(BIRDVIEW_COLOURS):
        image[birdview[channel] > 0.5] = colour
    return image
