"""The live side of the CARLA env: connecting to a server and turning its world into sensor readings.

Everything here needs a running CARLA 0.9.x server, except :func:`connect_client` failing, which is what happens
without one: it tries every configured ``host:port`` in turn and raises :class:`CarlaConnectionError` naming each.
"""

from __future__ import annotations

import math
import queue
from collections.abc import Sequence
from typing import Any

import numpy as np

from ding.errors import DingError
from dizoo.carla.driving.envs.sensors import SensorReadings, advance_route, camera_from_bgra
from dizoo.carla.driving.envs.settings import CarlaSettings

LANE_POINT_SPACING = 2.0  # metres between the map's lane points drawn as road
CAMERA_MOUNT = (1.5, 0.0, 2.4)  # x forward, y right, z up from the vehicle's origin, metres


class CarlaConnectionError(DingError, ConnectionError):
    """No configured CARLA server answered."""


def connect_client(servers: Sequence[tuple[str, int]], timeout: float) -> tuple[Any, tuple[str, int]]:
    """A ``carla.Client`` connected to the first server of ``servers`` that answers within ``timeout`` seconds.

    Raises:
        CarlaConnectionError: none answered; the message names every ``host:port`` tried and why it failed.
    """
    import carla

    failures = []
    for host, port in servers:
        try:
            client = carla.Client(host, port)
            client.set_timeout(timeout)
            client.get_server_version()
        except (RuntimeError, OSError) as err:
            failures.append(f"{host}:{port} ({err})")
            continue
        return client, (host, port)
    raise CarlaConnectionError(
        f"no CARLA server reachable (waited {timeout:g} s for each of {len(failures)}): {'; '.join(failures)}. "
        "Start a CARLA 0.9.x server (e.g. ./CarlaUE4.sh -RenderOffScreen -carla-rpc-port=2000) "
        "or point env.servers at one."
    )


def _box(actor: Any) -> list[float]:
    transform, extent = actor.get_transform(), actor.bounding_box.extent
    loc = transform.location
    return [loc.x, loc.y, math.radians(transform.rotation.yaw), extent.x, extent.y]


