"""A wrapper's keyword arguments, declared once: the keyword parameters of its space rule.

Each parameter's annotation says what the argument accepts and its default what it is when not
given. :func:`rule_parameters` reads them, :func:`check_argument` holds a value to its annotation.
Annotations understood here: ``bool`` (a real bool, not 1 or ``"no"``), ``int`` (not a bool),
``float`` (any real number), ``str``, ``Literal[...]`` choices, ``tuple[float, float]`` pairs,
``Sequence[X]``, ``X | None`` and ``Annotated[X, constraint]`` with the constraints below.
Any other annotation (``Any``, array-likes) is left to the rule itself to check.

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
import types
import typing
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, Protocol, Union

import numpy as np

from ding.errors import ConfigError

_FAIL = object()  # what _convert returns for a value that does not fit


class Constraint(Protocol):
    """What an ``Annotated[X, constraint]`` adds to ``X``: a test, and the words for what passes it."""

    def holds(self, value: Any) -> bool:
        """Whether ``value`` (already of type ``X``) meets the constraint."""
        ...

    def describe(self, base: str) -> str:
        """What passes, given ``base``, the description of ``X`` (``"an int"`` → ``"a positive int"``)."""
        ...


@dataclasses.dataclass(frozen=True)
class AtLeast:
    """Constraint for ``Annotated[int | float, AtLeast(low)]``: the value is ``>= low``."""

    low: float

    def holds(self, value: Any) -> bool:
        return bool(value >= self.low)

    def describe(self, base: str) -> str:
        if base == "an int" and self.low == 1:
            return "a positive int"
        return f"{base} >= {self.low:g}"


@dataclasses.dataclass(frozen=True)
class Finite:
    """Constraint for ``Annotated[float, Finite(), ...]``: not infinite (nor NaN)."""

    def holds(self, value: Any) -> bool:
        return bool(np.isfinite(value))

    def describe(self, base: str) -> str:
        return f"a finite {base.removeprefix('a ')}"


@dataclasses.dataclass(frozen=True)
class InRange:
    """Constraint for ``Annotated[float, InRange(low, high)]``: ``low <= value <= high``."""

    low: float
    high: float

    def holds(self, value: Any) -> bool:
        return bool(self.low <= value <= self.high)

    def describe(self, base: str) -> str:
        return f"{base} in [{self.low:g}, {self.high:g}]"


@dataclasses.dataclass(frozen=True)
class Check:
    """A named constraint: ``holds`` decides, ``text`` is what the argument must be."""

    text: str
    test: Callable[[Any], bool]

    def holds(self, value: Any) -> bool:
        return bool(self.test(value))

    def describe(self, base: str) -> str:
        return self.text


PositiveInt = Annotated[int, AtLeast(1)]
NonNegativeInt = Annotated[int, AtLeast(0)]
NonNegativeFloat = Annotated[float, Finite(), AtLeast(0)]
PositiveFloat = Annotated[float, Finite(), Check("a finite number > 0", lambda v: v > 0)]
UnitFloat = Annotated[float, InRange(0.0, 1.0)]
ChannelOrder = Literal["auto", "hwc", "chw"]


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_number(value: Any) -> bool:
    return _is_int(value) or isinstance(value, (float, np.floating))


def describe(annotation: Any) -> str:
    """What a value of ``annotation`` is, in words (``"a positive int or None"``)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        text = describe(args[0])
        for constraint in args[1:]:
            text = constraint.describe(text)
        return text
    if origin in (Union, types.UnionType):
        parts = [describe(a) for a in args if a is not type(None)]
        return " or ".join(parts) + (" or None" if type(None) in args else "")
    if origin is Literal:
        return "one of " + ", ".join(map(repr, args))
    if origin is tuple:
        return "a (low, high) pair of numbers" if len(args) == 2 else f"a tuple of {len(args)} numbers"
    if origin in (Sequence, list):
        return f"a list of {describe(args[0]).removeprefix('a ').removeprefix('an ')}s" if args else "a list"
    names = {bool: "a bool", int: "an int", float: "a number", str: "a str"}
    return names.get(annotation, repr(annotation))


def _convert(annotation: Any, value: Any) -> Any:
    """``value`` in its plain Python form if it fits ``annotation``, else ``_FAIL``."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        converted = _convert(args[0], value)
        if converted is _FAIL or not all(c.holds(converted) for c in args[1:]):
            return _FAIL
        return converted
    if origin in (Union, types.UnionType):
        if value is None:
            return None if type(None) in args else _FAIL
        for option in args:
            if option is not type(None):
                converted = _convert(option, value)
                if converted is not _FAIL:
                    return converted
        return _FAIL
    if origin is Literal:
        return value if isinstance(value, str) and value in args else _FAIL
    if origin is tuple:
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence | np.ndarray) or len(value) != len(args):
            return _FAIL
        items = [_convert(a, v) for a, v in zip(args, value, strict=True)]
        return _FAIL if any(i is _FAIL for i in items) else tuple(items)
    if origin in (Sequence, list):
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence | np.ndarray):
            return _FAIL
        items = [_convert(args[0], v) for v in value] if args else list(value)
        return _FAIL if any(i is _FAIL for i in items) else list(items)
    if annotation is bool:
        return bool(value) if isinstance(value, (bool, np.bool_)) else _FAIL
    if annotation is int:
        return int(value) if _is_int(value) else _FAIL
    if annotation is float:
        return float(value) if _is_number(value) else _FAIL
    if annotation is str:
        return value if isinstance(value, str) else _FAIL
    return value  # not a form this module checks: the rule checks it


def check_argument(who: str, name: str, value: Any, annotation: Any) -> Any:
    """``value`` checked against ``annotation`` (and converted: NumPy scalars to Python, ints to float where a float
    is declared), or a :class:`~ding.errors.ConfigError` naming ``who``, the argument, what it accepts and the value."""
    converted = _convert(annotation, value)
    if converted is _FAIL:
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
