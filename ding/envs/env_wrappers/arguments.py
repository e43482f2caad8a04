"""A wrapper's keyword arguments, declared once: the keyword parameters of its space rule.

Each parameter's annotation says what the argument accepts and its default what it is when not
given. :func:`rule_parameters` reads them, :func:`check_argument` holds a value to its annotation.
Annotations are those of :mod:`ding.utils.value_rules` (``bool``, ``int``, ``float``, ``str``, ``Literal[...]``,
pairs, ``Sequence[X]``, ``X | None``, ``Annotated[X, constraint]``), which config declarations use too; any other
annotation (``Any``, array-likes) is left to the rule itself to check.

Example:
    >>> check_argument('frame_stack', 'n_frames', 3, PositiveInt)
    3
    >>> check_argument('frame_flip', 'horizontal', 'no', bool)
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: frame_flip: horizontal must be a bool; got 'no'
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable
from typing import Any, Literal

from ding.errors import ConfigError
from ding.utils.value_rules import (
    FAIL,
    AtLeast,
    Check,
    Constraint,
    Finite,
    InRange,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    UnitFloat,
    convert,
    describe,
)

__all__ = [
    "AtLeast",
    "ChannelOrder",
    "Check",
    "Constraint",
    "Finite",
    "InRange",
    "NonNegativeFloat",
    "NonNegativeInt",
    "PositiveFloat",
    "PositiveInt",
    "RuleParameter",
    "UnitFloat",
    "check_argument",
    "describe",
    "rule_parameters",
]

ChannelOrder = Literal["auto", "hwc", "chw"]


def check_argument(who: str, name: str, value: Any, annotation: Any) -> Any:
    """``value`` checked against ``annotation`` (and converted: NumPy scalars to Python, ints to float where a float
    is declared), or a :class:`~ding.errors.ConfigError` naming ``who``, the argument, what it accepts and the value."""
    converted = convert(annotation, value)
    if converted is FAIL:
        raise ConfigError(f"{who}: {name} must be {describe(annotation)}; got {value!r}")
    return converted


@dataclasses.dataclass(frozen=True)
class RuleParameter:
    """One keyword argument of a wrapper, as its space rule declares it."""

    name: str
    annotation: Any
    default: Any = inspect.Parameter.empty

    @property
    def required(self) -> bool:
        return self.default is inspect.Parameter.empty


def rule_parameters(rule: Callable[..., Any], owner: str) -> dict[str, RuleParameter]:
    """The keyword arguments a space rule declares: every parameter after the three spaces, keyword-only.

    ``owner`` names the class in errors. Annotations are resolved in the rule's module.
    """
    params = list(inspect.signature(rule).parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) != 3 or any(p.kind != p.KEYWORD_ONLY for p in params[3:]):
        raise TypeError(
            f"{owner}.space_rule must take (obs_space, act_space, rew_space, *, <keyword arguments>); "
            f"got {inspect.signature(rule)}"
        )
    try:
        hints = typing.get_type_hints(rule, include_extras=True)
    except NameError as err:
        raise TypeError(
            f"{owner}.space_rule's annotations must name things its module defines at run time: {err}"
        ) from err
    return {p.name: RuleParameter(p.name, hints.get(p.name, Any), p.default) for p in params[3:]}
