"""``POLICY_REGISTRY``: how configs name policy classes (``create_config.policy.type``)."""

from __future__ import annotations

from typing import Any

from ding.utils.registry import Registry


def _check_policy_class(name: str, cls: Any) -> None:
    if not isinstance(cls, type) or not callable(getattr(cls, "default_config", None)):
        raise TypeError(f"policy {name!r} must be a class with a default_config() classmethod, got {cls!r}")


POLICY_REGISTRY: Registry[type] = Registry("policy", validator=_check_policy_class)
"""Policy classes by name.

Register a class with ``@POLICY_REGISTRY.register('dqn')``; it needs a ``default_config()``
classmethod returning its full default config as a dict. ``compile_config`` merges the user's
``policy`` section into that dict strictly, so a misspelt key is an error.
"""
