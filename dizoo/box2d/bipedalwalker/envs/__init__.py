from dizoo.box2d.bipedalwalker.envs.bipedalwalker_env import BipedalWalkerEnv

__all__ = ["BipedalWalkerEnv"]
