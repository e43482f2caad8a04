"""What a value accepts, stated as an annotation: the vocabulary of wrapper arguments and config declarations.

Annotations understood here: ``bool`` (a real bool, not 1 or ``"no"``), ``int`` (not a bool, nor a float such as
``1e4``), ``float`` (any real number), ``str``, ``Literal[...]`` choices, ``tuple[float, float]`` pairs,
``Sequence[X]``, ``X | None`` and ``Annotated[X, constraint]`` with the constraints below. Any other annotation
(``Any``, array-likes) accepts every value. :func:`describe` says in words what an annotation accepts, and
:func:`conforms` whether a value is accepted.

Example:
    >>> describe(PositiveFloat), conforms(PositiveFloat, 3e-4), conforms(PositiveFloat, float('nan'))
    ('a finite number > 0', True, False)
    >>> describe(PositiveInt | None), conforms(PositiveInt, 1e4)
    ('a positive int or None', False)
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import types
import typing
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, Protocol, Union

import numpy as np

FAIL: Any = object()
"""What :func:`convert` returns for a value that does not fit."""


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
        if not args or args[0] is Any:
            return "a list"
        return f"a list of {describe(args[0]).removeprefix('a ').removeprefix('an ')}s"
    names = {bool: "a bool", int: "an int", float: "a number", str: "a str"}
    return names.get(annotation, repr(annotation))


def convert(annotation: Any, value: Any) -> Any:
    """``value`` in its plain Python form if it fits ``annotation``, else :data:`FAIL`."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        converted = convert(args[0], value)
        if converted is FAIL or not all(c.holds(converted) for c in args[1:]):
            return FAIL
        return converted
    if origin in (Union, types.UnionType):
        if value is None:
            return None if type(None) in args else FAIL
        for option in args:
            if option is not type(None):
                converted = convert(option, value)
                if converted is not FAIL:
                    return converted
        return FAIL
    if origin is Literal:
        return value if isinstance(value, str) and value in args else FAIL
    if origin is tuple:
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence | np.ndarray) or len(value) != len(args):
            return FAIL
        items = [convert(a, v) for a, v in zip(args, value, strict=True)]
        return FAIL if any(i is FAIL for i in items) else tuple(items)
    if origin in (Sequence, list):
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence | np.ndarray):
            return FAIL
        items = [convert(args[0], v) for v in value] if args else list(value)
        return FAIL if any(i is FAIL for i in items) else list(items)
    if annotation is bool:
        return bool(value) if isinstance(value, (bool, np.bool_)) else FAIL
    if annotation is int:
        return int(value) if _is_int(value) else FAIL
    if annotation is float:
        return _as_float(value) if _is_number(value) else FAIL
    if annotation is str:
        return value if isinstance(value, str) else FAIL
    return value  # not a form this module checks: the rule checks it


def base_of(annotation: Any) -> Any:
    """``annotation`` without its constraints: the types it accepts (a ``Literal``'s are strs).

    >>> base_of(PositiveInt | None), base_of(Literal['exp', 'linear'])
    (int | None, <class 'str'>)
    """
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        return base_of(args[0])
    if origin is Literal:
        return str
    if origin in (Union, types.UnionType):
        return functools.reduce(operator.or_, [base_of(arg) for arg in args])
    if origin in (Sequence, list) and args:
        return Sequence[base_of(args[0])]  # type: ignore[misc]
    if origin is tuple:
        return tuple[tuple(base_of(arg) for arg in args)]  # type: ignore[misc]
    return annotation


def _as_float(value: Any) -> Any:
    try:
        return float(value)
    except OverflowError:  # an int beyond float's range
        return FAIL


def conforms(annotation: Any, value: Any) -> bool:
    """Whether ``value`` is accepted by ``annotation``.

    >>> conforms(PositiveInt, 3), conforms(PositiveInt, 3.0), conforms(UnitFloat, 10**400)
    (True, False, False)
    """
    return convert(annotation, value) is not FAIL
