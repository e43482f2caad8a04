"""Small utilities shared across ding."""

from ding.utils.registry import Registry

__all__ = ["Registry"]
