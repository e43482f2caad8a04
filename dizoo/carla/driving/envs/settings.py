"""The CARLA env's config: declared defaults and a strict parser into frozen settings.

Every key is checked: an unknown key (at any depth, through ding's strict config merge) is a ``ConfigError`` naming
it, the keys known there and a close match; a value of the wrong type or range names the key, the value and what is
accepted.

Example:
    >>> s = parse_settings({**CARLA_CONFIG, 'servers': ['10.0.0.5:2000', {'host': 'localhost', 'port': 2002}]})
    >>> s.servers
    (('10.0.0.5', 2000), ('localhost', 2002))
    >>> s.camera.enabled, s.birdview.size, s.navigation.n_waypoints
    (True, 64, 5)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from ding.errors import ConfigError
from ding.utils.merge import deep_merge_dicts
from dizoo.env_ids import check_env_id

CARLA_CONFIG: dict[str, Any] = {
    "env_id": "carla",  # a label only
    # CARLA servers, tried in order until one answers: "host:port" strings or {"host": ..., "port": ...} dicts.
    "servers": [{"host": "localhost", "port": 2000}],
    "connect_timeout": 10.0,  # seconds to wait for each server
    "town": None,  # a map to load, e.g. "Town01"; None keeps the server's current map
    "fixed_delta_seconds": 0.1,  # simulated seconds per step (the world runs in synchronous mode)
    "vehicle_filter": "vehicle.tesla.model3",  # blueprint filter of the ego vehicle
    "route_length": 200.0,  # metres of road the route follows from the spawn point
    "route_spacing": 2.0,  # metres between route waypoints
    "max_episode_steps": 1000,
    "act_scale": True,  # act in [-1, 1]^3 through the normalized_action wrapper
    "camera": {"enabled": True, "height": 96, "width": 96, "fov": 90.0},
    "birdview": {"size": 64, "pixels_per_meter": 2.0},
    "navigation": {"n_waypoints": 5},
    "reward": {
        "target_speed": 8.0,  # m/s
        "progress_weight": 1.0,  # per metre of route covered
        "speed_weight": 0.2,  # times 1 - |speed - target| / target
        "deviation_weight": 0.1,  # per metre away from the route
        "lane_invasion_penalty": 1.0,  # per lane marking crossed
        "collision_penalty": 50.0,
        "success_bonus": 50.0,
    },
    "termination": {
        "max_route_deviation": 5.0,  # metres away from the route that end the episode
        "goal_tolerance": 3.0,  # metres from the route's end that count as arrival
        "stuck_speed": 0.5,  # m/s below which a step counts as standing still
        "max_stuck_steps": 100,  # consecutive standing steps that end the episode
    },
    "env_wrapper": "default",
}
"""The env-specific keys of the ``carla`` env and their defaults (``CarlaEnv.config``)."""


@dataclasses.dataclass(frozen=True)
class CameraSettings:
    enabled: bool
    height: int
    width: int
    fov: float


@dataclasses.dataclass(frozen=True)
class BirdviewSettings:
    size: int
    pixels_per_meter: float


@dataclasses.dataclass(frozen=True)
class NavigationSettings:
    n_waypoints: int


@dataclasses.dataclass(frozen=True)
class RewardSettings:
    target_speed: float
    progress_weight: float
    speed_weight: float
    deviation_weight: float
    lane_invasion_penalty: float
    collision_penalty: float
    success_bonus: float


@dataclasses.dataclass(frozen=True)
class TerminationSettings:
    max_route_deviation: float
    goal_tolerance: float
    stuck_speed: float
    max_stuck_steps: int


@dataclasses.dataclass(frozen=True)
class CarlaSettings:
    """Everything the CARLA env reads from its config, checked."""

    servers: tuple[tuple[str, int], ...]
    connect_timeout: float
    town: str | None
    fixed_delta_seconds: float
    vehicle_filter: str
    route_length: float
    route_spacing: float
    max_episode_steps: int
    camera: CameraSettings
    birdview: BirdviewSettings
    navigation: NavigationSettings
    reward: RewardSettings
    termination: TerminationSettings


def _number(value: Any, key: str, *, positive: bool = False, minimum: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{key} must be a finite number, got {value!r}")
    if positive and value <= 0:
        raise ConfigError(f"{key} must be > 0, got {value!r}")
    if minimum is not None and value < minimum:
        raise ConfigError(f"{key} must be >= {minimum}, got {value!r}")
    return float(value)


MAX_PIXELS = 4096
"""The largest camera side and birdview size, in pixels (a larger image is no driving observation; its space alone
would not fit in memory)."""


def _count(value: Any, key: str, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1 or (high is not None and value > high):
        within = "a positive int" if high is None else f"an int in [1, {high}]"
        raise ConfigError(f"{key} must be {within}, got {value!r}")
    return int(value)


def _flag(value: Any, key: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{key} must be True or False, got {value!r}")
    return value


def _text(value: Any, key: str) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{key} must be a non-empty string, got {value!r}")
    return value


def parse_endpoint(item: Any, where: str = "servers[0]") -> tuple[str, int]:
    """One server as ``(host, port)`` from ``"host:port"`` or ``{"host": ..., "port": ...}``.

    >>> parse_endpoint('carla-1.local:2000'), parse_endpoint({'host': '::1', 'port': 2004})
    (('carla-1.local', 2000), ('::1', 2004))
    """
    if isinstance(item, str):
        host, sep, port_text = item.rpartition(":")
        if not sep or not host or not port_text.isdigit():
            raise ConfigError(f"{where} must look like 'host:port', got {item!r}")
        host, port = host.strip("[]"), int(port_text)
    elif isinstance(item, Mapping):
        deep_merge_dicts({"host": None, "port": None}, item, strict=True, path=where)  # unknown keys raise
        if "host" not in item or "port" not in item:
            raise ConfigError(f"{where} needs both 'host' and 'port', got {dict(item)!r}")
        host, port = _text(item["host"], f"{where}.host"), item["port"]
    else:
        raise ConfigError(f"{where} must be a 'host:port' string or a {{host, port}} dict, got {item!r}")
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ConfigError(f"{where}.port must be an int in 1..65535, got {port!r}")
    return host, port


def _servers(value: Any) -> tuple[tuple[str, int], ...]:
    if isinstance(value, (str, Mapping)) or not isinstance(value, (list, tuple)) or not value:
        raise ConfigError(
            f"servers must be a non-empty list of 'host:port' strings or {{host, port}} dicts, got {value!r}"
        )
    return tuple(parse_endpoint(item, f"servers[{i}]") for i, item in enumerate(value))


def parse_settings(cfg: Mapping[str, Any], extra_keys: Mapping[str, Any] | None = None) -> CarlaSettings:
    """Check a CARLA env config strictly and return its settings.

    ``cfg`` is merged strictly into :data:`CARLA_CONFIG` (missing keys take its defaults); ``extra_keys`` are
    further top-level keys the config may hold (the common env keys).
    """
    full = deep_merge_dicts({**CARLA_CONFIG, **(extra_keys or {})}, cfg, strict=True, path="env")
    get = full.__getitem__
    camera, birdview, nav = full["camera"], full["birdview"], full["navigation"]
    reward, term = full["reward"], full["termination"]
    check_env_id(get("env_id"), ["carla"], "carla")
    town = get("town")
    _flag(get("act_scale"), "act_scale")
    return CarlaSettings(
        servers=_servers(get("servers")),
        connect_timeout=_number(get("connect_timeout"), "connect_timeout", positive=True),
        town=None if town is None else _text(town, "town"),
        fixed_delta_seconds=_number(get("fixed_delta_seconds"), "fixed_delta_seconds", positive=True),
        vehicle_filter=_text(get("vehicle_filter"), "vehicle_filter"),
        route_length=_number(get("route_length"), "route_length", positive=True),
        route_spacing=_number(get("route_spacing"), "route_spacing", positive=True),
        max_episode_steps=_count(get("max_episode_steps"), "max_episode_steps"),
        camera=CameraSettings(
            enabled=_flag(camera["enabled"], "camera.enabled"),
            height=_count(camera["height"], "camera.height", high=MAX_PIXELS),
            width=_count(camera["width"], "camera.width", high=MAX_PIXELS),
            fov=_number(camera["fov"], "camera.fov", positive=True),
        ),
        birdview=BirdviewSettings(
            size=_count(birdview["size"], "birdview.size", high=MAX_PIXELS),
            pixels_per_meter=_number(birdview["pixels_per_meter"], "birdview.pixels_per_meter", positive=True),
        ),
        navigation=NavigationSettings(n_waypoints=_count(nav["n_waypoints"], "navigation.n_waypoints")),
        reward=RewardSettings(
            target_speed=_number(reward["target_speed"], "reward.target_speed", positive=True),
            **{
                key: _number(reward[key], f"reward.{key}", minimum=0.0)
                for key in (
                    "progress_weight",
                    "speed_weight",
                    "deviation_weight",
                    "lane_invasion_penalty",
                    "collision_penalty",
                    "success_bonus",
                )
            },
        ),
        termination=TerminationSettings(
            max_route_deviation=_number(term["max_route_deviation"], "termination.max_route_deviation", positive=True),
            goal_tolerance=_number(term["goal_tolerance"], "termination.goal_tolerance", positive=True),
            stuck_speed=_number(term["stuck_speed"], "termination.stuck_speed", minimum=0.0),
            max_stuck_steps=_count(term["max_stuck_steps"], "termination.max_stuck_steps"),
        ),
    )
