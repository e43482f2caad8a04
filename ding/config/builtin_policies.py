"""The policies ding ships, by the name a config gives them, and the module that registers each.

Policy modules import torch, so they are imported only when a config names them: the serial entry
adds a built-in policy's module to ``policy.import_names`` before compiling (the compiled config
then records it and stands alone).
"""

from __future__ import annotations

BUILTIN_POLICY_MODULES: dict[str, str] = {
    "a2c": "ding.policy.a2c",
    "c51": "ding.policy.c51",
    "ddpg": "ding.policy.ddpg",
    "discrete_sac": "ding.policy.discrete_sac",
    "dqn": "ding.policy.dqn",
    "ppo": "ding.policy.ppo",
    "qrdqn": "ding.policy.qrdqn",
    "sac": "ding.policy.sac",
    "td3": "ding.policy.td3",
}
"""Policy type → module whose import registers it."""

BUILTIN_POLICY_ALIASES: dict[str, str] = {
    "sac_discrete": "discrete_sac",  # the type DI-engine's lunarlander_discrete_sac_config.py names
    **{f"{name}_command": name for name in BUILTIN_POLICY_MODULES},  # how DI-engine's serial pipeline looks them up
}
"""DI-engine's other names of the built-in policies → the registered name."""


def builtin_policy_name(policy_type: object) -> str | None:
    """The built-in policy ``policy_type`` names (itself, or what a DI-engine alias stands for), or None.

    >>> builtin_policy_name('sac_discrete'), builtin_policy_name('dqn_command'), builtin_policy_name('x')
    ('discrete_sac', 'dqn', None)
    """
    if not isinstance(policy_type, str):
        return None
    name = BUILTIN_POLICY_ALIASES.get(policy_type, policy_type)
    return name if name in BUILTIN_POLICY_MODULES else None


def with_builtin_import(policy_type: object, import_names: list[str] | tuple[str, ...] | None) -> list[str]:
    """``import_names`` plus the module of ``policy_type`` when it is a built-in policy (or an alias of one).

    >>> with_builtin_import('dqn', None), with_builtin_import('dqn', ['ding.policy.dqn']), with_builtin_import('x', [])
    (['ding.policy.dqn'], ['ding.policy.dqn'], [])
    """
    names = list(import_names or [])
    builtin = builtin_policy_name(policy_type)
    module = None if builtin is None else BUILTIN_POLICY_MODULES[builtin]
    if module is not None and module not in names:
        names.append(module)
    return names
