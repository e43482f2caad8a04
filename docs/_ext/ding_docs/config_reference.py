"""The config reference: every key a config takes, from the defaults the components declare.

A key's default and what it accepts come from its declaration (:mod:`ding.utils.accepts`); its meaning from the
declaration's note, else from the comment written beside the key where it is declared (see :mod:`ding_docs.comments`).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Mapping
from typing import Any

import ding.policy  # noqa: F401  (registers the policies)
from ding.config.policy_registry import POLICY_REGISTRY
from ding.config.sections import SCALAR_KEYS
from ding.envs import base_env
from ding.envs.base_env import COMMON_ENV_CONFIG
from ding.envs.env_manager.factory import ENV_MANAGER_REGISTRY
from ding.envs.env_registry import ENV_REGISTRY
from ding.utils.accepts import Accepts, rule_of
from ding.utils.value_rules import describe
from ding_docs.comments import KeyComments
from ding_docs.rst import heading, literal, table
from ding_docs.rst import page as rst_page

TOP_LEVEL = {
    "exp_name": ("an experiment directory name (default ``default_experiment``)", "where the run writes its files"),
    "seed": ("an int (default 0)", "the run's seed; ``-s`` on the command line gives one run per seed"),
}
"""The top-level keys that are values, not sections (:data:`ding.config.sections.SCALAR_KEYS`)."""


def rows(declared: Mapping[str, Any], prefix: str, comments: KeyComments) -> Iterator[list[str]]:
    """One row per key of ``declared`` (sections walked), as key path, default, what it accepts, meaning."""
    for key, value in declared.items():
        path = f"{prefix}.{key}"
        if isinstance(value, Mapping) and not isinstance(value, Accepts):
            if value:
                yield from rows(value, path, comments)
            else:
                yield [literal(path), "``{}``", "a section of any keys", comments.meaning(path, None)]
            continue
        rule = rule_of(value)
        default = value.default if isinstance(value, Accepts) else value
        accepts = "anything" if rule is None or rule.annotation is Any else describe(rule.annotation)
        note = rule.note if rule is not None else ""
        yield [literal(path), literal(repr(default)), accepts, comments.meaning(path, note)]


def key_table(declared: Mapping[str, Any], prefix: str, owner: Any) -> list[str]:
    comments = KeyComments.for_owner(owner)
    return table(["key", "default", "accepts", "meaning"], list(rows(declared, prefix, comments)), [30, 15, 25, 30])


def page_lines() -> list[str]:
    lines = [
        ".. This page is written by the docs build from the declared defaults (docs/_ext/ding_docs).",
        "",
        *heading("Config reference", "="),
        "Every key a config takes, with its default, what it accepts and what it means, as the components declare",
        "them (see :doc:`/guides/configs`). A value a key does not accept is refused with one line naming the key",
        "path, the value and what is accepted; a key that is not listed is refused with the known keys.",
        "",
        *heading("Top level", "-"),
        *table(
            ["key", "accepts", "meaning"],
            [[literal(key), *TOP_LEVEL[key]] for key in SCALAR_KEYS],
        ),
        *heading("env", "-"),
        "Keys every env section has; an env type adds its own (below).",
        "",
        *key_table({k: v for k, v in COMMON_ENV_CONFIG.items() if k != "manager"}, "env", base_env),
    ]
    for name in ENV_REGISTRY.names():
        env_cls: Any = ENV_REGISTRY.get(name)
        own = {k: v for k, v in env_cls.declared_config().items() if k not in COMMON_ENV_CONFIG}
        lines += heading(f"env type {name}", "~")
        lines += [f"``{env_cls.__module__}.{env_cls.__qualname__}``: {first_line(env_cls)}", ""]
        lines += key_table(own, "env", env_cls) if own else ["No keys of its own.", ""]
    lines += heading("env.manager", "-")
    lines += ["The section of the manager ``create_config.env_manager.type`` names (``base`` unless given).", ""]
    for name in ENV_MANAGER_REGISTRY.names():
        manager: Any = ENV_MANAGER_REGISTRY.get(name)
        lines += heading(f"manager type {name}", "~")
        lines += [f"``{manager.__module__}.{manager.__qualname__}``: {first_line(manager)}", ""]
        lines += key_table(manager.config, "env.manager", manager)
    lines += heading("policy", "-")
    lines += [
        "The section of the policy ``create_config.policy.type`` names; the keys of its model are filled from the",
        "env's spaces when the config leaves them out.",
        "",
    ]
    for name in POLICY_REGISTRY.names():
        policy: Any = POLICY_REGISTRY.get(name)
        lines += heading(f"policy type {name}", "~")
        lines += [f"``{policy.__module__}.{policy.__qualname__}``: {first_line(policy)}", ""]
        lines += key_table(policy.declared_for({}), "policy", policy)
    return lines


def first_line(obj: Any) -> str:
    """The first sentence of ``obj``'s docstring."""
    doc = inspect.getdoc(obj) or ""
    return doc.split("\n\n")[0].replace("\n", " ")


def page() -> str:
    return rst_page(page_lines())
