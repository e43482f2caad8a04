from dizoo.box2d.lunarlander.envs.lunarlander_env import LunarLanderEnv

__all__ = ["LunarLanderEnv"]
