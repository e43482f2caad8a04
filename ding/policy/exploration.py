"""Exploration schedules: epsilon for epsilon-greedy action selection as a function of env steps."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ding.errors import ConfigError

EPS_TYPES = ("exp", "linear")


def epsilon_greedy(start: float, end: float, decay: int | float, type_: str = "exp") -> Callable[[int], float]:
    """The epsilon schedule DI-engine configs declare in ``policy.other.eps``, as a function of env steps.

    - ``exp``: ``end + (start - end) * exp(-step / decay)``;
    - ``linear``: from ``start`` to ``end`` over ``decay`` steps, then ``end``.

    Example:
        >>> eps = epsilon_greedy(0.95, 0.1, 10000, 'exp')
        >>> round(eps(0), 4), round(eps(10000), 4), round(eps(10**7), 4)
        (0.95, 0.4127, 0.1)
        >>> eps = epsilon_greedy(1.0, 0.05, 100, 'linear')
        >>> eps(0), eps(50), eps(100), eps(1000)
        (1.0, 0.525, 0.05, 0.05)
    """
    if type_ not in EPS_TYPES:
        raise ConfigError(f"policy.other.eps.type must be one of {', '.join(EPS_TYPES)}, got {type_!r}")
    for name, value in (("start", start), ("end", end)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            raise ConfigError(f"policy.other.eps.{name} must be a number in [0, 1], got {value!r}")
    if isinstance(decay, bool) or not isinstance(decay, (int, float)) or decay <= 0:
        raise ConfigError(f"policy.other.eps.decay must be a positive number of env steps, got {decay!r}")
    start, end, decay = float(start), float(end), float(decay)
    if type_ == "exp":
        return lambda step: end + (start - end) * math.exp(-step / decay)
    return lambda step: end if step >= decay else start + (end - start) * step / decay


def epsilon_from_config(eps_cfg: Any) -> Callable[[int], float]:
    """The schedule a ``policy.other.eps`` section (``type``, ``start``, ``end``, ``decay``) describes."""
    if not hasattr(eps_cfg, "get"):
        raise ConfigError(f"policy.other.eps must be a dict of type, start, end, decay; got {eps_cfg!r}")
    return epsilon_greedy(eps_cfg.get("start"), eps_cfg.get("end"), eps_cfg.get("decay"), eps_cfg.get("type", "exp"))
