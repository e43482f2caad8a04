"""DI-engine's ``ding.envs.env.base_env`` (compatibility): the env interface, its timestep and two config helpers.

``BaseEnv`` and ``BaseEnvTimestep`` are ding's; ``get_env_cls`` and ``get_vec_env_setting`` are DI-engine's helpers,
written on :func:`ding.envs.from_config.env_class`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from easydict import EasyDict

from ding.envs.base_env import BaseEnv
from ding.envs.from_config import env_class
from ding.envs.timestep import BaseEnvTimestep

__all__ = ["BaseEnv", "BaseEnvTimestep", "get_env_cls", "get_vec_env_setting"]


def get_env_cls(cfg: Mapping[str, Any]) -> type[BaseEnv]:
    """DI-engine's name for :func:`~ding.envs.from_config.env_class`: the env class an env config section names."""
    return env_class(cfg)


def get_vec_env_setting(
    cfg: Mapping[str, Any], collect: bool = True, eval_: bool = True
) -> tuple[Callable[..., BaseEnv], list[EasyDict] | None, list[EasyDict] | None]:
    """DI-engine's ``(env_fn, collector_env_cfg, evaluator_env_cfg)`` for an env config section.

    >>> env_fn, collector, evaluator = get_vec_env_setting({'type': 'ding_env_wrapper', 'env_id': 'CartPole-v1'})
    >>> env_fn.__name__, len(collector), len(evaluator)
    ('DingEnvWrapper', 8, 5)
    """
    cls = env_class(cfg)
    collector = cls.create_collector_env_cfg(cfg) if collect else None
    evaluator = cls.create_evaluator_env_cfg(cfg) if eval_ else None
    return cls, collector, evaluator
