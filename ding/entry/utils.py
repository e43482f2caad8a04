"""What the serial entries share: reading the input config, naming the experiment, seeding, building parts."""

from __future__ import annotations

import contextlib
import copy
import os
from collections.abc import Iterator, Mapping
from typing import Any

import torch
from easydict import EasyDict

from ding.config import read_config
from ding.config.compiler import compile_config, seed_of
from ding.config.di_engine.layout import in_ding_terms
from ding.config.experiment import experiment_name as experiment_name
from ding.config.policy_registry import POLICY_REGISTRY, learns_on_policy
from ding.config.sections import component_names, resolve_components
from ding.envs.env_manager import BaseEnvManager, create_env_manager
from ding.envs.from_config import role_env_fns, role_manager_config
from ding.envs.values.seeding import role_seeds
from ding.errors import ConfigError, UnknownNameError
from ding.utils import set_pkg_seed as set_pkg_seed

InputConfig = tuple[Mapping[str, Any], Mapping[str, Any]] | list[Any] | str | os.PathLike[str]


def load_input_config(input_cfg: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(main_config, create_config)`` from a config file path or a pair of dicts (copied)."""
    if isinstance(input_cfg, (str, os.PathLike)):
        main, create = read_config(input_cfg)
        return dict(main), dict(create)
    if isinstance(input_cfg, (tuple, list)) and len(input_cfg) == 2:
        main, create = input_cfg
        if not isinstance(main, Mapping):
            raise ConfigError(f"main_config must be a dict, got {type(main).__name__}")
        if create is not None and not isinstance(create, Mapping):
            raise ConfigError(f"create_config must be a dict, got {type(create).__name__}")
        return copy.deepcopy(dict(main)), copy.deepcopy(dict(create or {}))
    raise TypeError(
        f"input_cfg must be a config file path or a (main_config, create_config) pair, got {type(input_cfg).__name__}"
    )


PIPELINE_MODES: dict[str, bool] = {"serial": False, "serial_onpolicy": True}
"""The training pipelines by ``ding -m`` mode, and whether each trains on-policy policies."""

PIPELINE_FUNCTIONS = {"serial": "serial_pipeline", "serial_onpolicy": "serial_pipeline_onpolicy"}


def check_pipeline_mode(main: Mapping[str, Any], create: Mapping[str, Any], mode: str) -> None:
    """Refuse a config whose policy the pipeline ``mode`` does not train, naming the mode that does.

    A policy says how it learns in its default config's ``on_policy``; one that does not say is not checked.
    An unknown policy type raises the registry's error, which lists the known types.

    >>> create = {'env': {'type': 'cartpole'}, 'policy': {'type': 'ppo'}}
    >>> check_pipeline_mode({}, create, 'serial')
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: policy 'ppo' learns on-policy, which -m serial (serial_pipeline) does not train: \
run it with ding -m serial_onpolicy (serial_pipeline_onpolicy)
    """
    if mode not in PIPELINE_MODES:
        raise ValueError(f"unknown pipeline mode {mode!r}; modes: {', '.join(PIPELINE_MODES)}")
    policy = resolve_components(main, create)["policy"]
    if policy.type is None:
        return  # compile_config says that the type is missing
    try:
        POLICY_REGISTRY.import_names(policy.import_names)
    except ImportError:
        return  # compile_config reports the module that cannot be imported, with its config key
    try:
        on_policy = learns_on_policy(policy.type)
    except UnknownNameError as err:
        raise UnknownNameError(f"policy.type: {err}") from None
    if on_policy is None or on_policy == PIPELINE_MODES[mode]:
        return
    right = next(other for other, on in PIPELINE_MODES.items() if on == on_policy)
    how = "on-policy," if on_policy else "off-policy, from a replay buffer,"
    raise ConfigError(
        f"policy {policy.type!r} learns {how} which -m {mode} ({PIPELINE_FUNCTIONS[mode]}) does not train: "
        f"run it with ding -m {right} ({PIPELINE_FUNCTIONS[right]})"
    )


def compile_for_run(
    main: Mapping[str, Any],
    create: Mapping[str, Any],
    seed: int | None,
    exp_name: str | None,
    mode: str | None = None,
) -> tuple[EasyDict, dict[str, Any]]:
    """The compiled config of a run, and the ``create_config`` that names its components.

    ``seed`` None takes the config's own (default 0). ``compile_config`` adds a built-in policy's
    module to ``policy.import_names``, so the compiled config records where the policy comes from.
    ``mode`` (a training pipeline's, see :data:`PIPELINE_MODES`) first checks that the pipeline trains
    the config's policy (:func:`check_pipeline_mode`), before anything is compiled or built. A config in DI-engine's
    layout is read into ding's terms first (:func:`~ding.config.di_engine.layout.in_ding_terms`).
    """
    main, create = in_ding_terms(main, create)
    if mode is not None:
        check_pipeline_mode(main, create, mode)
    seed = seed_of(seed if seed is not None else main.get("seed"))
    name = exp_name if exp_name is not None else experiment_name(main.get("exp_name"), seed)
    cfg = compile_config(main, create, seed=seed, exp_name=name)
    return cfg, component_names(cfg)


@contextlib.contextmanager
def torch_thread_count(threads: int | None) -> Iterator[None]:
    """Run the block with torch's intra-op thread count set to ``threads`` (None: unchanged), then restore it."""
    if threads is None:
        yield
        return
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ConfigError(f"torch_threads must be an int >= 1 or None, got {threads!r}")
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def create_policy(cfg: EasyDict, seed: int, model: Any = None) -> Any:
    """The registered policy ``cfg.policy.type``, built from ``cfg.policy`` (around ``model`` when given)."""
    policy_cls: Any = POLICY_REGISTRY.get(cfg.policy.type)
    return policy_cls(cfg.policy, model=model, seed=seed)


def create_env_managers(
    cfg: EasyDict, collect: bool = True, evaluate: bool = True
) -> tuple[BaseEnvManager | None, BaseEnvManager | None]:
    """Collector and evaluator env managers from ``cfg.env`` (its env class's collector and evaluator env configs,
    and ``cfg.env.manager``)."""
    collector_fns = role_env_fns(cfg.env, "collector") if collect else None
    evaluator_fns = role_env_fns(cfg.env, "evaluator") if evaluate else None
    collector = evaluator = None
    try:
        if collector_fns is not None:
            collector = create_env_manager(role_manager_config(cfg.env, "collector"), collector_fns)
        if evaluator_fns is not None:
            evaluator = create_env_manager(role_manager_config(cfg.env, "evaluator"), evaluator_fns)
    except BaseException:
        if collector is not None:
            collector.close()
        raise
    return collector, evaluator


def seed_env_managers(
    seed: int, cfg: EasyDict, collector: BaseEnvManager | None, evaluator: BaseEnvManager | None
) -> None:
    """Seed a run's managers from its ``seed``: :func:`~ding.envs.values.seeding.role_seeds` per role and env.

    Collector envs draw a new episode seed at each reset; evaluator envs replay theirs (``dynamic_seed=False``),
    so every evaluation of a run, and ``eval_checkpoint`` with the run's seed, plays the same starts.
    The seeds depend only on ``seed`` and the config's ``collector_env_num`` / ``evaluator_env_num``.
    """
    seeds = role_seeds(seed, {"collector": cfg.env.collector_env_num, "evaluator": cfg.env.evaluator_env_num})
    if collector is not None:
        collector.seed(seeds["collector"])
    if evaluator is not None:
        evaluator.seed(seeds["evaluator"], dynamic_seed=False)
