"""A module that registers an env manager type when imported (for tests of ``import_names``)."""

from __future__ import annotations

from ding.envs.env_manager import ENV_MANAGER_REGISTRY, BaseEnvManager


@ENV_MANAGER_REGISTRY.register("ding_test_manager")
class RegisteredManager(BaseEnvManager):
    """The base manager under another registry name."""

    manager_type = "ding_test_manager"
