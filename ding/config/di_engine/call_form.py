"""DI-engine's call form of ``compile_config`` (compatibility): its keywords and what they become in ding.

ding's call is :func:`ding.config.compiler.compile_config` ``(main_config, create_config, seed=..., exp_name=...)``.
DI-engine's is ``compile_config(cfg, env_manager, policy, learner, ..., seed=0, auto=True, create_cfg=...)``:
:func:`compile_config` here takes both, reads the config into ding's terms (:mod:`ding.config.di_engine.layout`) and
compiles it with ding's compiler. DI-engine may name the env, env manager and policy by class (``env=CartPoleEnv``);
ding records every component by its registered name, so the compiled config stands alone: a class is looked up in
its registry and becomes ``create_config.<section>.type`` (with its module in ``import_names``). The learner,
collector, evaluator and replay buffer are always ding's own
(:data:`~ding.config.di_engine.workers.PIPELINE_WORKERS`), and ding has no reward or world models.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import pathlib
from collections.abc import Mapping
from typing import Any

from easydict import EasyDict

from ding.config import compiler
from ding.config.di_engine.files import save_config
from ding.config.di_engine.layout import in_ding_terms
from ding.config.di_engine.workers import NOT_IN_DING, PIPELINE_WORKERS, PipelineWorker
from ding.config.experiment import experiment_name, renewed_name
from ding.config.policy_registry import POLICY_REGISTRY
from ding.config.sections import COMPONENTS
from ding.envs.env_manager.factory import ENV_MANAGER_REGISTRY
from ding.envs.env_registry import ENV_REGISTRY
from ding.errors import ConfigError, UnknownNameError
from ding.utils.registry import Registry

CLASS_KEYWORDS: dict[str, tuple[Registry[Any], str, str]] = {
    "env": (ENV_REGISTRY, "ENV_REGISTRY", "a BaseEnv subclass"),
    "env_manager": (ENV_MANAGER_REGISTRY, "ENV_MANAGER_REGISTRY", "an env manager class"),
    "policy": (POLICY_REGISTRY, "POLICY_REGISTRY", "a policy class"),
}
"""Keyword (and create_config section) → (registry, its name, what it takes) for components given by class."""

WORKER_KEYWORDS: dict[str, str] = {
    "learner": "learner",
    "collector": "collector",
    "evaluator": "evaluator",
    "buffer": "replay_buffer",
}
"""DI-engine's worker keywords → the :data:`PIPELINE_WORKERS` entry they name."""


def compile_config(
    main_config: Mapping[str, Any],
    create_config: Mapping[str, Any] | type | None = None,
    policy: type | None = None,
    learner: type | None = None,
    collector: type | None = None,
    evaluator: type | None = None,
    buffer: type | None = None,
    env: type | None = None,
    reward_model: type | None = None,
    world_model: type | None = None,
    seed: int | None = None,
    auto: bool = False,
    create_cfg: Mapping[str, Any] | None = None,
    save_cfg: bool | None = None,
    save_path: str | os.PathLike[str] = "total_config.py",
    renew_dir: bool = True,
    *,
    env_manager: type | None = None,
    exp_name: str | None = None,
    require_policy: bool = True,
) -> EasyDict:
    """Compile a config given in ding's call form or in DI-engine's (see the module): ``ding.config.compile_config``.

    DI-engine's form is ``create_cfg`` (``create_config``), a class for ``env_manager`` / ``policy`` / ``env``, a
    worker keyword or ``auto=True``; ``auto`` changes nothing else (names always come from ``create_config``, or
    from ``main_config``, where a compiled config records them). In that form ``exp_name`` defaults to the
    experiment directory's name, ``<exp_name>_seed<seed>`` (:func:`ding.config.experiment.experiment_name`).
    The config is read into ding's terms (:func:`~ding.config.di_engine.layout.in_ding_terms`) and compiled by
    :func:`ding.config.compiler.compile_config`, which says what the result holds.

    ``save_cfg`` writes the compiled config into the experiment directory: ``<exp_name>/<save_path>`` and
    DI-engine's ``formatted_<save_path>``, both loadable with :func:`~ding.config.read_config` (see
    :func:`~ding.config.save_config`). When the directory exists, ``renew_dir`` picks a new one,
    ``<exp_name>_<yymmdd_HHMMSS>``, and ``exp_name`` names it. ``save_cfg=None`` (the default) means True in
    DI-engine's form and False in ding's, so ding's call never writes files by surprise.

    Example:
        >>> main = {'env': {'stop_value': 195, 'manager': {'shared_memory': False}}, 'policy': {'cuda': False}}
        >>> create = {
        ...     'env': {'type': 'cartpole', 'import_names': ['dizoo.classic_control.cartpole.envs.cartpole_env']},
        ...     'env_manager': {'type': 'base'},
        ...     'policy': {'type': 'dqn'},
        ... }
        >>> compile_config(main, create, seed=3, require_policy=False).seed
        3
        >>> compile_config(main, seed=3, auto=True, create_cfg=create, save_cfg=False).exp_name
        'default_experiment_seed3'
    """
    workers = {"learner": learner, "collector": collector, "evaluator": evaluator, "buffer": buffer}
    workers.update(reward_model=reward_model, world_model=world_model)
    classes = {"env": env, "env_manager": env_manager, "policy": policy}
    call = resolve_call(create_config, create_cfg, classes, workers)
    for flag, value in (("auto", auto), ("renew_dir", renew_dir)):
        if not isinstance(value, bool):
            raise ConfigError(f"{flag} must be a bool, got {type(value).__name__} {value!r}")
    if save_cfg is not None and not isinstance(save_cfg, bool):
        raise ConfigError(f"save_cfg must be a bool or None, got {type(save_cfg).__name__} {save_cfg!r}")
    di_engine_form = call.di_engine_form or auto
    if di_engine_form and exp_name is None and isinstance(main_config, Mapping):
        run_seed = compiler.seed_of(seed if seed is not None else main_config.get("seed"))
        exp_name = experiment_name(main_config.get("exp_name"), run_seed)
    main, create = in_ding_terms(main_config, call.create_config, require_policy=require_policy)
    cfg = compiler.compile_config(main, create, seed=seed, exp_name=exp_name, require_policy=require_policy)
    if di_engine_form if save_cfg is None else save_cfg:
        if renew_dir:
            cfg.exp_name = renewed_name(cfg.exp_name)
        save_config(cfg, pathlib.Path(cfg.exp_name, save_path), save_formatted=True)
    return cfg


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
    >>> named = named_by_classes({'policy': {'type': 'dqn'}}, {'env': DingEnvWrapper, 'env_manager': None})
    >>> named['env']
    {'type': 'ding_env_wrapper', 'import_names': ['ding.envs.bridges.from_gymnasium']}
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
        if not (isinstance(value, type) and value.__module__.startswith("ding.") and _is_worker(value, worker)):
            raise ConfigError(worker.message(f"{keyword}={value!r}"))


def _is_worker(cls: type, worker: PipelineWorker) -> bool:
    """Whether ``cls`` is ``ding.worker.<class_name>`` or a subclass of it (read from its classes' names, so the
    config layer does not import the pipeline's)."""
    return any(base.__name__ == worker.class_name and base.__module__.startswith("ding.worker") for base in cls.__mro__)


def _registered_name(keyword: str, cls: Any, named_type: Any) -> str:
    registry, attribute, takes = CLASS_KEYWORDS[keyword]
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
