"""What each config value accepts, declared next to its default.

A component's ``config`` class attribute maps keys to defaults. A plain default says what its key accepts by its
type: a bool default accepts bools, an int default ints, a float default finite numbers, a str default strs, a list
default lists, a dict default a section of its own keys (an empty dict: any keys); a None default accepts anything.
A declaration says more and keeps the default:

    "batch_size": count(64),                           # an int >= 1, default 64
    "learning_rate": positive(1e-3),                   # a finite number > 0
    "discount_factor": fraction(0.99),                 # a number in (0, 1]
    "end": unit(0.1),                                  # a number in [0, 1]
    "type": one_of("exp", "linear", default="exp"),
    "target_theta": optional(unit()),                  # a number in [0, 1], or None (the default)

The rules are annotations of :mod:`ding.utils.value_rules`, the vocabulary wrapper arguments use too, so a count, a
rate or a probability means the same thing for a wrapper's argument and a config key. An int key takes ints
only: ``1e4`` is a float, as it is to Python and to DI-engine (whose buffers and loops fail on it); write ``10000``
or ``int(1e4)``.

:func:`plain_defaults` gives the plain values (what ``default_config()`` returns), :func:`check_values` holds a
config to the declarations and raises one :class:`~ding.errors.ConfigError` naming the key path, the value and what
is accepted, and :func:`redeclare` changes defaults of a declared config while keeping what the keys accept.

Example:
    >>> config = {'learn': {'batch_size': count(64), 'learning_rate': positive(1e-3), 'ignore_done': False}}
    >>> plain_defaults(config)
    {'learn': {'batch_size': 64, 'learning_rate': 0.001, 'ignore_done': False}}
    >>> check_values(config, {'learn': {'batch_size': 32, 'learning_rate': -1, 'ignore_done': False}}, 'policy')
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: policy.learn.learning_rate must be a finite number > 0, got -1
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, Optional

from ding.errors import ConfigError, ConfigTypeError
from ding.utils.merge import join_path
from ding.utils.value_rules import (
    AtLeast,
    Check,
    Finite,
    InRange,
    NonNegativeFloat,
    PositiveFloat,
    PositiveInt,
    UnitFloat,
    base_of,
    conforms,
    describe,
)

__all__ = [
    "Accepts",
    "anything",
    "check_value",
    "check_values",
    "count",
    "fixed",
    "fraction",
    "non_negative",
    "number",
    "one_of",
    "optional",
    "plain_defaults",
    "positive",
    "redeclare",
    "satisfying",
    "sizes",
    "typed",
    "unit",
]


class _Unset:
    def __repr__(self) -> str:
        return "<no default>"


UNSET: Any = _Unset()
"""The default of a declaration written without one (``count()``), for :func:`optional` to wrap."""

FiniteFloat = Annotated[float, Finite()]
"""A finite real number (what a float default accepts)."""


@dataclasses.dataclass(frozen=True)
class Accepts:
    """A config default and what its key accepts (an annotation of :mod:`ding.utils.value_rules`).

    ``note`` is said after what is accepted (why, or what a value means). The default must be accepted itself.
    """

    default: Any
    annotation: Any
    note: str = ""

    def __post_init__(self) -> None:
        if self.default is not UNSET and not conforms(self.annotation, self.default):
            raise TypeError(f"a declared default must be accepted by its own rule: {self.default!r} is not {self}")

    def __str__(self) -> str:
        return describe(self.annotation) + (f" ({self.note})" if self.note else "")

    def check(self, value: Any, path: str) -> None:
        """Raise :class:`~ding.errors.ConfigError` naming ``path`` unless ``value`` is accepted: a
        :class:`~ding.errors.ConfigTypeError` (also a ``TypeError``) when not even its type is."""
        if not conforms(self.annotation, value):
            error = ConfigError if conforms(base_of(self.annotation), value) else ConfigTypeError
            raise error(f"{path} must be {self}, got {value!r}")


def _declared(annotation: Any, default: Any, note: str = "") -> Accepts:
    return Accepts(default, annotation, note)


def count(default: Any = UNSET, *, low: int = 1, high: int | None = None, note: str = "") -> Accepts:
    """An int ``>= low`` (1 unless given), and ``<= high`` when given.

    >>> str(count(64)), str(count(0, low=0)), str(count(8, high=1024))
    ('a positive int', 'an int >= 0', 'an int in [1, 1024]')
    """
    if high is not None:
        return _declared(Annotated[int, InRange(low, high)], default, note)
    return _declared(PositiveInt if low == 1 else Annotated[int, AtLeast(low)], default, note)


def positive(default: Any = UNSET, *, note: str = "") -> Accepts:
    """A finite number ``> 0`` (a rate, a weight that must act, a number of seconds)."""
    return _declared(PositiveFloat, default, note)


def non_negative(default: Any = UNSET, *, note: str = "") -> Accepts:
    """A finite number ``>= 0``."""
    return _declared(NonNegativeFloat, default, note)


def unit(default: Any = UNSET, *, note: str = "") -> Accepts:
    """A number in ``[0, 1]`` (a probability, a fraction)."""
    return _declared(UnitFloat, default, note)


FractionFloat = Annotated[float, Check("a number in (0, 1]", lambda v: 0.0 < v <= 1.0)]


def fraction(default: Any = UNSET, *, note: str = "") -> Accepts:
    """A number in ``(0, 1]``: a discount factor, the share of a soft target update."""
    return _declared(FractionFloat, default, note)


def number(default: Any = UNSET, *, low: float | None = None, high: float | None = None, note: str = "") -> Accepts:
    """A finite number (for a real quantity whose default happens to be written as an int, such as ``v_min=-10``), in
    ``[low, high]`` when both are given.

    >>> str(number(-10)), str(number(0.0, low=-20, high=20))
    ('a finite number', 'a number in [-20, 20]')
    """
    if low is not None and high is not None:
        return _declared(Annotated[float, InRange(low, high)], default, note)
    return _declared(FiniteFloat, default, note)


def one_of(*choices: Any, default: Any = UNSET, note: str = "") -> Accepts:
    """One of the given strs; None too when it is one of the choices.

    >>> str(one_of('clip_norm', 'clip_value', None, default='clip_norm'))
    "one of 'clip_norm', 'clip_value' or None"
    """
    names = tuple(choice for choice in choices if choice is not None)
    annotation: Any = Literal[names]
    return _declared(Optional[annotation] if None in choices else annotation, default, note)  # noqa: UP045


def optional(rule: Accepts | Any, *, note: str = "") -> Accepts:
    """What ``rule`` accepts, or None; the default is the rule's, or None when it has none.

    ``rule`` is a declaration (``optional(count())``, ``optional(unit(0.5))``) or a type (``optional(str)``).

    >>> str(optional(count())), optional(count()).default, optional(str).default
    ('a positive int or None', None, None)
    """
    if isinstance(rule, Accepts):
        default = None if rule.default is UNSET else rule.default
        return _declared(Optional[rule.annotation], default, note or rule.note)  # noqa: UP045
    return _declared(Optional[rule], None, note)  # noqa: UP045


def fixed(value: Any, *, note: str) -> Accepts:
    """Only ``value`` itself (a DI-engine key whose other values this component does not have); ``note`` says why."""
    return _declared(Annotated[Any, Check(repr(value), lambda v: type(v) is type(value) and v == value)], value, note)


def sizes(default: Any = UNSET, *, note: str = "") -> Accepts:
    """A non-empty list of positive ints (layer widths)."""
    annotation = Annotated[Sequence[PositiveInt], Check("a non-empty list of positive ints", lambda v: len(v) > 0)]
    return _declared(annotation, default, note)


def satisfying(text: str, test: Callable[[Any], bool], *, default: Any = UNSET, note: str = "") -> Accepts:
    """A rule the helpers above do not state: ``test`` decides, ``text`` says what passes (``'a (min, max) pair'``)."""
    return _declared(Annotated[Any, Check(text, test)], default, note)


def typed(default: Any, *, note: str = "") -> Accepts:
    """What a plain ``default`` accepts (its type), also where a base class's declaration of the key accepts more.

    >>> str(redeclare({'env_id': optional(str)}, {'env_id': typed('CartPole-v1')})['env_id'])
    'a str'
    """
    rule = rule_of(default)
    if rule is None:
        raise TypeError(f"typed() needs a bool, int, float, str or list default, got {default!r}")
    return _declared(rule.annotation, default, note)


def anything(default: Any, *, note: str) -> Accepts:
    """Any value: what ``note`` names checks it (a wrapper chain, the env's spaces, ...)."""
    return _declared(Any, default, note)


# ----- reading declared configs -------------------------------------------------------------------------------------
def plain_defaults(declared: Mapping[str, Any]) -> dict[str, Any]:
    """The plain default values of a declared config (a fresh copy; declarations replaced by their defaults).

    >>> plain_defaults({'eps': {'start': unit(0.95)}, 'cuda': False})
    {'eps': {'start': 0.95}, 'cuda': False}
    """
    return {key: _plain(value) for key, value in declared.items()}


def _plain(value: Any) -> Any:
    if isinstance(value, Accepts):
        if value.default is UNSET:
            raise TypeError(f"a declaration in a config needs its default: {value} has none")
        return copy.deepcopy(value.default)
    if isinstance(value, Mapping):
        return plain_defaults(value)
    return copy.deepcopy(value)


def rule_of(default: Any) -> Accepts | None:
    """What a default accepts: itself when it is a declaration, else inferred from a plain value's type (None: any).

    >>> str(rule_of(True)), str(rule_of(3)), str(rule_of(0.5)), rule_of(None)
    ('a bool', 'an int', 'a finite number', None)
    """
    if isinstance(default, Accepts):
        return default
    if default is None or isinstance(default, Mapping):
        return None
    if isinstance(default, bool):
        return Accepts(default, bool)
    if isinstance(default, int):
        return Accepts(default, int)
    if isinstance(default, float):
        return Accepts(default, FiniteFloat) if math.isfinite(default) else None
    if isinstance(default, str):
        return Accepts(default, str)
    if isinstance(default, (list, tuple)):
        return Accepts(default, Sequence[Any])
    return None


def check_value(declared: Mapping[str, Any], key: str, value: Any, path: str) -> None:
    """Hold one ``value`` for ``declared[key]`` to what that key accepts (``path`` names it in the error).

    >>> check_value({'collector_env_num': count(8)}, 'collector_env_num', -2, 'env.collector_env_num')
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: env.collector_env_num must be a positive int, got -2
    """
    rule = rule_of(declared[key])
    if rule is not None:
        rule.check(value, path)
    elif isinstance(declared[key], Mapping):
        if not isinstance(value, Mapping):
            raise ConfigError(f"{path} must be a dict, got {type(value).__name__} {value!r}")
        check_values(declared[key], value, path)


def check_values(declared: Mapping[str, Any], values: Mapping[str, Any], path: str) -> None:
    """Hold every value of ``values`` whose key ``declared`` has to what that key accepts, section by section.

    Keys ``declared`` does not have are left alone (a strict merge refuses them; a free-form section takes them).
    """
    for key in declared:
        if key in values:
            check_value(declared, key, values[key], join_path(path, key))


def redeclare(declared: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """``declared`` with ``changes`` merged in: a plain value over a declaration changes its default and keeps its
    rule; a declaration replaces the rule; sections merge key by key.

    >>> changed = redeclare({'learn': {'actor_update_freq': count(1)}}, {'learn': {'actor_update_freq': 2}})
    >>> changed['learn']['actor_update_freq']
    Accepts(default=2, annotation=typing.Annotated[int, AtLeast(low=1)], note='')
    """
    merged = dict(declared)
    for key, new in changes.items():
        old = merged.get(key)
        if isinstance(old, Mapping) and isinstance(new, Mapping):
            merged[key] = redeclare(old, new)
        elif isinstance(old, Accepts) and not isinstance(new, Accepts):
            merged[key] = dataclasses.replace(old, default=new)
        else:
            merged[key] = new
    return merged
