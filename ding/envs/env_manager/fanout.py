"""Env attributes read through the manager: ``manager.name`` for a name the manager itself lacks.

DI-engine's rule: a plain attribute of the envs gives the list of its values over every env; a
method listed in the manager's ``method_name_list`` gives a function that calls it on every env;
any other env method is a ``RuntimeError`` (list it in ``method_name_list`` to fan it out); a name
the envs lack is an ``AttributeError``. Workers answer :func:`describe_attribute` for their envs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

METHOD_NAME_LIST = (
    "reset",
    "step",
    "seed",
    "close",
    "enable_save_replay",
    "render",
    "reward_shaping",
    "enable_save_figure",
)
"""DI-engine's ``method_name_list``: env methods a manager calls on every env."""

MISSING = ("missing",)
METHOD = ("method",)


def describe_attribute(env: Any, name: str) -> tuple[Any, ...]:
    """``MISSING``, ``METHOD`` or ``("value", value)``: what ``env.name`` is (picklable, for workers).

    >>> describe_attribute(3, 'real'), describe_attribute(3, 'bit_length'), describe_attribute(3, 'nope')
    (('value', 3), ('method',), ('missing',))
    """
    try:
        value = getattr(env, name)
    except AttributeError:
        return MISSING
    return METHOD if callable(value) else ("value", value)


def fan_out_values(
    owner: str, name: str, described: Mapping[int, tuple[Any, ...]], method_names: Sequence[str]
) -> list[Any] | None:
    """The values of attribute ``name`` over every env (env 0 decides what it is), or None for a listed method.

    Raises ``AttributeError`` when env 0 has no such attribute, ``RuntimeError`` for a method not in
    ``method_names``.
    """
    first = described[0]
    if first == MISSING:
        raise AttributeError(f"{owner} has no attribute {name!r}, and its envs have none either")
    if first == METHOD:
        if name not in method_names:
            raise RuntimeError(
                f"{owner}.{name}: {name!r} is an env method, and only the methods in method_name_list "
                f"{list(method_names)} are called on every env; override method_name_list to add it"
            )
        return None
    return [kind[1] if kind[0] == "value" else None for _, kind in sorted(described.items())]
