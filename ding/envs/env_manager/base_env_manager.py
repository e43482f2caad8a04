"""DI-engine's module ``ding.envs.env_manager.base_env_manager``: the names it defines, from ding's modules."""

from ding.envs.env_manager.base_manager import BaseEnvManager
from ding.envs.env_manager.env_thread import timeout_wrapper
from ding.envs.env_manager.factory import create_env_manager, get_env_manager_cls
from ding.envs.env_manager.state import EnvState
from ding.envs.env_manager.v2 import BaseEnvManagerV2

__all__ = [
    "BaseEnvManager",
    "BaseEnvManagerV2",
    "EnvState",
    "create_env_manager",
    "get_env_manager_cls",
    "timeout_wrapper",
]
