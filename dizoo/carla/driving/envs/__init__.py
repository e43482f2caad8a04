from dizoo.carla.driving.envs.carla_env import CarlaDrivingEnv, CarlaEnv, step_outcome
from dizoo.carla.driving.envs.client import CarlaConnectionError, connect_client
from dizoo.carla.driving.envs.control import ACTION_SPACE, vehicle_control_from_action
from dizoo.carla.driving.envs.rules import reward_from_state, termination_from_state
from dizoo.carla.driving.envs.sensors import SensorReadings, observation_from_sensors, observation_space
from dizoo.carla.driving.envs.settings import CARLA_CONFIG, CarlaSettings, parse_settings

__all__ = [
    "ACTION_SPACE",
    "CARLA_CONFIG",
    "CarlaConnectionError",
    "CarlaDrivingEnv",
    "CarlaEnv",
    "CarlaSettings",
    "SensorReadings",
    "connect_client",
    "observation_from_sensors",
    "observation_space",
    "parse_settings",
    "reward_from_state",
    "step_outcome",
    "termination_from_state",
    "vehicle_control_from_action",
]
