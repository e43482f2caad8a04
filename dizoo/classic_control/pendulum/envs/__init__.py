from dizoo.classic_control.pendulum.envs.pendulum_env import PendulumEnv

__all__ = ["PendulumEnv"]
