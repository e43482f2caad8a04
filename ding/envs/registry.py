"""``ENV_REGISTRY`` and ``get_vec_env_setting``: how configs name env classes."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from easydict import EasyDict

from ding.envs.base_env import BaseEnv
from ding.utils.registry import Registry


def _check_env_class(name: str, cls: Any) -> None:
    if not (isinstance(cls, type) and issubclass(cls, BaseEnv)):
        raise TypeError(f"env {name!r} must be a BaseEnv subclass, got {cls!r}")


ENV_REGISTRY: Registry[type[BaseEnv]] = Registry("env", validator=_check_env_class)

BUILTIN_ENV_MODULES = (
    "ding.envs.gym_env",
    "ding.envs.multitask_env",
    "ding.envs.unittest_envs",
    "ding.envs.multi_agent.env",
    "ding.envs.spare_envs",
)


def env_class(env_cfg: Mapping[str, Any]) -> type[BaseEnv]:
    """Import ``env_cfg.import_names`` and return the class that builds the env ``env_cfg`` describes.

    That is the class registered as ``env_cfg.type``; when the config names a wrapper chain (``env_wrapper``) that
    the class does not apply itself, the class that puts the chain around it
    (:func:`~ding.envs.chained_env.with_config_chain`).
    """
    from ding.envs.chained_env import with_config_chain  # it builds on DingEnvWrapper, which registers itself here

    ENV_REGISTRY.import_names(BUILTIN_ENV_MODULES)
    ENV_REGISTRY.import_names(env_cfg.get("import_names") or [])
    return with_config_chain(ENV_REGISTRY.get(env_cfg.get("type")), env_cfg)  # type: ignore[arg-type]


def get_env_cls(cfg: Mapping[str, Any]) -> type[BaseEnv]:
    """DI-engine's name for :func:`env_class`: the env class an env config section names."""
    return env_class(cfg)


def get_vec_env_setting(
    cfg: Mapping[str, Any], collect: bool = True, eval_: bool = True
) -> tuple[Callable[..., BaseEnv], list[EasyDict] | None, list[EasyDict] | None]:
    """DI-engine's ``(env_fn, collector_env_cfg, evaluator_env_cfg)`` for an env config section."""
    cls = env_class(cfg)
    collector = cls.create_collector_env_cfg(cfg) if collect else None
    evaluator = cls.create_evaluator_env_cfg(cfg) if eval_ else None
    return cls, collector, evaluator
