from dizoo.classic_control.acrobot.envs.acrobot_env import AcroBotEnv, AcrobotEnv

__all__ = ["AcroBotEnv", "AcrobotEnv"]
