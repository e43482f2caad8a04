"""``POLICY_REGISTRY``: how configs name policy classes (``create_config.policy.type``), built-in ones included.

It lives with the configs, below the policies: a policy module registers itself here, and the compiler finds a
built-in policy by importing its module by name (:data:`~ding.config.builtin_policies.BUILTIN_POLICY_MODULES`), so
the config layer never imports ``ding.policy``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from ding.config.builtin_policies import BUILTIN_POLICY_ALIASES, BUILTIN_POLICY_MODULES, builtin_policy_name
from ding.errors import UnknownNameError, unknown_name_message
from ding.utils.registry import Registry

TYPE_HINT = (
    "Set create_config.policy.type to one of them, or list the module that registers your policy in "
    "create_config.policy.import_names."
)
"""What a config can do about an unknown policy type."""


def _check_policy_class(name: str, cls: Any) -> None:
    if not isinstance(cls, type) or not callable(getattr(cls, "default_config", None)):
        raise TypeError(f"policy {name!r} must be a class with a default_config() classmethod, got {cls!r}")


class PolicyRegistry(Registry[type]):
    """A registry that also knows the built-in policies, whose modules (and torch) it imports on first use.

    :meth:`names` lists the built-in policies before they are imported (``in`` and iteration count only
    registered ones); :meth:`get` imports a built-in policy's module; an unknown name is an error that lists
    them all and says what a config can do about it.

    Example:
        >>> POLICY_REGISTRY.get('dqnn')
        Traceback (most recent call last):
        ...
        ding.errors.UnknownNameError: unknown policy 'dqnn'; \
known: a2c, c51, ddpg, discrete_sac, dqn, ppo, qrdqn, sac, td3. Did you mean 'dqn'? \
Set create_config.policy.type to one of them, or list the module that registers your policy in \
create_config.policy.import_names.
    """

    def canonical(self, name: str) -> str:
        builtin = builtin_policy_name(name)
        if builtin is not None and name not in self:
            importlib.import_module(BUILTIN_POLICY_MODULES[builtin])
        if name not in self:
            raise UnknownNameError(f"{unknown_name_message(self.kind, name, self.names())} {TYPE_HINT}")
        return super().canonical(name)

    def register(self, name: str, *, force: bool = False) -> Callable[[type], type]:
        """:meth:`Registry.register`; a built-in policy also gets DI-engine's aliases of it
        (:data:`~ding.config.builtin_policies.BUILTIN_POLICY_ALIASES`: ``sac_discrete``, ``dqn_command``, ...)."""
        decorate = super().register(name, force=force)

        def register_with_aliases(cls: type) -> type:
            decorate(cls)
            if name in BUILTIN_POLICY_MODULES:
                for alias in [alias for alias, target in BUILTIN_POLICY_ALIASES.items() if target == name]:
                    self.add_alias(alias, name)
            return cls

        return register_with_aliases

    def names(self) -> list[str]:
        """Every registered name and every built-in policy's, imported or not."""
        return sorted({*super().names(), *BUILTIN_POLICY_MODULES})


POLICY_REGISTRY: PolicyRegistry = PolicyRegistry("policy", validator=_check_policy_class)
"""Policy classes by name.

Register a class with ``@POLICY_REGISTRY.register('dqn')``; it needs a ``default_config()``
classmethod returning its full default config as a dict. ``compile_config`` merges the user's
``policy`` section into that dict strictly, so a misspelt key is an error.
"""


def learns_on_policy(policy_type: str) -> bool | None:
    """Whether the policy learns on-policy (its default config's ``on_policy``); None when it does not say.

    >>> learns_on_policy('ppo'), learns_on_policy('dqn')
    (True, False)
    """
    policy_cls: Any = POLICY_REGISTRY.get(policy_type)
    flag = policy_cls.default_config().get("on_policy")
    return flag if isinstance(flag, bool) else None
