from dizoo.classic_control.acrobot.envs.acrobot_env import AcrobotEnv

__all__ = ["AcrobotEnv"]
