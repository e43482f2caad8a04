"""DI-engine's ``ding.envs.env.ding_env_wrapper``: any gymnasium env behind the ``BaseEnv`` API."""

from ding.envs.bridges.from_gymnasium import DingEnvWrapper

__all__ = ["DingEnvWrapper"]
