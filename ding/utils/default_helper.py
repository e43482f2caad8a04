"""Small helpers under DI-engine's names: config merges, ``flatten_dict``, ``set_pkg_seed``, ``import_module``."""

from __future__ import annotations

import importlib
import importlib.util
import random
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ding.utils.merge import deep_merge_dicts, deep_update
from ding.utils.user_modules import import_config_module


def flatten_dict(data: Mapping[str, Any], delimiter: str = "/") -> dict[str, Any]:
    """Nested dicts as one level, each key the path of its value joined by ``delimiter``.

    Empty nested dicts disappear, as in DI-engine.

    >>> flatten_dict({'a': {'aa': {'aaa': 1}, 'ab': 2}, 'b': 3})
    {'a/aa/aaa': 1, 'a/ab': 2, 'b': 3}
    >>> flatten_dict({'env': {'manager': {'type': 'base'}}}, delimiter='.')
    {'env.manager.type': 'base'}
    """
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, Mapping):
            for sub_key, sub_value in flatten_dict(value, delimiter).items():
                flat[f"{key}{delimiter}{sub_key}"] = sub_value
        else:
            flat[key] = value
    return flat


def set_pkg_seed(seed: int, use_cuda: bool = True) -> None:
    """Seed Python's ``random``, numpy's global generator and, when torch is installed, torch's.

    ``use_cuda`` also seeds the CUDA generators where CUDA is available (``torch.manual_seed``
    already does; the argument is kept for DI-engine's call form). numpy takes ``seed % 2**32``.

    >>> set_pkg_seed(3); first = np.random.rand()
    >>> set_pkg_seed(3); first == np.random.rand()
    True
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int, got {type(seed).__name__} {seed!r}")
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    if importlib.util.find_spec("torch") is None:
        return
    import torch

    torch.manual_seed(seed)
    if use_cuda and torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def import_module(modules: Iterable[str]) -> None:
    """Import each named module (so that the registrations it holds run), as DI-engine's ``import_module``.

    Modules are looked for as in a config's ``import_names`` (:func:`~ding.utils.user_modules.import_config_module`).

    A single name is an error (it would be read letter by letter).

    >>> import_module(['json', 'ding.envs'])
    """
    if isinstance(modules, str):
        raise TypeError(f"import_module takes a list of module names, got the str {modules!r}; use [{modules!r}]")
    for name in modules:
        import_config_module(name)


__all__ = ["deep_merge_dicts", "deep_update", "flatten_dict", "import_module", "set_pkg_seed"]
