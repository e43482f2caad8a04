"""Policies; configs name them through :data:`~ding.config.policy_registry.POLICY_REGISTRY`, which lives with the
configs so that the compiler finds every policy without importing this package."""

from ding.config.policy_registry import POLICY_REGISTRY

__all__ = ["POLICY_REGISTRY"]
