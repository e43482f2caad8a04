from dizoo.classic_control.mountain_car.envs.mountain_car_env import MountainCarEnv

__all__ = ["MountainCarEnv"]
