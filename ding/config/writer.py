"""``save_config``: write a config as a readable Python config file, in ding's or DI-engine's call form.

The file looks like DI-engine's ``total_config.py`` (``main_config = dict(...)``, one key per line
where a line would grow too long) and :func:`ding.config.read_config` loads it back equal.
"""

from __future__ import annotations

import inspect
import keyword
import math
import os
import pathlib
from collections.abc import Mapping
from typing import Any, overload

from ding.config.sections import component_names
from ding.errors import ConfigError

LINE_WIDTH = 120
INDENT = "    "
HEADER = '"""ding config written by ding.config.save_config; load it with ding.config.read_config."""'


@overload
def save_config(
    main_config: Mapping[str, Any], create_config: Mapping[str, Any], path: str | os.PathLike[str]
) -> pathlib.Path: ...


@overload
def save_config(
    config_: Mapping[str, Any], path: str | os.PathLike[str], type_: str = "py", save_formatted: bool = False
) -> pathlib.Path: ...


def save_config(*args: Any, **kwargs: Any) -> pathlib.Path:
    """Write a config as a Python file (creating its directory) and return the path written.

    Two call forms, told apart by the second argument:

    - ding's ``save_config(main_config, create_config, path)`` (a dict second) writes
      ``main_config = ...`` and ``create_config = ...``;
    - DI-engine's ``save_config(config_, path, type_='py', save_formatted=False)`` (a path second)
      writes ``exp_config = ...`` (DI-engine's layout), then ``main_config = exp_config`` and a
      ``create_config`` naming the components ``config_`` records (see
      :func:`~ding.config.sections.component_names`). ``save_formatted`` also writes
      ``formatted_<name>`` next to it, with ``main_config`` and ``create_config`` only (DI-engine's
      formatted config). ``type_`` must be ``'py'``: ding writes no YAML, which would lose tuples.

    Either file loads back equal: :func:`~ding.config.read_config` gives ``(main_config,
    create_config)``, :func:`~ding.config.read_config_directly` every name. Values may be dicts
    with str keys, lists, tuples, str, int, float (``inf`` and ``nan`` included), bool and None;
    anything else would not load back as it was, so it raises ``TypeError`` naming its key path.

    Example:
        >>> import tempfile
        >>> from ding.config.loader import read_config, read_config_directly
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     main_config = {'env': {'episode_num': float('inf')}}
        ...     print(read_config(save_config(main_config, {'env': {'type': 'cartpole'}}, tmp + '/c.py')))
        ...     print(read_config_directly(save_config({'lr': 0.1, 'env': {'type': 'x'}}, tmp + '/d.py'))['exp_config'])
        ({'env': {'episode_num': inf}}, {'env': {'type': 'cartpole'}})
        {'lr': 0.1, 'env': {'type': 'x'}}
    """
    ding_form = "create_config" in kwargs or (len(args) >= 2 and isinstance(args[1], Mapping))
    form = _ding_form if ding_form else _engine_form
    try:
        bound = inspect.signature(form).bind(*args, **kwargs)
    except TypeError as err:
        raise TypeError(
            f"save_config takes (main_config, create_config, path) or (config_, path, type_='py', "
            f"save_formatted=False): {err}"
        ) from None
    return form(*bound.args, **bound.kwargs)


def _ding_form(
    main_config: Mapping[str, Any], create_config: Mapping[str, Any], path: str | os.PathLike[str]
) -> pathlib.Path:
    return _write(config_source(main_config, create_config), path)


def _engine_form(
    config_: Mapping[str, Any], path: str | os.PathLike[str], type_: str = "py", save_formatted: bool = False
) -> pathlib.Path:
    if type_ != "py":
        raise ConfigError(f"save_config type_ must be 'py', got {type_!r}: ding writes configs as Python files only")
    if not isinstance(config_, Mapping):
        raise TypeError(f"config_ must be a dict, got {type(config_).__name__}")
    file = _write(exp_config_source(config_), path)
    if save_formatted:
        _write(config_source(config_, component_names(config_)), file.with_name("formatted_" + file.name))
    return file


def _write(source: str, path: str | os.PathLike[str]) -> pathlib.Path:
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
    return _source([("main_config", main_config), ("create_config", create_config)])


def exp_config_source(config_: Mapping[str, Any]) -> str:
    """The Python source DI-engine's form of :func:`save_config` writes.

    >>> print(exp_config_source({'seed': 0, 'env': {'type': 'cartpole'}}))
    \"\"\"ding config written by ding.config.save_config; load it with ding.config.read_config.\"\"\"
    <BLANKLINE>
    exp_config = dict(seed=0, env=dict(type='cartpole'))
    main_config = exp_config
    create_config = dict(env=dict(type='cartpole', import_names=[]))
    <BLANKLINE>
    """
    names = component_names(config_) if isinstance(config_, Mapping) else {}
    return _source([("exp_config", config_)], "main_config = exp_config", ("create_config", names))


def _source(assignments: list[tuple[str, Any]], *more: str | tuple[str, Any]) -> str:
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
