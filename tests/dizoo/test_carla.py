"""CARLA env without a server: spaces, strict config parsing, the pure sensor -> observation / reward / termination
functions, the action mapping onto the real ``carla.VehicleControl``, the config files' spec predictions, and the
"no server reachable" error against real closed and silent localhost ports."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import pathlib
import socket
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

carla = pytest.importorskip("carla")

from ding.config import compile_config, read_config  # noqa: E402
from ding.entry.spec import spec_trace_from_config  # noqa: E402
from ding.envs.checks.conformance import check_value_in_space  # noqa: E402
from ding.envs.env_wrappers import DingActionWrapper, DingObservationWrapper  # noqa: E402
from ding.envs.values.conversion import observation_converter  # noqa: E402
from ding.errors import ConfigError  # noqa: E402
from dizoo.carla.driving.envs import (  # noqa: E402
    ACTION_SPACE,
    CARLA_CONFIG,
    CarlaConnectionError,
    CarlaDrivingEnv,
    CarlaEnv,
    SensorReadings,
    connect_client,
    observation_from_sensors,
    observation_space,
    parse_settings,
    reward_from_state,
    step_outcome,
    termination_from_state,
    vehicle_control_from_action,
)
from dizoo.carla.driving.envs.carla_env import EpisodeProgress  # noqa: E402
from dizoo.carla.driving.envs.rules import DrivingState, driving_state, next_stuck_steps  # noqa: E402
from dizoo.carla.driving.envs.sensors import advance_route, birdview_from_sensors, camera_from_bgra  # noqa: E402
from tests.envs.env_wrappers.test_shape_proof import assert_matches_space  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
CARLA_CONFIGS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "dizoo" / "carla").glob("*/config/*_config.py"))
DEFAULTS = parse_settings(CARLA_CONFIG)


def settings_with(**changes: Any) -> Any:
    return parse_settings({**CARLA_CONFIG, **changes})


def readings_for(settings: Any, seed: int = 0) -> SensorReadings:
    """Sensor readings of the form the live session produces for ``settings``, with random content."""
    rng = np.random.default_rng(seed)
    location = (float(rng.uniform(-50, 50)), float(rng.uniform(-50, 50)))
    cam = settings.camera
    return SensorReadings(
        location=location,
        yaw=float(rng.uniform(-math.pi, math.pi)),
        speed=float(rng.uniform(0, 15)),
        route=np.asarray(location) + np.cumsum(rng.uniform(1, 3, size=(30, 2)), axis=0),
        lanes=np.asarray(location) + rng.uniform(-40, 40, size=(400, 2)),
        vehicles=np.column_stack(
            [rng.uniform(-20, 20, (6, 2)) + location, rng.uniform(-3, 3, 6), [2.3, 1.0] * np.ones((6, 2))]
        ),
        walkers=np.column_stack(
            [rng.uniform(-20, 20, (4, 2)) + location, rng.uniform(-3, 3, 4), [0.3, 0.3] * np.ones((4, 2))]
        ),
        collision_intensity=0.0,
        lane_invasions=int(rng.integers(0, 2)),
        camera=rng.integers(0, 256, (cam.height, cam.width, 3), dtype=np.uint8) if cam.enabled else None,
    )


# ----- spaces -------------------------------------------------------------------------------------------------
def test_declared_spaces_follow_the_config() -> None:
    declared = CarlaEnv.spaces_from_config({"camera": {"height": 48, "width": 64}, "navigation": {"n_waypoints": 3}})
    obs = declared.observation
    assert isinstance(obs, spaces.Dict) and set(obs.spaces) == {"camera", "birdview", "speed", "navigation"}
    assert obs["camera"] == spaces.Box(0, 255, (48, 64, 3), np.uint8)  # the camera's frames, uint8 up to the model
    assert obs["birdview"] == spaces.Box(0, 1, (4, 64, 64), np.float32)
    assert obs["navigation"].shape == (8,) and obs["navigation"].high[-2] == np.float32(math.pi)
    assert declared.action == spaces.Box(-1, 1, (3,), np.float32)
    raw = CarlaEnv.spaces_from_config({"camera": {"enabled": False}, "act_scale": False})
    assert "camera" not in raw.observation.spaces and raw.action == ACTION_SPACE
    assert raw.action.low.tolist() == [-1.0, 0.0, 0.0]


def test_env_builds_without_a_server_and_its_gymnasium_env_has_the_declared_raw_spaces() -> None:
    cfg = {"camera": {"enabled": False}, "servers": ["127.0.0.1:1"]}
    with CarlaEnv(cfg) as env:
        assert (env.observation_space, env.action_space) == tuple(CarlaEnv.spaces_from_config(cfg))[:2]
        raw = env.env.unwrapped
        assert raw.settings == CarlaEnv.settings({**CarlaEnv.default_config(), **cfg})
        assert raw.observation_space == observation_space(raw.settings)
        assert raw.action_space == ACTION_SPACE


# ----- config parsing -----------------------------------------------------------------------------------------
def test_servers_accept_strings_and_dicts() -> None:
    settings = settings_with(servers=["carla-a:2000", {"host": "10.1.2.3", "port": 3000}, "[::1]:2002"])
    assert settings.servers == (("carla-a", 2000), ("10.1.2.3", 3000), ("::1", 2002))


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"sever": []}, r"unknown config key 'env\.sever'; known keys under 'env': .*Did you mean 'servers'\?"),
        (
            {"camera": {"heigth": 10}},
            r"unknown config key 'env\.camera\.heigth'; known keys under 'env\.camera': enabled, fov, height, "
            r"width\. Did you mean 'height'",
        ),
        (
            {"reward": {"colision_penalty": 1.0}},
            r"unknown config key 'env\.reward\.colision_penalty'.*Did you mean 'collision_penalty'",
        ),
        (
            {"servers": [{"host": "a", "prot": 1}]},
            r"unknown config key 'servers\[0\]\.prot'; known keys under 'servers\[0\]': host, port",
        ),
        ({"servers": "localhost:2000"}, r"servers must be a (non-empty )?list.* got 'localhost:2000'"),
        ({"servers": []}, r"servers must be a non-empty list .* got \[\]"),
        ({"servers": ["localhost"]}, r"servers\[0\] must look like 'host:port', got 'localhost'"),
        (
            {"servers": ["a:1", {"host": "b", "port": 70000}]},
            r"servers\[1\]\.port must be an int in 1\.\.65535, got 70000",
        ),
        ({"servers": [{"host": "b"}]}, r"servers\[0\] needs both 'host' and 'port'"),
        ({"camera": {"height": 0}}, r"camera\.height must be an int in \[1, 4096\], got 0"),
        ({"birdview": {"size": 10**9}}, r"birdview\.size must be an int in \[1, 4096\], got 1000000000"),
        ({"camera": []}, r"config key 'env\.camera' must be a dict \(of enabled, fov, height, width\), got list \[\]"),
        ({"connect_timeout": -1}, r"connect_timeout must be > 0, got -1"),
        ({"reward": {"target_speed": 0}}, r"reward\.target_speed must be > 0, got 0"),
        ({"reward": {"collision_penalty": -5.0}}, r"reward\.collision_penalty must be >= 0\.0, got -5\.0"),
        (
            {"termination": {"max_stuck_steps": 1.5}},
            r"termination\.max_stuck_steps must be (a positive|an) int, got 1\.5",
        ),
        ({"act_scale": "yes"}, r"act_scale must be (True or False|a bool), got 'yes'"),
        ({"town": ""}, r"town must be a non-empty string, got ''"),
        ({"fixed_delta_seconds": float("nan")}, r"fixed_delta_seconds must be a finite number, got nan"),
    ],
)
def test_bad_config_is_rejected_naming_key_and_value(changes: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        CarlaEnv.spaces_from_config(changes)
    with pytest.raises(ConfigError, match=match.replace("'env\\.", "'(env\\.)?")):
        parse_settings({**CARLA_CONFIG, **changes})  # the same checks when the settings are parsed on their own


def test_env_id_is_the_carla_label() -> None:
    with pytest.raises(ConfigError, match=r"carla: unknown env_id 'Carla-v0'; known: carla"):
        CarlaEnv.spaces_from_config({"env_id": "Carla-v0"})


def test_compile_config_rejects_a_typo_in_a_carla_config() -> None:
    main, create = read_config(str(ROOT / CARLA_CONFIGS[0]))
    main.env.birdview = {"sise": 32}
    with pytest.raises(ConfigError, match="sise"):
        compile_config(main, create, require_policy=False)


# ----- spec prediction of every carla config == observations assembled from sensor readings ---------------------
def _through_wrappers(env: CarlaEnv, raw_obs: Any) -> Any:
    """Apply the env's own wrapper stack to a raw observation, innermost first, then ding's float32 conversion."""
    stack = []
    wrapper = env.env
    while hasattr(wrapper, "env"):
        stack.append(wrapper)
        wrapper = wrapper.env
    obs = raw_obs
    for layer in reversed(stack):
        if isinstance(layer, DingObservationWrapper):
            obs = layer.observation(obs)
        else:  # any other layer must leave observations alone
            assert layer.observation_space == layer.env.observation_space, type(layer).__name__
    return observation_converter(env.env.observation_space)(obs)


def test_carla_configs_are_found() -> None:
    assert "dizoo/carla/driving/config/carla_sac_config.py" in CARLA_CONFIGS


@pytest.mark.parametrize("path", CARLA_CONFIGS)
def test_spec_prediction_matches_observations_from_sensor_readings(path: str) -> None:
    main_config, create_config = read_config(str(ROOT / path))
    cfg = compile_config(main_config, create_config, require_policy=False)
    predicted = spec_trace_from_config(main_config, create_config)[-1][1]
    if isinstance(predicted.observation, spaces.Box):
        assert tuple(np.atleast_1d(cfg.policy.model.obs_shape)) == predicted.observation.shape
    for is_train in (True, False):
        env = CarlaEnv({**cfg.env, "is_train": is_train})
        assert (env.observation_space, env.action_space, env.reward_space) == tuple(predicted)
        settings = env.env.unwrapped.settings
        assert settings == CarlaEnv.settings(cfg.env)
        for seed in range(3):
            raw = observation_from_sensors(readings_for(settings, seed), settings)
            assert check_value_in_space(raw, env.env.unwrapped.observation_space, "raw obs") is None
            assert_matches_space(_through_wrappers(env, raw), predicted.observation, f"obs from readings {seed}")
        env.close()


# ----- the observation builder --------------------------------------------------------------------------------
def test_observation_lies_in_the_declared_space_with_and_without_camera() -> None:
    for settings in (DEFAULTS, settings_with(camera={"enabled": False})):
        obs = observation_from_sensors(readings_for(settings), settings)
        assert check_value_in_space(obs, observation_space(settings), "obs") is None


def test_navigation_is_in_the_ego_frame_padded_with_the_goal() -> None:
    settings = settings_with(navigation={"n_waypoints": 3}, camera={"enabled": False})
    # facing +y: a point further along +y is ahead, one at larger x is to the left (CARLA's y points right)
    readings = SensorReadings((10.0, 5.0), math.pi / 2, 4.0, np.array([[10.0, 8.0], [12.0, 8.0]]))
    nav = observation_from_sensors(readings, settings)["navigation"]
    np.testing.assert_allclose(nav, [3.0, 0.0, 3.0, -2.0, 3.0, -2.0, 0.0, 5.0], atol=1e-6)
    empty = observation_from_sensors(dataclasses.replace(readings, route=np.zeros((0, 2))), settings)["navigation"]
    assert empty.tolist() == [0.0] * 8


def _occupied(mask: np.ndarray) -> set[tuple[int, int]]:
    return {(int(r), int(c)) for r, c in zip(*np.nonzero(mask), strict=True)}


@pytest.mark.parametrize(
    ("ego_yaw", "vehicle_offset", "vehicle_yaw", "cells"),
    [
        # 8 m ahead, aligned, half extents 2 x 1 m: forward 6..10 m -> rows 6..9, right -1..1 m -> columns 15, 16
        (0.0, (8.0, 0.0), 0.0, {(r, c) for r in range(6, 10) for c in (15, 16)}),
        # the same vehicle seen by an ego facing +y: the raster turns with the ego vehicle
        (math.pi / 2, (0.0, 8.0), math.pi / 2, {(r, c) for r in range(6, 10) for c in (15, 16)}),
        # crosswise: 2 x 4 m footprint -> rows 7, 8 and columns 14..17
        (0.0, (8.0, 0.0), math.pi / 2, {(r, c) for r in (7, 8) for c in range(14, 18)}),
        # 4 m to the right: forward -2..2 m -> rows 14..17, right 3..5 m -> columns 19, 20
        (0.0, (0.0, 4.0), 0.0, {(r, c) for r in range(14, 18) for c in (19, 20)}),
        # 100 m away: outside the 32 m raster
        (0.0, (100.0, 0.0), 0.0, set()),
    ],
)
def test_birdview_draws_vehicles_where_they_are(
    ego_yaw: float, vehicle_offset: tuple[float, float], vehicle_yaw: float, cells: set[tuple[int, int]]
) -> None:
    ego = (3.0, -7.0)
    vehicle = [ego[0] + vehicle_offset[0], ego[1] + vehicle_offset[1], vehicle_yaw, 2.0, 1.0]
    readings = SensorReadings(ego, ego_yaw, 0.0, np.zeros((0, 2)), vehicles=np.array([vehicle]))
    bv = birdview_from_sensors(readings, size=32, pixels_per_meter=1.0)
    assert bv.shape == (4, 32, 32) and bv.dtype == np.float32
    assert _occupied(bv[2]) == cells
    assert not bv[[0, 1, 3]].any()


def test_birdview_road_route_and_walker_channels() -> None:
    readings = SensorReadings(
        (0.0, 0.0),
        0.0,
        0.0,
        route=np.array([[5.0, 0.0]]),
        lanes=np.array([[0.0, 10.0]]),
        walkers=np.array([[-6.5, -6.5, 0.0, 0.3, 0.3]]),
        lane_half_width=1.5,
    )
    bv = birdview_from_sensors(readings, size=32, pixels_per_meter=1.0)
    assert _occupied(bv[1]) == {(10, 15), (10, 16), (11, 15), (11, 16)}  # within 1 m of (5 ahead, 0 right)
    assert _occupied(bv[3]) == {(22, 9)}  # the cell centred 6.5 m behind and 6.5 m to the left
    road = _occupied(bv[0])
    assert (15, 26) in road and (15, 25) in road and (15, 23) not in road and (15, 5) not in road
    assert not bv[2].any()


@pytest.mark.parametrize(
    ("camera", "match"),
    [
        (None, r"camera readings must be uint8 frames of shape \(96, 96, 3\), got None"),
        (np.zeros((96, 96, 4), np.uint8), r"got \(\(96, 96, 4\), dtype\('uint8'\)\)"),
        (np.zeros((96, 96, 3), np.float32), r"got \(\(96, 96, 3\), dtype\('float32'\)\)"),
    ],
)
def test_camera_readings_must_fit_the_configured_camera(camera: Any, match: str) -> None:
    readings = dataclasses.replace(readings_for(DEFAULTS), camera=camera)
    with pytest.raises(ValueError, match=match):
        observation_from_sensors(readings, DEFAULTS)


def test_camera_buffer_is_converted_from_bgra() -> None:
    bgra = np.array([[[1, 2, 3, 255], [4, 5, 6, 255]]], dtype=np.uint8)
    assert camera_from_bgra(bgra.tobytes(), 1, 2).tolist() == [[[3, 2, 1], [6, 5, 4]]]
    with pytest.raises(ValueError, match="camera buffer has 8 bytes; a 2x2 BGRA image has 16"):
        camera_from_bgra(bgra.tobytes(), 2, 2)


@pytest.mark.parametrize(
    ("location", "expected_first"),
    [
        ((-3.0, 0.0), [0.0, 0.0]),  # before the route: nothing dropped
        ((0.5, 0.0), [2.0, 0.0]),  # within reach of the first point
        ((3.5, 2.5), [4.0, 0.0]),  # beside the route, past the second point
        ((9.0, 0.0), [6.0, 0.0]),  # past the goal: the goal stays until it is reached
    ],
)
def test_advance_route(location: tuple[float, float], expected_first: list[float]) -> None:
    route = np.array([[0.0, 0.0], [2.0, 0.0], [4.0, 0.0], [6.0, 0.0]])
    assert advance_route(route, location, reach_radius=1.0)[0].tolist() == expected_first


# ----- reward and termination ---------------------------------------------------------------------------------
def state(speed: float = 8.0, goal: float = 100.0, dev: float = 0.0, hit: float = 0.0, lanes: int = 0) -> DrivingState:
    return DrivingState(speed, goal, dev, hit, lanes)


@pytest.mark.parametrize(
    ("previous", "current", "expected"),
    [
        (None, state(), 0.2),  # first step: the speed term only (at the target speed)
        (state(goal=100.0), state(goal=98.0), 2.2),  # 2 m of progress
        (state(goal=100.0), state(goal=101.0), -0.8),  # driving away from the goal
        (state(), state(speed=0.0), 0.0),  # standing still: no speed reward
        (state(), state(speed=4.0), 0.1),  # half the target speed
        (state(), state(speed=24.0), -0.2),  # three times the target speed
        (state(), state(dev=2.0), 0.0),  # 2 m off the route costs 0.2
        (state(), state(lanes=2), -1.8),  # two lane markings crossed
        (state(), state(hit=750.0), -49.8),  # a collision
        (state(goal=4.0), state(goal=2.0), 52.2),  # arrival: progress, speed and the success bonus
    ],
)
def test_reward_from_state(previous: DrivingState | None, current: DrivingState, expected: float) -> None:
    assert reward_from_state(previous, current, DEFAULTS) == pytest.approx(expected)


def test_reward_weights_come_from_the_config() -> None:
    settings = settings_with(reward={"progress_weight": 0.5, "speed_weight": 0.0, "target_speed": 5.0})
    assert reward_from_state(state(goal=10.0), state(goal=6.0, dev=1.0), settings) == pytest.approx(2.0 - 0.1)


@pytest.mark.parametrize(
    ("current", "steps", "stuck", "expected"),
    [
        (state(), 1, 0, (False, False, None)),
        (state(hit=0.1), 5, 0, (True, False, "collision")),
        (state(hit=1.0, dev=9.0, goal=1.0), 1000, 100, (True, False, "collision")),  # collision wins
        (state(dev=5.01), 5, 0, (True, False, "off_route")),
        (state(dev=5.0), 5, 0, (False, False, None)),  # exactly at the limit: still on route
        (state(goal=3.0), 5, 0, (True, False, "goal")),
        (state(goal=3.01), 5, 0, (False, False, None)),
        (state(goal=1.0), 1000, 0, (True, False, "goal")),  # arriving on the last step is a success, not a cut
        (state(speed=0.0), 5, 100, (True, False, "stuck")),
        (state(speed=0.0), 5, 99, (False, False, None)),
        (state(), 1000, 0, (False, True, "time_limit")),
        (state(), 999, 0, (False, False, None)),
    ],
)
def test_termination_from_state(current: DrivingState, steps: int, stuck: int, expected: tuple[Any, ...]) -> None:
    end = termination_from_state(current, steps, stuck, DEFAULTS)
    assert (end.terminated, end.truncated, end.reason) == expected


def test_stuck_steps_count_consecutive_slow_steps() -> None:
    counts = []
    count = 0
    for speed in (0.0, 0.4, 0.49, 0.5, 0.1):
        count = next_stuck_steps(count, state(speed=speed), DEFAULTS)
        counts.append(count)
    assert counts == [1, 2, 3, 0, 1]


def test_step_outcome_over_a_short_drive_to_the_goal() -> None:
    settings = settings_with(camera={"enabled": False}, birdview={"size": 16})
    route = np.array([[10.0, 0.0], [20.0, 0.0]])
    progress = EpisodeProgress(previous=DrivingState(8.0, 20.0, 0.0))
    rewards, ends = [], []
    for x, origin in ((5.0, (0.0, 0.0)), (12.0, (10.0, 0.0)), (18.0, (10.0, 0.0))):
        readings = SensorReadings((x, 0.0), 0.0, 8.0, advance_route(route, (x, 0.0), 1.0), route_origin=origin)
        outcome = step_outcome(progress, readings, settings)
        progress = outcome.progress
        rewards.append(outcome.reward)
        ends.append(
            (outcome.terminated, outcome.truncated, outcome.info.get("end_reason"), outcome.info.get("success"))
        )
        assert check_value_in_space(outcome.obs, observation_space(settings), "obs") is None
    assert rewards == pytest.approx([5.0 + 0.2, 7.0 + 0.2, 6.0 + 0.2 + 50.0])
    assert ends == [(False, False, None, None), (False, False, None, None), (True, False, "goal", True)]
    assert progress.steps == 3 and progress.stuck_steps == 0


# ----- actions ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ([0.0, 0.0, 0.0], (0.0, 0.0, 0.0)),
        ([-1.0, 1.0, 0.0], (-1.0, 1.0, 0.0)),
        ([0.5, 0.25, 0.75], (0.5, 0.25, 0.75)),
        ([2.0, -1.0, 1.5], (1.0, 0.0, 1.0)),  # clipped into the action space
    ],
)
def test_action_maps_onto_a_vehicle_control(action: list[float], expected: tuple[float, float, float]) -> None:
    control = vehicle_control_from_action(np.asarray(action, np.float32))
    assert isinstance(control, carla.VehicleControl)
    assert (control.steer, control.throttle, control.brake) == pytest.approx(expected)
    assert not control.reverse and not control.hand_brake


@pytest.mark.parametrize(
    ("action", "match"), [([0.0, 1.0], r"shape \(3,\), got shape \(2,\)"), ([0.0, np.nan, 0.0], "must be finite")]
)
def test_bad_actions_are_rejected(action: list[float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        vehicle_control_from_action(action)


def test_scaled_actions_reach_the_vehicle_through_normalized_action() -> None:
    with CarlaEnv({"camera": {"enabled": False}}) as env:
        outer = env.env
        while not (isinstance(outer, DingActionWrapper) and type(outer).__name__ == "NormalizedActionWrapper"):
            outer = outer.env
        control = vehicle_control_from_action(outer.action(np.array([-1.0, -1.0, 1.0], np.float32)))
        assert (control.steer, control.throttle, control.brake) == pytest.approx((-1.0, 0.0, 1.0))
        control = vehicle_control_from_action(outer.action(np.array([0.5, 0.0, -1.0], np.float32)))
        assert (control.steer, control.throttle, control.brake) == pytest.approx((0.5, 0.5, 0.0))


# ----- no server ----------------------------------------------------------------------------------------------
@contextlib.contextmanager
def closed_port() -> Iterator[int]:
    """A localhost port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    yield port


