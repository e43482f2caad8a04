"""``read_config``: load a Python config file's ``main_config`` and ``create_config``.

DI-engine's ``read_config_directly`` and ``read_config_with_system`` are :mod:`ding.config.di_engine.files`.
"""

from __future__ import annotations

import copy
import os
import pathlib
import sys
import traceback
import types
import uuid
from collections.abc import Mapping
from typing import Any

from easydict import EasyDict

from ding.errors import ConfigError
from ding.utils.user_modules import add_config_folder, make_importable

CONFIG_NAMES = ("main_config", "create_config")


def read_config(path: str | os.PathLike[str]) -> tuple[EasyDict, EasyDict]:
    """Run the Python config file at ``path`` and return copies of its ``main_config`` and ``create_config``.

    The file runs as a fresh module under a unique name that is removed from ``sys.modules``
    afterwards, so reading the same or another config again never sees stale state, and no
    bytecode cache is written next to it. A relative ``path`` is resolved against the current
    directory. The modules the config imports or names in ``import_names`` are also looked for in
    the file's folder, as ``python my_config.py`` finds them (:mod:`ding.utils.user_modules`). A
    missing file, a file that raises while running, or one that lacks either name raises
    :class:`~ding.errors.ConfigError` naming the file.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     file = pathlib.Path(tmp, 'my_config.py')
        ...     _ = file.write_text("main_config = dict(env=dict(stop_value=195))\\ncreate_config = dict()\\n")
        ...     main_config, create_config = read_config(file)
        >>> main_config.env.stop_value, create_config
        (195, {})
    """
    main_config, create_config = read_names(path, CONFIG_NAMES)
    return main_config, create_config


def _resolved(path: str | os.PathLike[str]) -> pathlib.Path:
    return pathlib.Path(os.fspath(path)).expanduser().resolve()


def copied(value: Any) -> Any:
    """A deep copy of a value a config file defined, dicts as ``EasyDict``."""
    return EasyDict(copy.deepcopy(dict(value))) if isinstance(value, Mapping) else copy.deepcopy(value)


def read_names(path: str | os.PathLike[str], names: tuple[str, ...]) -> list[EasyDict]:
    """Copies of the dicts ``names`` the config file at ``path`` defines (run as :func:`read_config` runs it); a
    missing name or one that is not a dict is a :class:`~ding.errors.ConfigError` naming the file."""
    file = _resolved(path)
    namespace = run_config_file(file)
    missing = [name for name in names if name not in namespace]
    if missing:
        raise ConfigError(
            f"config file {file} defines no {' and no '.join(missing)}; a config file must define {' and '.join(names)}"
        )
    loaded = []
    for name in names:
        value = namespace[name]
        if not isinstance(value, Mapping):
            raise ConfigError(f"{name} in config file {file} must be a dict, got {type(value).__name__}")
        loaded.append(copied(value))
    return loaded


def run_config_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Run the config file at ``path`` as a fresh module (see :func:`read_config`) and return its namespace."""
    file = _resolved(path)
    if not file.exists():
        raise ConfigError(f"config file {file} does not exist")
    if not file.is_file():
        raise ConfigError(f"config file {file} is not a file")
    try:
        source = file.read_bytes()
    except OSError as err:
        raise ConfigError(f"cannot read config file {file}: {err.strerror or err}") from err
    add_config_folder(file.parent)
    module_name = f"_ding_config_{uuid.uuid4().hex}"
    try:
        code = compile(source, str(file), "exec", dont_inherit=True)
        module = _exec_config(code, file, module_name)
    except SyntaxError as err:
        raise ConfigError(f"config file {file} has a syntax error at line {err.lineno}: {err.msg}") from err
    except (Exception, SystemExit) as err:
        line = _line_in(file, err)
        where = f" at line {line}" if line is not None else ""
        raise ConfigError(f"config file {file} raised {type(err).__name__}{where} while loading: {err}") from err
    finally:
        sys.modules.pop(module_name, None)
    return module.__dict__


def _exec_config(code: types.CodeType, file: pathlib.Path, module_name: str) -> types.ModuleType:
    """Run the config's code as the module ``module_name``; a module it imports from beside it (which
    ``python my_config.py`` would find) is made importable and the code runs again in a fresh module."""
    retried: set[str] = set()
    while True:
        module = types.ModuleType(module_name)
        module.__file__ = str(file)
        sys.modules[module_name] = module  # for code in the file that looks its module up (dataclasses, pickle)
        try:
            exec(code, module.__dict__)
            return module
        except ModuleNotFoundError as err:
            if err.name is None or err.name in retried or not make_importable(err.name):
                raise
            retried.add(err.name)


def _line_in(file: pathlib.Path, err: BaseException) -> int | None:
    """The line of ``file`` that was running when ``err`` was raised (deepest frame in that file)."""
    line = None
    for frame in traceback.extract_tb(err.__traceback__):
        if frame.filename == str(file):
            line = frame.lineno
    return line
