"""A config's own modules (``import_names``): found where ``python my_config.py`` finds them, and sent to workers.

``python my_config.py`` imports ``my_env`` from beside the config because Python puts the script's folder on
``sys.path``; ``ding -m serial -c my_config.py`` runs from the console script's folder instead. So
:func:`import_config_module` looks on ``sys.path`` first, then in the folders of the config files read in this
process (:func:`add_config_folder`, which :func:`~ding.config.read_config` calls) and in the current directory. A
folder that had to be searched is appended to ``sys.path``, as Python adds a script's folder, so the module's own
imports, later imports and spawned worker processes find it there too.

A module that lies in one of those folders, or in the folder of the running script, is the user's own (not an
installed package, nor ding's own source tree): it is registered with ``cloudpickle.register_pickle_by_value``, and
so are the modules of those folders that it imports. Env constructors that refer to its classes then travel to
worker processes by value, and a worker that cannot import the module (a zmq worker started in another directory or
on another host, a Ray actor) builds the env all the same. What such a module imports from elsewhere must be
importable where the worker runs.
"""

from __future__ import annotations

import importlib
import os
import pathlib
import sys
import sysconfig
import types

import cloudpickle

_CONFIG_FOLDERS: list[pathlib.Path] = []
_DING_SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]
"""The folder that holds the ``ding`` package (a checkout holds ``dizoo`` beside it): ding's own modules."""
_PACKAGE_FOLDERS = ("site-packages", "dist-packages")


def add_config_folder(folder: str | os.PathLike[str]) -> None:
    """Look for config modules in ``folder`` too (after ``sys.path``); the folder of a config file being read."""
    path = pathlib.Path(folder).resolve()
    if path not in _CONFIG_FOLDERS:
        _CONFIG_FOLDERS.append(path)


def user_folders() -> list[pathlib.Path]:
    """Where config modules are looked for after ``sys.path``: the config files' folders, then the current directory.

    >>> pathlib.Path.cwd().resolve() in user_folders()
    True
    """
    found = list(_CONFIG_FOLDERS)
    cwd = pathlib.Path.cwd().resolve()
    if cwd not in found:
        found.append(cwd)
    return found


def import_config_module(name: str) -> types.ModuleType:
    """Import the module ``name`` a config lists in ``import_names``: from ``sys.path``, else from :func:`user_folders`.

    A module that is nowhere raises ``ModuleNotFoundError`` saying where it was looked for and how to make it found;
    a module that is found but fails while importing raises what it raised.

    >>> import_config_module('json').__name__
    'json'
    >>> try:
    ...     import_config_module('no_such_module_here')
    ... except ModuleNotFoundError as err:
    ...     str(err).split(':')[0], 'beside the config file' in str(err)
    ("No module named 'no_such_module_here'", True)
    """
    before = set(sys.modules)
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as err:
        if not _is_missing(err, name):
            raise
        module = _import_from_user_folders(name)
    loaded = [sys.modules.get(key) for key in set(sys.modules) - before]
    _send_by_value(module, [found for found in loaded if isinstance(found, types.ModuleType)])
    return module


def _is_missing(err: ModuleNotFoundError, name: str) -> bool:
    """True when ``err`` says that ``name`` itself (or a package above it) is missing, not a module it imports."""
    return err.name is not None and (name == err.name or name.startswith(err.name + "."))


def _import_from_user_folders(name: str) -> types.ModuleType:
    if make_importable(name):
        return importlib.import_module(name)
    top = name.partition(".")[0]
    folders = ", ".join(str(folder) for folder in user_folders())
    raise ModuleNotFoundError(
        f"No module named {name!r}: looked on sys.path ({os.pathsep.join(sys.path)}), then in the config's folder and "
        f"the current directory ({folders}). Put {top}.py (or the package {top}/) beside the config file or in the "
        "current directory, install it, or add its folder to PYTHONPATH",
        name=name,
    )


def make_importable(name: str) -> bool:
    """Append to ``sys.path`` the first of :func:`user_folders` that holds the module ``name`` (its top package);
    False when none holds it."""
    top = name.partition(".")[0]
    for folder in user_folders():
        if (folder / f"{top}.py").is_file() or (folder / top / "__init__.py").is_file():
            if str(folder) not in sys.path:
                sys.path.append(str(folder))
            importlib.invalidate_caches()
            return True
    return False


_DECIDED: set[str] = set()
"""Modules already seen by :func:`_send_by_value` (registered or not), so each is looked at once per process."""


def _send_by_value(module: types.ModuleType, loaded: list[types.ModuleType]) -> None:
    """Register ``module``, and the modules its import ``loaded``, for pickling by value where they are the user's."""
    for candidate in (module, *loaded):
        if candidate.__name__ in _DECIDED:
            continue
        _DECIDED.add(candidate.__name__)
        if is_user_module(candidate):
            cloudpickle.register_pickle_by_value(candidate)


def is_user_module(module: types.ModuleType) -> bool:
    """True for a module whose file lies in a config's folder, the current directory or the running script's folder,
    and not in an installed package, the Python installation or ding's own source tree.

    >>> import json
    >>> is_user_module(json)
    False
    """
    file = getattr(module, "__file__", None)
    if not file:
        return False
    path = pathlib.Path(file).resolve()
    folders = [*user_folders(), *_script_folder()]
    if not any(path.is_relative_to(folder) for folder in folders):
        return False
    return not any(path.is_relative_to(place) for place in _installed_places())


def _script_folder() -> list[pathlib.Path]:
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    return [pathlib.Path(main_file).resolve().parent] if main_file else []


def _installed_places() -> list[pathlib.Path]:
    places = {_DING_SOURCE_ROOT, pathlib.Path(sys.prefix), pathlib.Path(sys.base_prefix), pathlib.Path(sys.exec_prefix)}
    places.update(pathlib.Path(path) for key in ("purelib", "platlib", "stdlib") if (path := sysconfig.get_path(key)))
    places.update(pathlib.Path(entry) for entry in sys.path if pathlib.Path(entry).name in _PACKAGE_FOLDERS)
    return [place.resolve() for place in places]


__all__ = ["add_config_folder", "import_config_module", "is_user_module", "make_importable", "user_folders"]
