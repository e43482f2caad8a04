"""The PettingZoo suite: multi-agent MPE envs (``simple_spread``) through ding's ``ParallelEnvWrapper``."""
