"""What an envpool task is, read from ``envpool.make_spec`` without building a pool.

envpool (the ``envpool`` extra) is imported here and only here; a missing install is reported with
the command that adds it. :func:`pool_spaces` gives ding's spaces of a task; :func:`pool_options`
checks a config's envpool keyword arguments against the task's own options.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import warnings
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Any

from ding.envs.values.spaces import DEFAULT_REWARD_SPACE, EnvSpaces
from ding.errors import ConfigError

MANAGED_OPTIONS = frozenset({"num_envs", "batch_size", "seed", "env_seed", "gym_reset_return_info", "base_path"})
"""envpool options the manager sets itself (env count, seeds, the reset API); a config may not give them."""

INT32_LIMIT = 2**31 - 1
"""envpool takes seeds in ``(-INT32_LIMIT, INT32_LIMIT)``."""


def import_envpool() -> ModuleType:
    """The ``envpool`` module, or a :class:`~ding.errors.ConfigError` saying how to install it."""
    try:
        import envpool
    except ImportError as err:
        raise ConfigError(
            "env.manager.type='envpool' needs the envpool package: pip install 'ding[envpool]' "
            "(envpool 1.2.5, Python <= 3.11)"
        ) from err
    return envpool


@contextlib.contextmanager
def quiet_box_casts() -> Iterator[None]:
    """Silence gymnasium's warning about envpool's float64 Box bounds cast to float32 (it builds spaces lazily)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*precision lowered by casting to float32", category=UserWarning)
        yield


@functools.cache
def task_ids() -> tuple[str, ...]:
    """Every task id envpool knows (``envpool.list_all_envs()``)."""
    return tuple(import_envpool().list_all_envs())


def check_task(task_id: Any) -> str:
    """``task_id`` if envpool has it, else an error naming it, close matches and where the list is.

    >>> check_task('CartPole-v1')
    'CartPole-v1'
    """
    if not isinstance(task_id, str) or task_id not in task_ids():
        close = difflib.get_close_matches(str(task_id), task_ids(), n=5)
        hint = f"; close matches: {', '.join(close)}" if close else ""
        raise ConfigError(
            f"env.manager.env_id {task_id!r} is not an envpool task{hint} "
            f"(envpool.list_all_envs() lists all {len(task_ids())})"
        )
    return task_id


@functools.cache
def _spec(task_id: str, options: tuple[tuple[str, Any], ...]) -> Any:
    with quiet_box_casts():
        return import_envpool().make_spec(task_id, **dict(options))


def task_options(task_id: str) -> tuple[str, ...]:
    """The options a config may give ``task_id`` (its spec's fields less the ones the manager sets).

    >>> 'max_episode_steps' in task_options('CartPole-v1'), 'seed' in task_options('CartPole-v1')
    (True, False)
    """
    fields = _spec(check_task(task_id), ()).config._fields
    return tuple(name for name in fields if name not in MANAGED_OPTIONS)


def pool_options(task_id: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` checked against the task's own: an unknown or manager-set key raises, naming the accepted ones."""
    accepted = task_options(task_id)
    for key in options:
        if key in MANAGED_OPTIONS:
            raise ConfigError(
                f"env.manager.{key} is set by the envpool manager (env count from the envs, seeds from seed()); "
                "remove it from the config"
            )
        if key not in accepted:
            raise ConfigError(
                f"env.manager.{key} is not an option of envpool task {task_id!r}; its options: {', '.join(accepted)}"
            )
    return dict(options)


def pool_spaces(task_id: str, options: Mapping[str, Any]) -> EnvSpaces:
    """ding's spaces of one env of the task, from ``envpool.make_spec`` (no pool is built).

    >>> pool_spaces('CartPole-v1', {}).observation.shape, pool_spaces('Pong-v5', {'stack_num': 2}).observation.shape
    ((4,), (2, 84, 84))
    """
    spec = _spec(check_task(task_id), tuple(sorted(pool_options(task_id, options).items())))
    with quiet_box_casts():
        return EnvSpaces(spec.gymnasium_observation_space, spec.gymnasium_action_space, DEFAULT_REWARD_SPACE)


def envpool_seed(seed: int) -> int:
    """A ding seed (any int) as a seed envpool accepts (a signed 32-bit value).

    >>> envpool_seed(7), envpool_seed(2**32 - 1)
    (7, 1)
    """
    return int(seed) % INT32_LIMIT