class CarlaSession:
    """One ego vehicle with its sensors in a CARLA world run in synchronous mode."""

    def __init__(self, settings: CarlaSettings) -> None:
        self.settings = settings
        self.client, self.endpoint = connect_client(settings.servers, settings.connect_timeout)
        world = self.client.get_world()
        if settings.town and world.get_map().name.split("/")[-1] != settings.town:
            world = self.client.load_world(settings.town)
        self.world = world
        self._original_world_settings = world.get_settings()
        sync = world.get_settings()
        sync.synchronous_mode = True
        sync.fixed_delta_seconds = settings.fixed_delta_seconds
        world.apply_settings(sync)
        self.map = world.get_map()
        lanes = self.map.generate_waypoints(LANE_POINT_SPACING)
        self._lanes = np.array([[w.transform.location.x, w.transform.location.y] for w in lanes]).reshape(-1, 2)
        self._lane_half_width = float(np.median([w.lane_width for w in lanes])) / 2 if lanes else 1.75
        self._actors: list[Any] = []
        self._vehicle: Any = None
        self._route = np.zeros((0, 2))
        self._route_origin: tuple[float, float] | None = None
        self._collision = 0.0
        self._invasions = 0
        self._frames: queue.Queue[Any] = queue.Queue()

    def start_episode(self, rng: np.random.Generator) -> SensorReadings:
        """Spawn the ego vehicle at a random spawn point, attach its sensors and plan a route."""
        import carla

        self._destroy_actors()
        library = self.world.get_blueprint_library()
        blueprints = list(library.filter(self.settings.vehicle_filter))
        if not blueprints:
            raise ValueError(f"vehicle_filter {self.settings.vehicle_filter!r} matches no vehicle blueprint")
        blueprint = blueprints[int(rng.integers(len(blueprints)))]
        spawn_points = self.map.get_spawn_points()
        for index in rng.permutation(len(spawn_points)):
            spawn = spawn_points[int(index)]
            self._vehicle = self.world.try_spawn_actor(blueprint, spawn)
            if self._vehicle is not None:
                break
        if self._vehicle is None:
            raise RuntimeError(f"no free spawn point among {len(spawn_points)} on map {self.map.name}")
        self._actors.append(self._vehicle)
        self._attach("sensor.other.collision", carla.Transform(), self._on_collision)
        self._attach("sensor.other.lane_invasion", carla.Transform(), self._on_invasion)
        cam = self.settings.camera
        if cam.enabled:
            attrs = {"image_size_x": str(cam.width), "image_size_y": str(cam.height), "fov": str(cam.fov)}
            self._attach("sensor.camera.rgb", carla.Transform(carla.Location(*CAMERA_MOUNT)), self._frames.put, attrs)
        # the vehicle's own location is only updated by the next tick: plan from the spawn point
        self._route = self._plan_route(spawn.location, rng)
        self._route_origin = (spawn.location.x, spawn.location.y)
        return self._tick()

    def apply(self, control: Any) -> SensorReadings:
        """Apply a ``carla.VehicleControl`` for one tick."""
        self._vehicle.apply_control(control)
        return self._tick()

    def close(self) -> None:
        self._destroy_actors()
        self.world.apply_settings(self._original_world_settings)

    # ----- internals -----------------------------------------------------------------------------
    def _attach(self, blueprint_id: str, transform: Any, callback: Any, attrs: dict[str, str] | None = None) -> None:
        blueprint = self.world.get_blueprint_library().find(blueprint_id)
        for key, value in (attrs or {}).items():
            blueprint.set_attribute(key, value)
        sensor = self.world.spawn_actor(blueprint, transform, attach_to=self._vehicle)
        sensor.listen(callback)
        self._actors.append(sensor)

    def _on_collision(self, event: Any) -> None:
        impulse = event.normal_impulse
        self._collision += math.sqrt(impulse.x**2 + impulse.y**2 + impulse.z**2) or 1e-6

    def _on_invasion(self, event: Any) -> None:
        self._invasions += len(event.crossed_lane_markings)

    def _plan_route(self, start: Any, rng: np.random.Generator) -> np.ndarray:
        spacing = self.settings.route_spacing
        waypoint = self.map.get_waypoint(start)
        points = []
        for _ in range(math.ceil(self.settings.route_length / spacing)):
            options = waypoint.next(spacing)
            if not options:
                break
            waypoint = options[int(rng.integers(len(options)))]
            points.append([waypoint.transform.location.x, waypoint.transform.location.y])
        return np.array(points).reshape(-1, 2)

    def _tick(self) -> SensorReadings:
        frame = self.world.tick()
        transform, velocity = self._vehicle.get_transform(), self._vehicle.get_velocity()
        location = (transform.location.x, transform.location.y)
        remaining = advance_route(self._route, location, reach_radius=self.settings.route_spacing)
        if len(remaining) < len(self._route):
            passed = self._route[len(self._route) - len(remaining) - 1]
            self._route_origin = (float(passed[0]), float(passed[1]))
        self._route = remaining
        others = [a for a in self.world.get_actors().filter("vehicle.*") if a.id != self._vehicle.id]
        walkers = list(self.world.get_actors().filter("walker.pedestrian.*"))
        readings = SensorReadings(
            location=location,
            yaw=math.radians(transform.rotation.yaw),
            speed=math.sqrt(velocity.x**2 + velocity.y**2 + velocity.z**2),
            route=self._route,
            lanes=self._lanes,
            vehicles=np.array([_box(a) for a in others]).reshape(-1, 5),
            walkers=np.array([_box(a) for a in walkers]).reshape(-1, 5),
            collision_intensity=self._collision,
            lane_invasions=self._invasions,
            camera=self._camera_frame(frame) if self.settings.camera.enabled else None,
            lane_half_width=self._lane_half_width,
            route_origin=self._route_origin,
        )
        self._collision, self._invasions = 0.0, 0
        return readings

    def _camera_frame(self, frame: int) -> np.ndarray:
        cam = self.settings.camera
        while True:
            image = self._frames.get(timeout=self.settings.connect_timeout)
            if image.frame >= frame:
                return camera_from_bgra(image.raw_data, cam.height, cam.width)

    def _destroy_actors(self) -> None:
        for actor in reversed(self._actors):
            if hasattr(actor, "stop"):
                actor.stop()
            actor.destroy()
        self._actors, self._vehicle = [], None
        self._collision, self._invasions = 0.0, 0
        self._frames = queue.Queue()
