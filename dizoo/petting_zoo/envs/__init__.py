from dizoo.petting_zoo.envs.petting_zoo_simple_spread_env import PettingZooEnv

__all__ = ["PettingZooEnv"]
