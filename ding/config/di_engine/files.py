"""DI-engine's config file functions (compatibility): ``read_config_directly``, ``read_config_with_system`` and
``save_config`` in DI-engine's call form as well as ding's, on ding's reader and writer
(:mod:`ding.config.loader`, :mod:`ding.config.writer`).
"""

from __future__ import annotations

import inspect
import os
import pathlib
import types
from collections.abc import Mapping
from typing import Any, overload

from easydict import EasyDict

from ding.config import writer
from ding.config.loader import CONFIG_NAMES, copied, read_names, run_config_file
from ding.config.sections import component_names
from ding.config.writer import config_source, python_source, write_source
from ding.errors import ConfigError


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
    create_config)``, :func:`read_config_directly` every name. Values may be dicts
    with str keys, lists, tuples, str, int, float (``inf`` and ``nan`` included), bool and None;
    anything else would not load back as it was, so it raises ``TypeError`` naming its key path.

    Example:
        >>> import tempfile
        >>> from ding.config.loader import read_config
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     main_config = {'env': {'episode_num': float('inf')}}
        ...     print(read_config(save_config(main_config, {'env': {'type': 'cartpole'}}, tmp + '/c.py')))
        ...     print(read_config_directly(save_config({'lr': 0.1, 'env': {'type': 'x'}}, tmp + '/d.py'))['exp_config'])
        ({'env': {'episode_num': inf}}, {'env': {'type': 'cartpole'}})
        {'lr': 0.1, 'env': {'type': 'x'}}
    """
    ding_form = "create_config" in kwargs or (len(args) >= 2 and isinstance(args[1], Mapping))
    form = writer.save_config if ding_form else save_exp_config
    try:
        bound = inspect.signature(form).bind(*args, **kwargs)
    except TypeError as err:
        raise TypeError(
            f"save_config takes (main_config, create_config, path) or (config_, path, type_='py', "
            f"save_formatted=False): {err}"
        ) from None
    return form(*bound.args, **bound.kwargs)


def save_exp_config(
    config_: Mapping[str, Any], path: str | os.PathLike[str], type_: str = "py", save_formatted: bool = False
) -> pathlib.Path:
    """DI-engine's form of :func:`save_config`: ``exp_config = ...`` (and ``formatted_<name>`` when asked)."""
    if type_ != "py":
        raise ConfigError(f"save_config type_ must be 'py', got {type_!r}: ding writes configs as Python files only")
    if not isinstance(config_, Mapping):
        raise TypeError(f"config_ must be a dict, got {type(config_).__name__}")
    file = write_source(exp_config_source(config_), path)
    if save_formatted:
        write_source(config_source(config_, component_names(config_)), file.with_name("formatted_" + file.name))
    return file


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
    return python_source([("exp_config", config_)], "main_config = exp_config", ("create_config", names))


def read_config_with_system(path: str | os.PathLike[str]) -> tuple[EasyDict, EasyDict, EasyDict]:
    """Like :func:`~ding.config.read_config`, for DI-engine's files that also define ``system_config``.

    ding has no parallel mode that would use ``system_config``; it is returned as read.
    """
    main_config, create_config, system_config = read_names(path, (*CONFIG_NAMES, "system_config"))
    return main_config, create_config, system_config


def read_config_directly(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Run the config file at ``path`` (as ``read_config`` does) and return copies of all its data names.

    Every top-level name that does not start with ``_`` and holds data (not a module, class or
    function) is returned; dicts as ``EasyDict``. A file :func:`save_config` wrote in
    DI-engine's form has ``exp_config`` here.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     file = pathlib.Path(tmp, 'c.py')
        ...     _ = file.write_text("import math\\nexp_config = dict(lr=0.1)\\nsteps = int(1e3)\\n_hidden = 1\\n")
        ...     read_config_directly(file)
        {'exp_config': {'lr': 0.1}, 'steps': 1000}
    """
    namespace = run_config_file(path)
    return {
        name: copied(value)
        for name, value in namespace.items()
        if not name.startswith("_") and not isinstance(value, (types.ModuleType, type)) and not callable(value)
    }
