"""ding's layers import only downward, its modules import each other in no loop, and DI-engine's compatibility layer
is fenced: no core module imports it.

The layers, from the ground up (:data:`LAYERS`): ``ding.errors``; ``ding.utils`` and ``ding.torch_utils``;
``ding.envs``; ``ding.config``; ``ding.model``; ``ding.policy``; ``ding.worker``; ``ding.entry`` (the command line
and the pipelines). A module imports modules of its own layer and of the layers below it.

DI-engine's compatibility layer (:data:`COMPATIBILITY`) is every module that exists for DI-engine's sake: its import
paths (``ding.envs.env.*``, ``base_env_manager`` ...), its names for ding's objects and its call forms and config
layout. It ends at the package faces that export DI-engine's names (:data:`FACES`) and at the entry layer, which
reads a user's config in DI-engine's layout; every other module of ding is core and never imports it.

Imports are read from the source (every ``import`` statement, in functions too), not by importing.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

LAYERS: tuple[tuple[str, ...], ...] = (
    ("ding.errors",),
    ("ding.utils", "ding.torch_utils"),
    ("ding.envs",),
    ("ding.config",),
    ("ding.model",),
    ("ding.policy",),
    ("ding.worker",),
    ("ding.entry", "ding.__main__"),
)
"""ding's layers, from the ground up: each imports only its own and the ones before it."""

COMPATIBILITY: tuple[str, ...] = (
    "ding.envs.env",  # DI-engine's ding.envs.env package: its paths, its env helpers and env implementation checks
    "ding.envs.env_manager.base_env_manager",  # DI-engine's module paths of the env managers
    "ding.envs.env_manager.subprocess_env_manager",
    "ding.envs.env_manager.envpool_env_manager",
    "ding.envs.env_manager.v2",  # DI-engine's V2 managers (stacked observations in, a list of timesteps out)
    "ding.envs.env_wrappers.di_engine",  # DI-engine's names for ding's wrappers, create_env_wrapper
    "ding.config.di_engine",  # compile_config's DI-engine call form, DI-engine's config layout read into ding's
    "ding.utils.default_helper",  # DI-engine's helpers by their names (deep_merge_dicts, set_pkg_seed ...)
    "ding.torch_utils",  # DI-engine's data conversions (to_tensor ...)
    "ding.model.template",  # DI-engine's model paths and signatures (DQN, VAC, MAVAC, ContinuousQAC ...)
    "ding.worker.replay_buffer",  # DI-engine's buffers: NaiveReplayBuffer(cfg), AdvancedReplayBuffer, default_config
)
"""Modules (and packages) of DI-engine's compatibility layer."""

FACES: tuple[str, ...] = (
    "ding.envs",
    "ding.envs.env_manager",
    "ding.envs.env_wrappers",
    "ding.config",
    "ding.utils",
    "ding.worker",
)
"""Package faces that export DI-engine's names beside ding's: where the compatibility layer meets the user."""

KNOWN_CROSSINGS: frozenset[tuple[str, str]] = frozenset()
"""Core modules that import a compatibility module today, each with its reason. The test fails when one is gone, so
that the entry goes too."""

KNOWN_CYCLES: frozenset[frozenset[str]] = frozenset()
"""Import loops among ding's modules today. The test fails when one is gone, so that the entry goes too."""

KNOWN_PRIVATE_IMPORTS: frozenset[tuple[str, str]] = frozenset()
"""Private names imported from another module today (importer, name). The test fails when one is gone."""


@dataclasses.dataclass(frozen=True)
class Module:
    name: str
    path: pathlib.Path
    imports: frozenset[str]
    private_imports: frozenset[str]
    docstring: str


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def modules() -> dict[str, Module]:
    """Every module of ``ding/``, with the ding modules it imports."""
    paths = sorted((ROOT / "ding").rglob("*.py"))
    names = {_module_name(path) for path in paths}
    found = {}
    for path in paths:
        name = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imports: set[str] = set()
        private: set[str] = set()
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imports.update(alias.name for alias in node.names if alias.name.split(".")[0] == "ding")
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                if base.split(".")[0] != "ding":
                    continue
                for alias in node.names:
                    child = f"{base}.{alias.name}"
                    imports.add(child if child in names else base)
                    if alias.name.startswith("_") and not alias.name.startswith("__") and child not in names:
                        private.add(alias.name)
        found[name] = Module(name, path, frozenset(imports), frozenset(private), ast.get_docstring(tree) or "")
    return found


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def layer_of(name: str) -> int:
    if name == "ding":  # the root package: its version, and no import
        return 0
    for index, layer in enumerate(LAYERS):
        if _within(name, layer):
            return index
    raise AssertionError(f"{name} is in no layer of LAYERS")


def is_compatibility(name: str) -> bool:
    return _within(name, COMPATIBILITY)


def is_core(name: str) -> bool:
    """A module of ding's core: neither compatibility, nor a face, nor of the entry layer (nor ``ding`` itself)."""
    return not (is_compatibility(name) or name in (*FACES, "ding") or layer_of(name) >= layer_of("ding.entry"))


def test_every_module_is_in_a_layer_and_imports_only_its_own_and_lower_layers() -> None:
    upward = [
        f"{module.name} (layer {layer_of(module.name)}) imports {imported} (layer {layer_of(imported)})"
        for module in modules().values()
        for imported in sorted(module.imports)
        if layer_of(imported) > layer_of(module.name)
    ]
    assert upward == []


def _cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.add(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles_among_ding_modules() -> None:
    graph = {name: {i for i in module.imports if i in modules()} for name, module in modules().items()}
    assert _cycles(graph) == KNOWN_CYCLES


def test_the_core_never_imports_the_compatibility_layer() -> None:
    crossings = {
        (module.name, imported)
        for module in modules().values()
        if is_core(module.name)
        for imported in module.imports
        if is_compatibility(imported)
    }
    assert crossings == KNOWN_CROSSINGS


@pytest.mark.parametrize("name", sorted(name for name in modules() if is_compatibility(name)))
def test_each_compatibility_module_says_so_in_its_first_line(name: str) -> None:
    first_line = modules()[name].docstring.partition("\n")[0]
    assert "DI-engine" in first_line, f"{name}: {first_line!r}"


def test_the_compatibility_layer_lists_modules_that_exist() -> None:
    assert [prefix for prefix in COMPATIBILITY if not any(_within(name, (prefix,)) for name in modules())] == []


def test_no_private_name_is_imported_from_another_module() -> None:
    found = {(module.name, name) for module in modules().values() for name in module.private_imports}
    assert found == KNOWN_PRIVATE_IMPORTS


def test_the_config_layer_finds_policies_without_importing_them() -> None:
    config = [module for name, module in modules().items() if _within(name, ("ding.config",))]
    assert [(m.name, i) for m in config for i in sorted(m.imports) if _within(i, ("ding.policy",))] == []
