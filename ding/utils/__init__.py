"""Small utilities shared across ding, under the names DI-engine's env files and entry scripts import.

The registries live with what they register (``ding.envs``, ``ding.policy``) and are imported from
there on first access, since those packages import this one:

>>> from ding.utils import ENV_REGISTRY
>>> ENV_REGISTRY is __import__('ding.envs.env_registry', fromlist=['ENV_REGISTRY']).ENV_REGISTRY
True
"""

from __future__ import annotations

import importlib
from typing import Any

from ding.utils.default_helper import deep_merge_dicts, deep_update, flatten_dict, import_module, set_pkg_seed
from ding.utils.registry import Registry

_REGISTRIES: dict[str, tuple[str, str]] = {
    "ENV_REGISTRY": ("ding.envs.env_registry", "ENV_REGISTRY"),
    "ENV_WRAPPER_REGISTRY": ("ding.envs.env_wrappers", "WRAPPER_REGISTRY"),
    "ENV_MANAGER_REGISTRY": ("ding.envs.env_manager.factory", "ENV_MANAGER_REGISTRY"),
    "POLICY_REGISTRY": ("ding.config.policy_registry", "POLICY_REGISTRY"),
}
"""DI-engine's registry names → (module, attribute) of ding's registry."""


def __getattr__(name: str) -> Any:
    if name in _REGISTRIES:
        module, attribute = _REGISTRIES[name]
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module 'ding.utils' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_REGISTRIES])


__all__ = [
    "ENV_MANAGER_REGISTRY",
    "ENV_REGISTRY",
    "ENV_WRAPPER_REGISTRY",
    "POLICY_REGISTRY",
    "Registry",
    "deep_merge_dicts",
    "deep_update",
    "flatten_dict",
    "import_module",
    "set_pkg_seed",
]
