"""DI-engine's ``ding.envs.env.default_wrapper``: the wrapper chain each preset name stands for."""

from ding.envs.env_wrappers import get_default_wrappers

__all__ = ["get_default_wrappers"]
