"""DI-engine-style configs: read and write config files, merge them strictly, compile them against components.

- :func:`read_config` / :func:`save_config`: Python config files with ``main_config`` and ``create_config``
  (DI-engine's ``read_config_directly``, ``read_config_with_system`` and ``save_config(config_, path)`` too);
- :func:`deep_merge_dicts`: merge settings into defaults, rejecting unknown keys when ``strict``;
- :func:`compile_config`: the complete, checked config that env managers, envs and policies are built from
  (in ding's call form and in DI-engine's, which can also write it into the experiment directory).

DI-engine's call forms and layout are read in :mod:`ding.config.di_engine` (compatibility); ding's own compiler is
:func:`ding.config.compiler.compile_config`.
"""

from ding.config.di_engine.call_form import compile_config
from ding.config.di_engine.files import read_config_directly, read_config_with_system, save_config
from ding.config.loader import read_config
from ding.utils.merge import deep_merge_dicts

__all__ = [
    "compile_config",
    "deep_merge_dicts",
    "read_config",
    "read_config_directly",
    "read_config_with_system",
    "save_config",
]
