"""The config's sections: which components ``create_config`` names and which keys ``main_config`` takes.

A component (env, env manager, policy) is named in ``create_config[<name>]`` by ``type`` (and,
for registries that import plug-ins, ``import_names``); its settings live at ``main_path`` in
``main_config``, where a compiled config records the type as well. Adding a component means
adding a row to :data:`COMPONENTS` and a step to :func:`ding.config.compiler.compile_config`.

DI-engine's configs also name a learner, collector, evaluator and replay buffer: those sections are read (checked
and dropped) before a config reaches these functions, by :mod:`ding.config.di_engine.workers`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ding.errors import ConfigError, did_you_mean


@dataclasses.dataclass(frozen=True)
class Component:
    """How ``create_config`` names one component and where its settings live in ``main_config``."""

    create_keys: tuple[str, ...]
    main_path: tuple[str, ...]
    default_type: str | None = None

    @property
    def takes_import_names(self) -> bool:
        return "import_names" in self.create_keys


COMPONENTS: dict[str, Component] = {
    "env": Component(create_keys=("type", "import_names"), main_path=("env",)),
    "env_manager": Component(create_keys=("type",), main_path=("env", "manager"), default_type="base"),
    "policy": Component(create_keys=("type", "import_names"), main_path=("policy",)),
}
"""Every section ``create_config`` accepts, in compile order."""


SCALAR_KEYS: tuple[str, ...] = ("exp_name", "seed")
"""Top-level keys of ``main_config`` that are plain values rather than component sections."""

TOP_LEVEL_KEYS: tuple[str, ...] = (
    *SCALAR_KEYS,
    *dict.fromkeys(c.main_path[0] for c in COMPONENTS.values()),
)
"""Every top-level key ``main_config`` accepts, in the order a compiled config lists them."""


@dataclasses.dataclass(frozen=True)
class ComponentName:
    """The resolved name of one component: its registered type and the modules that register it."""

    type: str | None
    import_names: tuple[str, ...] = ()


def check_top_level(main_config: Mapping[str, Any]) -> None:
    """Reject unknown top-level keys of ``main_config`` and component sections that are not dicts.

    >>> check_top_level({'exp_name': 'x', 'polciy': {}})
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: unknown top-level config key 'polciy'; known: env, exp_name, policy, seed. \
Did you mean 'policy'?
    """
    for key, value in main_config.items():
        if key not in TOP_LEVEL_KEYS:
            known = sorted(TOP_LEVEL_KEYS)
            raise ConfigError(
                f"unknown top-level config key {key!r}; known: {', '.join(known)}.{did_you_mean(str(key), known)}"
            )
        if key not in SCALAR_KEYS and value is not None and not isinstance(value, Mapping):
            raise ConfigError(f"config section {key!r} must be a dict, got {type(value).__name__} {value!r}")


def resolve_components(
    main_config: Mapping[str, Any], create_config: Mapping[str, Any] | None
) -> dict[str, ComponentName]:
    """Validate ``create_config`` and return every component's name.

    A type may come from ``create_config`` or from ``main_config`` (where a compiled config keeps
    it, e.g. ``env.manager.type``); if both give one they must agree. ``import_names`` from both
    are combined.

    >>> resolve_components({'env': {'manager': {'type': 'subprocess'}}}, {'env': {'type': 'cartpole'}})['env_manager']
    ComponentName(type='subprocess', import_names=())
    """
    create = _checked_create_config(create_config)
    names: dict[str, ComponentName] = {}
    for name, component in COMPONENTS.items():
        from_create = create.get(name) or {}
        from_main = _section_at(main_config, component.main_path)
        type_ = _agreed_type(name, component, from_create.get("type"), from_main.get("type"))
        imports: tuple[str, ...] = ()
        if component.takes_import_names:
            imports = _import_names(from_create.get("import_names"), f"create_config.{name}.import_names")
            main_label = "main_config." + ".".join((*component.main_path, "import_names"))
            for module in _import_names(from_main.get("import_names"), main_label):
                if module not in imports:
                    imports = (*imports, module)
        names[name] = ComponentName(type_, imports)
    return names


def _checked_create_config(create_config: Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]]:
    if create_config is None:
        return {}
    if not isinstance(create_config, Mapping):
        raise ConfigError(f"create_config must be a dict, got {type(create_config).__name__} {create_config!r}")
    checked: dict[str, Mapping[str, Any]] = {}
    for name, section in create_config.items():
        if name not in COMPONENTS:
            known = sorted(COMPONENTS)
            raise ConfigError(
                f"unknown create_config section {name!r}; known: {', '.join(known)}.{did_you_mean(str(name), known)}"
            )
        if section is None:
            continue
        if not isinstance(section, Mapping):
            raise ConfigError(f"create_config.{name} must be a dict, got {type(section).__name__} {section!r}")
        accepted = COMPONENTS[name].create_keys
        for key in section:
            if key not in accepted:
                hint = " (manager settings belong in main_config.env.manager)" if name == "env_manager" else ""
                raise ConfigError(
                    f"unknown key {key!r} in create_config.{name}; accepted: {', '.join(accepted)}"
                    f"{hint}.{did_you_mean(str(key), accepted)}"
                )
        checked[name] = section
    return checked


def component_names(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The ``create_config`` naming the components a (compiled) config records at their ``main_path``.

    >>> component_names({'env': {'type': 'cartpole', 'import_names': ['m'], 'manager': {'type': 'base'}}})
    {'env': {'type': 'cartpole', 'import_names': ['m']}, 'env_manager': {'type': 'base'}}
    """
    names: dict[str, dict[str, Any]] = {}
    for name, component in COMPONENTS.items():
        section = _section_at(config, component.main_path)
        if section.get("type") is None:
            continue
        names[name] = {"type": section["type"]}
        if component.takes_import_names:
            names[name]["import_names"] = list(section.get("import_names") or [])
    return names


def _section_at(config: Mapping[str, Any], path: tuple[str, ...]) -> Mapping[str, Any]:
    node: Any = config
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node if isinstance(node, Mapping) else {}


def _agreed_type(name: str, component: Component, from_create: Any, from_main: Any) -> str | None:
    where = "main_config." + ".".join(component.main_path) + ".type"
    for value, label in ((from_create, f"create_config.{name}.type"), (from_main, where)):
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{label} must be a registered name (a str), got {type(value).__name__} {value!r}")
    if from_create is not None and from_main is not None and from_create != from_main:
        raise ConfigError(f"create_config.{name}.type is {from_create!r} but {where} is {from_main!r}; they must agree")
    chosen = from_create if from_create is not None else from_main
    return chosen if chosen is not None else component.default_type


def _import_names(value: Any, label: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)) or not all(isinstance(module, str) for module in value):
        raise ConfigError(f"{label} must be a list of module names, got {value!r}")
    return tuple(value)
