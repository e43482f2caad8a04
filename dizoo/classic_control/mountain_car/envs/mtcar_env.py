"""DI-engine's module name for the MountainCar env."""

from dizoo.classic_control.mountain_car.envs.mountain_car_env import MountainCarEnv

__all__ = ["MountainCarEnv"]
