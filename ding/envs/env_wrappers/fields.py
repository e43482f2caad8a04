"""Nested field paths (``"a.b.c"``) into Dict observations and spaces, as ALF's wrappers take them.

``fields=None`` means the whole observation. A path step indexes a Dict (by key) or a Tuple
(by a decimal index). Both spaces and plain observations (dicts, tuples) are supported.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

from gymnasium import spaces

from ding.envs.env_wrappers.arguments import Check
from ding.errors import FieldPathError


def distinct_paths(fields: Sequence[str] | None) -> bool:
    """True when no path is given twice or lies inside another (``"a"`` and ``"a.b"``), which would apply a wrapper
    twice to the same values.

    >>> distinct_paths(['image', 'state.pos']), distinct_paths(['image', 'image']), distinct_paths(['s', 's.pos'])
    (True, False, False)
    """
    if fields is None:
        return True
    paths = [tuple(path.split(".")) for path in fields]
    return not any(a[: len(b)] == b for i, a in enumerate(paths) for j, b in enumerate(paths) if i != j)


#: The ``fields`` argument of observation wrappers: None (the whole observation) or "a.b.c" paths.
Fields = Annotated[
    Sequence[str] | None,
    Check("a list of 'a.b.c' paths, none repeated or inside another, or None", distinct_paths),
]


def map_fields(tree: Any, fields: Fields, fn: Callable[[Any], Any]) -> Any:
    """Return ``tree`` with ``fn`` applied at every path in ``fields`` (or to ``tree`` itself if None).

    >>> map_fields({'a': {'b': 1}, 'c': 2}, ['a.b'], lambda x: x + 10)
    {'a': {'b': 11}, 'c': 2}
    """
    if fields is None:
        return fn(tree)
    if isinstance(fields, str):
        raise TypeError(f"fields must be a list of 'a.b.c' paths or None, got the string {fields!r}")
    for path in fields:
        tree = _map_path(tree, path.split("."), 0, fn, path)
    return tree


def get_field(tree: Any, path: str) -> Any:
    """Return the node at ``path`` ("a.b.c")."""
    node = tree
    for i, key in enumerate(path.split(".")):
        node = _child(node, key, path, i)
    return node


def _child(node: Any, key: str, path: str, depth: int) -> Any:
    if isinstance(node, (spaces.Dict, spaces.Tuple)):
        node = node.spaces
    if isinstance(node, Mapping):
        if key not in node:
            raise FieldPathError(
                f"field path {path!r}: no key {key!r} at depth {depth}; available: {', '.join(map(str, node))}"
            )
        return node[key]
    if isinstance(node, (tuple, list)) and key.isdigit():
        if int(key) >= len(node):
            raise FieldPathError(f"field path {path!r}: index {key} out of range for a tuple of {len(node)}")
        return node[int(key)]
    raise FieldPathError(f"field path {path!r}: cannot index {type(node).__name__} with {key!r} at depth {depth}")


def _map_path(node: Any, keys: list[str], depth: int, fn: Callable[[Any], Any], path: str) -> Any:
    if depth == len(keys):
        return fn(node)
    key = keys[depth]
    child = _map_path(_child(node, key, path, depth), keys, depth + 1, fn, path)
    if isinstance(node, spaces.Dict):
        return spaces.Dict({**node.spaces, key: child})
    if isinstance(node, spaces.Tuple):
        items = list(node.spaces)
        items[int(key)] = child
        return spaces.Tuple(items)
    if isinstance(node, Mapping):
        out = dict(node)
        out[key] = child
        return out
    items = list(node)
    items[int(key)] = child
    return tuple(items) if isinstance(node, tuple) else items
