"""The API reference: a page per public package, with autodoc of every name the package exports.

A name is documented once, on the page of the most specific public package that exports it (``BaseEnvManager`` on
``ding.envs.env_manager``'s page, though ``ding.envs`` exports it too).
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from ding_docs.rst import heading, page

PACKAGES = (
    "ding.envs",
    "ding.envs.env_wrappers",
    "ding.envs.env_manager",
    "ding.config",
    "ding.policy",
    "ding.worker",
    "ding.entry",
)
"""The public packages, in the order of the reference's table of contents."""


def registered_policies() -> list[tuple[str, Any]]:
    """The policies ``POLICY_REGISTRY`` holds, by their modules' paths (``ding.policy`` exports only the registry)."""
    importlib.import_module("ding.policy")  # registers the built-in policies
    from ding.config.policy_registry import POLICY_REGISTRY

    classes = [POLICY_REGISTRY.get(name) for name in POLICY_REGISTRY.names()]
    return [(f"{cls.__module__}.{cls.__qualname__}", cls) for cls in dict.fromkeys(classes)]


REGISTERED = {"ding.policy": registered_policies}
"""Per package, what it documents besides its exports: the classes its registry holds."""


def directive(target: str, obj: Any) -> list[str]:
    if inspect.isclass(obj):
        return [f".. autoclass:: {target}", "   :members:", "   :show-inheritance:", ""]
    if callable(obj) and not inspect.ismodule(obj):
        return [f".. autofunction:: {target}", ""]
    return [f".. autodata:: {target}", "   :no-value:", ""]


def exports(package: str) -> list[tuple[str, Any]]:
    module = importlib.import_module(package)
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    return [(name, getattr(module, name)) for name in names if not inspect.ismodule(getattr(module, name))]


def owner(obj: Any) -> str:
    """The most specific public package whose subtree defines ``obj`` (its own module's package)."""
    module = getattr(obj, "__module__", None) or ""
    candidates = [p for p in PACKAGES if module == p or module.startswith(p + ".")]
    return max(candidates, key=len) if candidates else ""


def pages() -> dict[str, str]:
    """Each package's page (named by the package) as reStructuredText."""
    documented: set[int] = set()
    lines_of: dict[str, list[str]] = {}
    for package in sorted(PACKAGES, key=len, reverse=True):
        lines = [*heading(package, "="), f".. automodule:: {package}", "   :no-members:", ""]
        for name, obj in exports(package):
            owned_here = owner(obj) in ("", package) or owner(obj) not in PACKAGES
            if id(obj) in documented or (not owned_here and _exported_by(owner(obj), obj)):
                continue
            documented.add(id(obj))
            lines += directive(f"{package}.{name}", obj)
        for target, obj in REGISTERED.get(package, list)():
            if id(obj) not in documented:
                documented.add(id(obj))
                lines += directive(target, obj)
        lines_of[package] = lines
    return {package: page(lines_of[package]) for package in PACKAGES}


def _exported_by(package: str, obj: Any) -> bool:
    return any(value is obj for _, value in exports(package))
