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


def with_builtin_import(policy_type: object, import_names: list[str] | tuple[str, ...] | None) -> list[str]:
    """``import_names`` plus the module of ``policy_type`` when it is a built-in policy.

    >>> with_builtin_import('dqn', None), with_builtin_import('dqn', ['ding.policy.dqn']), with_builtin_import('x', [])
    (['ding.policy.dqn'], ['ding.policy.dqn'], [])
    """
    names = list(import_names or [])
    module = BUILTIN_POLICY_MODULES.get(policy_type) if isinstance(policy_type, str) else None
    if module is not None and module not in names:
        names.append(module)
    return names
