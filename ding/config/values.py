"""Hold each merged section of a config to what its component declares its keys accept.

``compile_config`` calls :func:`check_env_section` and :func:`check_policy_section` once each section is merged, so a
value no key accepts is one :class:`~ding.errors.ConfigError` naming the key path, the value and what is accepted,
before any env, manager or policy is built. The declarations live with the components (their ``config`` class
attributes, see :mod:`ding.utils.accepts`); the env managers, policies and envs check the same way when built
directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from easydict import EasyDict

from ding.config.policy_registry import POLICY_REGISTRY
from ding.config.policy_sections import COMMON_CONFIG
from ding.envs.base_env import COMMON_ENV_CONFIG
from ding.envs.env_manager.factory import get_env_manager_cls
from ding.utils.accepts import check_values


def check_env_section(env_cls: type, env_cfg: Mapping[str, Any]) -> None:
    """Hold a merged ``env`` section to its env class's declared keys, and ``env.manager`` to its manager's.

    An env class written DI-engine's way (without ``check_config``) is held to the keys every env has.
    """
    check_config = getattr(env_cls, "check_config", None)
    if check_config is not None:
        check_config(env_cfg)
    else:
        check_values({key: value for key, value in COMMON_ENV_CONFIG.items() if key != "manager"}, env_cfg, "env")
    manager = dict(env_cfg["manager"])
    manager_cls: Any = get_env_manager_cls(manager)
    settings = {key: value for key, value in manager.items() if key not in ("type", "import_names", "cfg_type")}
    manager_cls.check_settings(settings)


def check_policy_section(policy_type: str, user: Mapping[str, Any], body: Mapping[str, Any]) -> None:
    """Hold a merged ``policy`` section (``body``, merged from the user's section ``user``) to what the registered
    policy declares, and to its rules between keys.

    A registered class that is not a ding policy (it has no ``declared_for``) is held to the keys every policy
    section has.
    """
    policy_cls: Any = POLICY_REGISTRY.get(policy_type)
    declared_for = getattr(policy_cls, "declared_for", None)
    if declared_for is None:
        check_values(COMMON_CONFIG, body, "policy")
        return
    check_values(declared_for(user), body, "policy")
    policy_cls.check_config(EasyDict(body))
