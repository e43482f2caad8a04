"""Policies and the registry that configs name them by."""

from ding.policy.registry import POLICY_REGISTRY

__all__ = ["POLICY_REGISTRY"]
