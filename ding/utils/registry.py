"""Name → class registries that configs use to refer to components."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

from ding.errors import UnknownNameError, unknown_name_message

T = TypeVar("T")


class Registry(Generic[T]):
    """A mapping from names to registered objects with strict lookups.

    Example:
        >>> reg: Registry[type] = Registry('thing')
        >>> @reg.register('a')
        ... class A: ...
        >>> reg.get('a') is A
        True
        >>> reg.get('b')
        Traceback (most recent call last):
        ...
        ding.errors.UnknownNameError: unknown thing 'b'; known: a.
    """

    def __init__(self, kind: str, validator: Callable[[str, T], None] | None = None) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._validator = validator

    def register(self, name: str, *, force: bool = False) -> Callable[[T], T]:
        """Decorator registering an object under ``name``; a second use of a name is an error."""

        def decorate(obj: T) -> T:
            if name in self._items and not force and not _same_definition(self._items[name], obj):
                raise ValueError(f"{self.kind} {name!r} is already registered as {self._items[name]!r}")
            if self._validator is not None:
                self._validator(name, obj)
            self._items[name] = obj
            return obj

        return decorate

    def get(self, name: str) -> T:
        """Return the object registered as ``name`` or raise :class:`UnknownNameError`."""
        try:
            return self._items[name]
        except (KeyError, TypeError):
            raise UnknownNameError(unknown_name_message(self.kind, name, self._items)) from None

    def import_names(self, modules: Iterable[str]) -> None:
        """Import modules so that their registrations run (DI-engine's ``import_names``)."""
        for module in modules:
            importlib.import_module(module)

    def unregister(self, name: str) -> T:
        """Remove and return the object registered as ``name`` (for plug-ins and tests)."""
        try:
            return self._items.pop(name)
        except KeyError:
            raise UnknownNameError(unknown_name_message(self.kind, name, self._items)) from None

    def names(self) -> list[str]:
        return sorted(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def items(self) -> list[tuple[str, T]]:
        return sorted(self._items.items())


def _same_definition(old: object, new: object) -> bool:
    """True when ``new`` is ``old`` or the same definition loaded again (a module imported twice)."""
    if old is new:
        return True
    return (getattr(old, "__module__", None), getattr(old, "__qualname__", None)) == (
        getattr(new, "__module__", 1),
        getattr(new, "__qualname__", 1),
    )
