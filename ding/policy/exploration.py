"""Exploration schedules: epsilon for epsilon-greedy action selection as a function of env steps."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from ding.utils.accepts import check_values, one_of, positive, redeclare, unit

EPS_TYPES = ("exp", "linear")

EPS_CONFIG: dict[str, Any] = {
    "type": one_of(*EPS_TYPES, default="exp"),
    "start": unit(0.95),
    "end": unit(0.1),
    "decay": positive(10000, note="env steps"),
}
"""``policy.other.eps``: the schedule's kind, its first and last epsilon and its length in env steps."""


def eps_section(start: float, end: float, decay: int | float, type_: str = "exp") -> dict[str, Any]:
    """The ``other.eps`` section of a policy's config, with these defaults."""
    return redeclare(EPS_CONFIG, {"type": type_, "start": start, "end": end, "decay": decay})


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
    check_values(EPS_CONFIG, {"type": type_, "start": start, "end": end, "decay": decay}, "policy.other.eps")
    start, end, decay = float(start), float(end), float(decay)
    if type_ == "exp":
        return lambda step: end + (start - end) * math.exp(-step / decay)
    return lambda step: end if step >= decay else start + (end - start) * step / decay


def epsilon_from_config(eps_cfg: Mapping[str, Any]) -> Callable[[int], float]:
    """The schedule a ``policy.other.eps`` section (``type``, ``start``, ``end``, ``decay``) describes."""
    return epsilon_greedy(eps_cfg["start"], eps_cfg["end"], eps_cfg["decay"], eps_cfg.get("type", "exp"))