@contextlib.contextmanager
def silent_server() -> Iterator[int]:
    """A localhost port that accepts TCP connections but never speaks CARLA's protocol."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield sock.getsockname()[1]


def test_no_reachable_server_is_a_fast_error_naming_every_endpoint() -> None:
    with closed_port() as dead, silent_server() as silent:
        env = CarlaEnv(
            {"servers": [f"127.0.0.1:{dead}", {"host": "127.0.0.1", "port": silent}], "connect_timeout": 0.25}
        )
        start = time.monotonic()
        with pytest.raises(CarlaConnectionError) as caught:
            env.reset()
        elapsed = time.monotonic() - start
        env.close()
    message = str(caught.value)
    assert f"127.0.0.1:{dead} (" in message and f"127.0.0.1:{silent} (" in message
    assert message.index(f":{dead} (") < message.index(f":{silent} (")  # tried in the configured order
    assert "waited 0.25 s for each of 2" in message
    assert isinstance(caught.value, ConnectionError)
    assert elapsed < 5.0, f"two endpoints with a 0.25 s timeout took {elapsed:.1f} s"


def test_connect_client_reports_an_unresolvable_host() -> None:
    with closed_port() as dead, pytest.raises(CarlaConnectionError, match=r"no-such-host\.invalid:2000 \("):
        connect_client([("no-such-host.invalid", 2000), ("127.0.0.1", dead)], timeout=0.2)


@pytest.mark.parametrize(
    ("location", "origin", "expected"),
    [
        ((5.0, 0.0), (0.0, 0.0), 0.0),  # on the way to the first point: on the route
        ((5.0, 0.0), None, 5.0),  # without the origin only the points ahead count
        ((5.0, -1.5), (0.0, 0.0), 1.5),
        ((15.0, 2.0), (0.0, 0.0), 2.0),
        ((25.0, 0.0), (0.0, 0.0), 5.0),  # beyond the goal
    ],
)
def test_route_deviation_is_measured_from_the_last_passed_point(
    location: tuple[float, float], origin: tuple[float, float] | None, expected: float
) -> None:
    readings = SensorReadings(location, 0.0, 0.0, np.array([[10.0, 0.0], [20.0, 0.0]]), route_origin=origin)
    assert driving_state(readings).route_deviation == pytest.approx(expected)


def test_the_gymnasium_env_needs_a_reset_and_renders_only_rgb_arrays() -> None:
    settings = settings_with(camera={"enabled": False})
    env = CarlaDrivingEnv(settings)
    with pytest.raises(RuntimeError, match="step called before reset"):
        env.step(np.zeros(3, np.float32))
    assert env.render() is None and env.metadata["render_fps"] == 10
    with pytest.raises(ValueError, match="render_mode must be None or 'rgb_array', got 'human'"):
        CarlaDrivingEnv(settings, render_mode="human")
    env.close()
