"""``save_config``: write a config as a readable Python config file (ding's call form; DI-engine's is
:func:`ding.config.di_engine.files.save_config`).

The file looks like DI-engine's ``total_config.py`` (``main_config = dict(...)``, one key per line
where a line would grow too long) and :func:`ding.config.read_config` loads it back equal.
"""

from __future__ import annotations

import keyword
import math
import os
import pathlib
from collections.abc import Mapping
from typing import Any

LINE_WIDTH = 120
INDENT = "    "
HEADER = '"""ding config written by ding.config.save_config; load it with ding.config.read_config."""'


def save_config(
    main_config: Mapping[str, Any], create_config: Mapping[str, Any], path: str | os.PathLike[str]
) -> pathlib.Path:
    """Write ``main_config = ...`` and ``create_config = ...`` as a Python file (creating its directory); return
    the path written. :func:`~ding.config.read_config` loads it back equal.

    Values may be dicts with str keys, lists, tuples, str, int, float (``inf`` and ``nan`` included), bool and None;
    anything else would not load back as it was, so it raises ``TypeError`` naming its key path.

    Example:
        >>> import tempfile
        >>> from ding.config.loader import read_config
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     main_config = {'env': {'episode_num': float('inf')}}
        ...     print(read_config(save_config(main_config, {'env': {'type': 'cartpole'}}, tmp + '/c.py')))
        ({'env': {'episode_num': inf}}, {'env': {'type': 'cartpole'}})
    """
    return write_source(config_source(main_config, create_config), path)


def write_source(source: str, path: str | os.PathLike[str]) -> pathlib.Path:
    """Write a config file's ``source`` to ``path`` (creating its directory); return the path written."""
    file = pathlib.Path(os.fspath(path))
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(source, encoding="utf-8")
    return file


def config_source(main_config: Mapping[str, Any], create_config: Mapping[str, Any]) -> str:
    """The Python source ding's form of :func:`save_config` writes.

    >>> print(config_source({'seed': 0, 'env': {'shape': (4,)}}, {}))
    \"\"\"ding config written by ding.config.save_config; load it with ding.config.read_config.\"\"\"
    <BLANKLINE>
    main_config = dict(seed=0, env=dict(shape=(4,)))
    create_config = {}
    <BLANKLINE>
    """
    return python_source([("main_config", main_config), ("create_config", create_config)])


def python_source(assignments: list[tuple[str, Any]], *more: str | tuple[str, Any]) -> str:
    """A config file: the header, then ``name = <value>`` for each assignment and each line of ``more``."""
    parts = [HEADER, ""]
    for item in [*assignments, *more]:
        if isinstance(item, str):
            parts.append(item)
            continue
        name, value = item
        if not isinstance(value, Mapping):
            raise TypeError(f"{name} must be a dict, got {type(value).__name__}")
        head = f"{name} = "
        parts.append(head + format_value(dict(value), name, level=0, used=len(head)))
    return "\n".join(parts) + "\n"


def format_value(value: Any, path: str, level: int = 0, used: int = 0) -> str:
    """A Python expression that evaluates to ``value``, wrapped over lines when it does not fit.

    ``path`` names ``value`` in errors; ``level`` is its indentation depth and ``used`` the
    characters already on its first line.

    >>> format_value({'a': [1, 2.5, float('-inf')], 'b-c': None}, 'cfg')
    "{'a': [1, 2.5, -float('inf')], 'b-c': None}"
    """
    inline = _inline(value, path, set())
    if used + len(inline) <= LINE_WIDTH or not _is_container(value) or not value:
        return inline
    pad = INDENT * (level + 1)
    lines = []
    for head, item, item_path in _items(value, path):
        line_head = pad + head
        lines.append(line_head + format_value(item, item_path, level + 1, len(line_head)) + ",")
    opening, closing = _brackets(value)
    return "\n".join([opening, *lines, INDENT * level + closing])


def _is_container(value: Any) -> bool:
    return isinstance(value, dict) or type(value) in (list, tuple)


def _keyword_style(value: dict[Any, Any]) -> bool:
    """Whether ``dict(key=...)`` can spell this dict (every key an identifier that is not a keyword)."""
    return bool(value) and all(
        isinstance(key, str) and key.isidentifier() and not keyword.iskeyword(key) for key in value
    )


def _brackets(value: Any) -> tuple[str, str]:
    if isinstance(value, dict):
        return ("dict(", ")") if _keyword_style(value) else ("{", "}")
    return ("[", "]") if type(value) is list else ("(", ")")


def _items(value: Any, path: str) -> list[tuple[str, Any, str]]:
    """``(head, item, item_path)`` for each element: ``key=`` or ``'key': `` heads for dicts, none for sequences."""
    if isinstance(value, dict):
        keyword_style = _keyword_style(value)
        return [(f"{key}=" if keyword_style else f"{key!r}: ", item, f"{path}.{key}") for key, item in value.items()]
    return [("", item, f"{path}[{index}]") for index, item in enumerate(value)]


def _inline(value: Any, path: str, open_ids: set[int]) -> str:
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return repr(value)
    if kind is float:
        return _float_literal(value)
    if not _is_container(value):
        raise TypeError(
            f"cannot write config value at {path}: {kind.__name__} {_short_repr(value)} would not load back as it "
            "is; use dict (str keys), list, tuple, str, int, float, bool or None"
        )
    if id(value) in open_ids:
        raise TypeError(f"cannot write config value at {path}: it contains itself")
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise TypeError(f"cannot write config value at {path}: key {key!r} is not a str")
    inner = open_ids | {id(value)}
    parts = [head + _inline(item, item_path, inner) for head, item, item_path in _items(value, path)]
    if type(value) is tuple and len(parts) == 1:
        return f"({parts[0]},)"
    opening, closing = _brackets(value)
    return opening + ", ".join(parts) + closing


def _float_literal(value: float) -> str:
    if math.isnan(value):
        return "float('nan')"
    if math.isinf(value):
        return "float('inf')" if value > 0 else "-float('inf')"
    return repr(value)


def _short_repr(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
