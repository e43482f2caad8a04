"""The wrapper catalogue: every registered wrapper, its rule, its keyword arguments and an example the build runs.

The example is the wrapper's first shape-proof case on a catalogue env (``tests/envs/env_wrappers``: the cases the
test suite proves against real observations); the build computes the spaces after the wrapper with ``update_space``.
"""

from __future__ import annotations

import inspect
from typing import Any

from ding.envs.env_wrappers import WRAPPER_REGISTRY, update_space
from ding.envs.values.spaces import EnvSpaces, reward_space_of
from ding.utils.value_rules import describe
from ding_docs.rst import heading, literal, table
from ding_docs.rst import page as rst_page
from tests.envs.env_wrappers.catalogue import ALE_CATALOGUE, CATALOGUE, ShapeCase, shape_cases


def example_case(name: str, cases: list[ShapeCase]) -> ShapeCase | None:
    """The wrapper's first case on a catalogue env that needs no ROM, else its first case."""
    own = [case for case in cases if case.wrapper == name]
    return next((case for case in own if case.env not in ALE_CATALOGUE), own[0] if own else None)


def example_lines(case: ShapeCase) -> list[str]:
    env = CATALOGUE[case.env].make()
    try:
        before = EnvSpaces(env.observation_space, env.action_space, reward_space_of(env))
    finally:
        env.close()
    after = update_space(before.observation, before.action, before.reward, [(case.wrapper, case.kwargs)])
    call = f"update_space(obs, act, rew, [({case.wrapper!r}, {case.kwargs!r})])"
    return [
        f"Example, on a {CATALOGUE[case.env].description} (computed by the docs build):",
        "",
        ".. code-block:: text",
        "",
        *(f"   {line}" for line in _spaces("before", before)),
        f"   {call}",
        *(f"   {line}" for line in _spaces("after ", after)),
        "",
    ]


def _spaces(label: str, spaces: EnvSpaces) -> list[str]:
    return [
        f"{label}: observation {spaces.observation}",
        f"        action      {spaces.action}",
        f"        reward      {spaces.reward}",
    ]


def argument_rows(cls: Any) -> list[list[str]]:
    rows = []
    for parameter in cls.parameters.values():
        default = "required" if parameter.required else literal(repr(parameter.default))
        rows.append([literal(parameter.name), describe(parameter.annotation), default])
    return rows


def page_lines() -> list[str]:
    cases = shape_cases()
    aliases: dict[str, list[str]] = {}
    for alias, name in WRAPPER_REGISTRY.aliases().items():
        aliases.setdefault(name, []).append(alias)
    lines = [
        ".. This page is written by the docs build from the wrapper registry (docs/_ext/ding_docs).",
        "",
        *heading("Wrapper catalogue", "="),
        f"The {len(WRAPPER_REGISTRY.names())} registered wrappers, by the name a config's ``env_wrapper`` uses. Each",
        "states its space rule once, as a pure function of the spaces it wraps and its keyword arguments (see",
        ":doc:`/guides/wrappers`).",
        "",
    ]
    for name in WRAPPER_REGISTRY.names():
        cls: Any = WRAPPER_REGISTRY.get(name)
        doc = inspect.getdoc(cls) or ""
        lines += heading(name, "-")
        lines += [f"Class :class:`~ding.envs.env_wrappers.{cls.__name__}`.", ""]
        other = [a for a in aliases.get(name, []) if a != cls.__name__]
        if other:
            lines += ["Also named " + ", ".join(literal(a) for a in other) + ".", ""]
        lines += [doc.split("\n\n")[0], ""]
        rows = argument_rows(cls)
        lines += table(["argument", "accepts", "default"], rows, [25, 50, 25]) if rows else ["No arguments.", ""]
        case = example_case(name, cases)
        if case is not None and (case.env not in ALE_CATALOGUE or _ale_installed()):
            lines += example_lines(case)
    return lines


def _ale_installed() -> bool:
    try:
        import ale_py  # noqa: F401
    except ImportError:
        return False
    return True


def page() -> str:
    return rst_page(page_lines())
