"""Env managers that run batches of envs (serial, subprocess, async); their config declarations."""

from ding.envs.env_manager.config import MANAGER_DEFAULT_CONFIGS, manager_default_config

__all__ = ["MANAGER_DEFAULT_CONFIGS", "manager_default_config"]
