"""A config in DI-engine's layout, read into ding's terms (compatibility).

DI-engine's configs carry sections and keys that change nothing in ding, or that ding refuses:
``create_config`` sections for the serial pipeline's workers and models (:mod:`ding.config.di_engine.workers`) and
keys DI-engine's ``compile_config`` writes into every policy section (:mod:`ding.config.di_engine.policy_keys`).
:func:`in_ding_terms` checks them and drops them, so ding's compiler (:func:`ding.config.compiler.compile_config`)
and the serial pipeline only ever see ding's config. ``ding.config.compile_config`` and the entry points that read a
user's config (``ding -m serial``, ``ding -m spec``, ...) call it first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ding.config.builtin_policies import with_builtin_import
from ding.config.compiler import NAME_KEYS, policy_defaults
from ding.config.di_engine.policy_keys import IGNORED_ENV_KEYS, without_ignored_env_keys, without_inert_keys
from ding.config.di_engine.workers import without_worker_sections
from ding.config.policy_registry import POLICY_REGISTRY
from ding.config.sections import resolve_components
from ding.envs.from_config import env_class
from ding.errors import ConfigError, UnknownNameError


def in_ding_terms(main_config: Any, create_config: Any, require_policy: bool = True) -> tuple[Any, Any]:
    """``(main_config, create_config)`` in ding's terms: DI-engine's worker sections checked and dropped from
    ``create_config``, and the policy section's DI-engine keys read as :mod:`~ding.config.di_engine.policy_keys`
    says. Neither input is modified; what is not a config (a ``main_config`` that is not a dict, an unknown policy)
    is passed on as it is, for the compiler to refuse.

    ``require_policy`` is the compiler's: with it a built-in policy's module is imported to read its defaults; without
    it only the modules the config names are.

    Example:
        >>> main = {'policy': {'collect': {'n_sample': 8, 'env_num': 4}}}
        >>> create = {'policy': {'type': 'dqn'}, 'replay_buffer': {'type': 'deque'}}
        >>> in_ding_terms(main, create)
        ({'policy': {'collect': {'n_sample': 8}}}, {'policy': {'type': 'dqn'}})
    """
    create = without_worker_sections(create_config)
    main_config = _without_ignored_env_keys(main_config, create)
    section = main_config.get("policy") if isinstance(main_config, Mapping) else None
    if not isinstance(section, Mapping):
        return main_config, create
    defaults = _registered_defaults(main_config, create, section, require_policy)
    if defaults is None:
        return main_config, create
    return {**main_config, "policy": without_inert_keys(section, defaults)}, create


def _without_ignored_env_keys(main_config: Any, create: Any) -> Any:
    """``main_config`` without the env keys of DI-engine's configs that the env does not declare (``exp_name``);
    unchanged when there are none or the env cannot be found (the compiler says why)."""
    env_section = main_config.get("env") if isinstance(main_config, Mapping) else None
    if not isinstance(env_section, Mapping) or not any(key in env_section for key in IGNORED_ENV_KEYS):
        return main_config
    try:
        env = resolve_components(main_config, create)["env"]
        env_cls = env_class({"type": env.type, "import_names": list(env.import_names)})
    except (ConfigError, ImportError, UnknownNameError):
        return main_config
    if not env_cls.declares_config():
        return main_config  # such an env takes any key, and may read this one
    return {**main_config, "env": without_ignored_env_keys(env_section, env_cls.default_config())}


def _registered_defaults(
    main_config: Mapping[str, Any], create: Any, section: Mapping[str, Any], require_policy: bool
) -> dict[str, Any] | None:
    """The defaults of the policy the config names, or None when it names none that can be found (the compiler says
    why)."""
    try:
        policy = resolve_components(main_config, create)["policy"]
    except ConfigError:
        return None
    imports = with_builtin_import(policy.type, policy.import_names) if require_policy else list(policy.import_names)
    try:
        POLICY_REGISTRY.import_names(imports)
    except ImportError:
        return None
    if policy.type is None or policy.type not in POLICY_REGISTRY:
        return None
    return policy_defaults(policy.type, {key: value for key, value in section.items() if key not in NAME_KEYS})
