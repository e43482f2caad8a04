"""What the serial entries share: reading the input config, naming the experiment, seeding, building parts."""

from __future__ import annotations

import contextlib
import copy
import functools
import os
import random
import re
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import torch
from easydict import EasyDict

from ding.config import compile_config, read_config
from ding.config.compiler import DEFAULT_EXP_NAME
from ding.envs import get_vec_env_setting
from ding.envs.env_manager import BaseEnvManager, create_env_manager
from ding.errors import ConfigError
from ding.policy.builtin import with_builtin_import
from ding.policy.registry import POLICY_REGISTRY

SEED_SUFFIX = re.compile(r"_seed\d+$")
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


def experiment_name(config_exp_name: Any, seed: int) -> str:
    """``<name>_seed<seed>``, where a ``_seed<N>`` suffix the config's name already has is replaced.

    >>> experiment_name('cartpole_dqn_seed0', 3), experiment_name('pong', 0), experiment_name(None, 1)
    ('cartpole_dqn_seed3', 'pong_seed0', 'default_experiment_seed1')
    """
    base = config_exp_name if isinstance(config_exp_name, str) and config_exp_name else DEFAULT_EXP_NAME
    return f"{SEED_SUFFIX.sub('', base)}_seed{seed}"


def compile_for_run(
    main: Mapping[str, Any], create: Mapping[str, Any], seed: int | None, exp_name: str | None
) -> tuple[EasyDict, dict[str, Any]]:
    """The compiled config of a run, and the ``create_config`` that names its components.

    ``seed`` None takes the config's own (default 0). A built-in policy's module is added to
    ``policy.import_names``, so the policy is registered and the compiled config records where it
    comes from.
    """
    if seed is None:
        seed = main.get("seed", 0) if main.get("seed") is not None else 0
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError(f"seed must be an int, got {type(seed).__name__} {seed!r}")
    named = copy.deepcopy(dict(create))
    policy_create = named.get("policy") or {}
    if isinstance(policy_create, Mapping):
        policy_type = policy_create.get("type")
        main_policy = main.get("policy")
        if policy_type is None and isinstance(main_policy, Mapping):
            policy_type = main_policy.get("type")
        imports = policy_create.get("import_names")
        if imports is None or isinstance(imports, (list, tuple)):
            with_module = with_builtin_import(policy_type, imports)
            if with_module != list(imports or []):
                named["policy"] = {**policy_create, "import_names": with_module}
    name = exp_name if exp_name is not None else experiment_name(main.get("exp_name"), seed)
    cfg = compile_config(main, named, seed=seed, exp_name=name)
    names = {
        "env": {"type": cfg.env.type, "import_names": list(cfg.env.import_names)},
        "env_manager": {"type": cfg.env.manager.type},
        "policy": {"type": cfg.policy.type, "import_names": list(cfg.policy.import_names)},
    }
    return cfg, names


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


def set_pkg_seed(seed: int) -> None:
    """Seed Python's, numpy's and torch's global generators."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def create_policy(cfg: EasyDict, seed: int, model: Any = None) -> Any:
    """The registered policy ``cfg.policy.type``, built from ``cfg.policy`` (around ``model`` when given)."""
    policy_cls: Any = POLICY_REGISTRY.get(cfg.policy.type)
    return policy_cls(cfg.policy, model=model, seed=seed)


def create_env_managers(
    cfg: EasyDict, collect: bool = True, evaluate: bool = True
) -> tuple[BaseEnvManager | None, BaseEnvManager | None]:
    """Collector and evaluator env managers from ``cfg.env`` (``get_vec_env_setting`` and ``cfg.env.manager``)."""
    env_fn, collector_cfgs, evaluator_cfgs = get_vec_env_setting(cfg.env, collect=collect, eval_=evaluate)
    manager_cfg = dict(cfg.env.manager)
    collector = evaluator = None
    try:
        if collector_cfgs is not None:
            collector = create_env_manager(manager_cfg, [functools.partial(env_fn, cfg=c) for c in collector_cfgs])
        if evaluator_cfgs is not None:
            evaluator = create_env_manager(manager_cfg, [functools.partial(env_fn, cfg=c) for c in evaluator_cfgs])
    except BaseException:
        if collector is not None:
            collector.close()
        raise
    return collector, evaluator
