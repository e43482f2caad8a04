"""The declared default config of each env manager type, as ``compile_config`` merges it under ``env.manager``.

Each manager class declares its defaults (its ``config`` class attribute, copied by
``default_config()``); this module looks a type up in the registry and returns them, with the
keys that name the manager (``type``, ``import_names``, ``cfg_type``). An unknown key is an error.
"""

from __future__ import annotations

from easydict import EasyDict

from ding.envs.env_manager.factory import ENV_MANAGER_REGISTRY


def manager_default_config(manager_type: str) -> EasyDict:
    """The declared default config of an env manager type, with ``type`` set.

    >>> cfg = manager_default_config('base')
    >>> cfg.type, cfg.auto_reset, cfg.max_retry, cfg.cfg_type
    ('base', True, 2, 'BaseEnvManagerDict')
    """
    cls = ENV_MANAGER_REGISTRY.get(manager_type)
    return EasyDict({"type": manager_type, "import_names": [], **cls.default_config()})
