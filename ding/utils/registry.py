"""Name → object registries that configs use to refer to components, with aliases for other spellings."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar, cast

from ding.errors import UnknownNameError, did_you_mean, unknown_name_message
from ding.utils.user_modules import import_config_module

T = TypeVar("T")


class Registry(Generic[T]):
    """A mapping from names to registered objects with strict lookups.

    An alias is another name for a registered name (DI-engine's class names for wrappers, say):
    :meth:`get` accepts both, :meth:`canonical` turns either into the registered name, and
    iteration yields registered names only.

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
        >>> reg.add_alias('Alpha', 'a')
        >>> reg.canonical('Alpha'), reg.get('Alpha') is A
        ('a', True)
    """

    def __init__(
        self, kind: str, validator: Callable[[str, T], None] | None = None, alias_kind: str = "aliases"
    ) -> None:
        self.kind = kind
        self.alias_kind = alias_kind
        self._items: dict[str, T] = {}
        self._aliases: dict[str, str] = {}
        self._validator = validator

    def register(self, name: str, *, force: bool = False) -> Callable[[T], T]:
        """Decorator registering an object under ``name``; a second use of a name is an error."""

        def decorate(obj: T) -> T:
            if name in self._aliases:
                raise ValueError(f"{self.kind} name {name!r} is already an alias of {self._aliases[name]!r}")
            if name in self._items and not force and not _same_definition(self._items[name], obj):
                raise ValueError(f"{self.kind} {name!r} is already registered as {self._items[name]!r}")
            if self._validator is not None:
                self._validator(name, obj)
            self._items[name] = obj
            return obj

        return decorate

    def add_alias(self, alias: str, name: str) -> None:
        """Let ``alias`` stand for the registered ``name``; giving the same alias again is harmless.

        An alias may not shadow a registered name or stand for two names (``ValueError``).
        """
        if name not in self._items:
            raise UnknownNameError(self._unknown(name))
        if alias in self._items and alias != name:
            raise ValueError(f"{self.kind} alias {alias!r} would shadow the registered {self.kind} {alias!r}")
        if self._aliases.get(alias, name) != name:
            raise ValueError(f"{self.kind} alias {alias!r} already stands for {self._aliases[alias]!r}, not {name!r}")
        if alias != name:
            self._aliases[alias] = name

    def is_free(self, name: str) -> bool:
        """True when ``name`` is neither registered nor an alias."""
        return name not in self._items and name not in self._aliases

    def canonical(self, name: str) -> str:
        """The registered name that ``name`` (a registered name or an alias) stands for."""
        if isinstance(name, str):
            if name in self._items:
                return name
            if name in self._aliases:
                return self._aliases[name]
        raise UnknownNameError(self._unknown(name))

    def get(self, name: str) -> T:
        """Return the object registered as ``name`` (or as the name it is an alias of).

        Raises :class:`UnknownNameError` listing the registered names and a close match.
        """
        return self._items[self.canonical(name)]

    def build(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call the object registered as ``name`` with the given arguments (DI-engine's ``build``)."""
        return cast(Callable[..., Any], self.get(name))(*args, **kwargs)

    def import_names(self, modules: Iterable[str]) -> None:
        """Import modules so that their registrations run (DI-engine's ``import_names``).

        Each is looked for as :func:`~ding.utils.user_modules.import_config_module` does: on ``sys.path``, then
        beside the config files read and in the current directory.
        """
        for module in modules:
            import_config_module(module)

    def unregister(self, name: str) -> T:
        """Remove and return the object registered as ``name``, with its aliases (for plug-ins and tests)."""
        canonical = self.canonical(name)
        self._aliases = {alias: target for alias, target in self._aliases.items() if target != canonical}
        return self._items.pop(canonical)

    def names(self) -> list[str]:
        return sorted(self._items)

    def aliases(self) -> dict[str, str]:
        """Every alias and the registered name it stands for."""
        return dict(sorted(self._aliases.items()))

    def __contains__(self, name: object) -> bool:
        return name in self._items or name in self._aliases

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def items(self) -> list[tuple[str, T]]:
        return sorted(self._items.items())

    def _unknown(self, name: object) -> str:
        if not self._aliases:
            return unknown_name_message(self.kind, name, self._items)
        known = ", ".join(sorted(self._items))
        hint = f"{self.alias_kind.capitalize()} work too (e.g. {min(self._aliases)!r})."
        match = did_you_mean(str(name), [*self._items, *self._aliases])
        return f"unknown {self.kind} {name!r}; known: {known}. {hint}{match}"


def _same_definition(old: object, new: object) -> bool:
    """True when ``new`` is ``old`` or the same definition loaded again (a module imported twice)."""
    if old is new:
        return True
    return (getattr(old, "__module__", None), getattr(old, "__qualname__", None)) == (
        getattr(new, "__module__", 1),
        getattr(new, "__qualname__", 1),
    )
