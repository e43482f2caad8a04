"""DI-engine's ``compile_config`` keywords: component classes turned into names, and the workers ding runs itself.

DI-engine may name the env, env manager and policy by class (``env=CartPoleEnv``). ding records
every component by its registered name, so the compiled config stands alone; a class is looked up
in its registry and becomes ``create_config.<section>.type`` (with its module in ``import_names``).
The learner, collector, evaluator and replay buffer are always ding's own
(:data:`~ding.config.sections.PIPELINE_WORKERS`), and ding has no reward or world models.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
from collections.abc import Mapping
from typing import Any

from ding.config.sections import COMPONENTS, NOT_IN_DING, PIPELINE_WORKERS
from ding.errors import ConfigError, UnknownNameError
from ding.utils.registry import Registry

CLASS_KEYWORDS: dict[str, tuple[str, str, str]] = {
    "env": ("ding.envs.registry", "ENV_REGISTRY", "a BaseEnv subclass"),
    "env_manager": ("ding.envs.env_manager.factory", "ENV_MANAGER_REGISTRY", "an env manager class"),
    "policy": ("ding.policy.registry", "POLICY_REGISTRY", "a policy class"),
}
"""Keyword (and create_config section) → (module, registry, what it takes) for components given by class."""

WORKER_KEYWORDS: dict[str, str] = {
    "learner": "learner",
    "collector": "collector",
    "evaluator": "evaluator",
    "buffer": "replay_buffer",
}
"""DI-engine's worker keywords → the :data:`PIPELINE_WORKERS` entry they name."""


@dataclasses.dataclass(frozen=True)
class Call:
    """What a ``compile_config`` call names: its ``create_config``, and whether it used DI-engine's form."""

    create_config: dict[str, Any] | None
    di_engine_form: bool


def resolve_call(
    create_config: Mapping[str, Any] | type | None,
    create_cfg: Mapping[str, Any] | None,
    classes: Mapping[str, Any],
    workers: Mapping[str, Any],
) -> Call:
    """Tell ding's call form from DI-engine's and turn DI-engine's keywords into one ``create_config``.

    ``create_config`` is ding's second argument, or DI-engine's ``env_manager`` when it is a class;
    ``create_cfg``, a class or a worker keyword makes the call DI-engine's.

    >>> from ding.envs.env_manager import BaseEnvManager
    >>> resolve_call(BaseEnvManager, None, {'env_manager': None}, {})
    Call(create_config={'env_manager': {'type': 'base'}}, di_engine_form=True)
    >>> resolve_call({'policy': {'type': 'dqn'}}, None, {}, {}).di_engine_form
    False
    """
    classes = dict(classes)
    if isinstance(create_config, type):  # DI-engine's second positional argument: the env manager class
        if classes.get("env_manager") is not None:
            raise TypeError(
                f"the env manager is given twice: {create_config!r} and env_manager={classes['env_manager']!r}"
            )
        create_config, classes["env_manager"] = None, create_config
    if create_config is not None and create_cfg is not None:
        raise TypeError("create_config is given twice: as create_config and as DI-engine's create_cfg; give one")
    check_worker_keywords(workers)
    di_engine_form = create_cfg is not None or any(v is not None for v in [*classes.values(), *workers.values()])
    return Call(named_by_classes(create_cfg if create_cfg is not None else create_config, classes), di_engine_form)


def named_by_classes(create: Mapping[str, Any] | None, classes: Mapping[str, Any]) -> dict[str, Any] | None:
    """``create`` with the classes given for ``env``, ``env_manager`` and ``policy`` turned into registered names.

    A class must be registered; a type ``create`` already gives must name the same class.

    >>> from ding.envs import DingEnvWrapper
    >>> named_by_classes({'policy': {'type': 'dqn'}}, {'env': DingEnvWrapper, 'env_manager': None})
    {'policy': {'type': 'dqn'}, 'env': {'type': 'ding_env_wrapper', 'import_names': ['ding.envs.gym_env']}}
    """
    given = {keyword: cls for keyword, cls in classes.items() if cls is not None}
    if not given:
        return None if create is None else dict(create)
    named: dict[str, Any] = copy.deepcopy(dict(create or {}))
    for keyword, cls in given.items():
        section = dict(named.get(keyword) or {})
        section["type"] = _registered_name(keyword, cls, section.get("type"))
        if COMPONENTS[keyword].takes_import_names and cls.__module__ != "__main__":
            imports = list(section.get("import_names") or [])
            section["import_names"] = imports if cls.__module__ in imports else [*imports, cls.__module__]
        named[keyword] = section
    return named


def check_worker_keywords(workers: Mapping[str, Any]) -> None:
    """Accept DI-engine's ``learner``, ``collector``, ``evaluator``, ``buffer``, ``reward_model``, ``world_model``.

    Each may be None; the first four may also be ding's own worker class. Anything else raises
    :class:`~ding.errors.ConfigError` saying what ding does instead.

    >>> check_worker_keywords({'learner': None, 'reward_model': object})
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: reward_model=<class 'object'>: ding has no reward models: policies learn from the \
reward the env returns; pass None
    """
    for keyword, value in workers.items():
        if value is None:
            continue
        if keyword in NOT_IN_DING:
            raise ConfigError(f"{keyword}={value!r}: {NOT_IN_DING[keyword]}; pass None")
        worker = PIPELINE_WORKERS[WORKER_KEYWORDS[keyword]]
        ours = getattr(importlib.import_module("ding.worker"), worker.class_name)
        if not (isinstance(value, type) and issubclass(value, ours) and value.__module__.startswith("ding.")):
            raise ConfigError(worker.message(f"{keyword}={value!r}"))


def _registered_name(keyword: str, cls: Any, named_type: Any) -> str:
    module, attribute, takes = CLASS_KEYWORDS[keyword]
    registry: Registry[Any] = getattr(importlib.import_module(module), attribute)
    if not isinstance(cls, type):
        raise TypeError(f"{keyword}= takes {takes} registered in {attribute}, or None; got {cls!r}")
    if named_type is not None:
        try:
            named_cls = registry.get(named_type)
        except UnknownNameError as err:
            raise UnknownNameError(f"create_config.{keyword}.type: {err}") from err
        if named_cls is not cls:
            raise ConfigError(
                f"create_config.{keyword}.type {named_type!r} is {named_cls.__qualname__}, but {keyword}= gives "
                f"{cls.__qualname__}; they must agree"
            )
        return str(named_type)
    names = [name for name, registered in registry.items() if registered is cls]
    if not names:
        raise ConfigError(
            f"{keyword}={cls.__qualname__} is not registered in {attribute}; register it with "
            f"@{attribute}.register('<name>') (ding names every component in the compiled config, so that it "
            "stands alone)"
        )
    return names[0]
