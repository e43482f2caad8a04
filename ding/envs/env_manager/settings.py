"""What an env manager's settings accept, the settings a manager runs with, and its seed and replay arguments.

Each manager class declares its default settings in its ``config`` class attribute, with what each key accepts
(:data:`MANAGER_CONFIG`, the keys every manager has; every key of DI-engine's managers has its meaning here, see
:data:`DI_ENGINE_KEY_FATES`); :func:`check_manager_config` adds the rules between keys. :class:`ManagerSettings`
holds the merged values a manager and its engine read where they apply, and :class:`EnvSetup` what every env is
built with besides its constructor (seeds and replay directories, from the arguments this module turns into
per-env values).
"""

from __future__ import annotations

import dataclasses
import math
import os
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from easydict import EasyDict

from ding.envs.env_manager.channels.affinity import resolve_cores
from ding.errors import ConfigError
from ding.utils.accepts import Accepts, count, non_negative, one_of, optional, satisfying
from ding.utils.value_rules import PositiveFloat, PositiveInt, conforms

RETRY_TYPES = ("reset", "renew")
CONTEXTS = ("fork", "spawn", "forkserver")
MAX_WORKER_NUM = 1024
"""The most worker processes a manager starts on this host (as many as the most envs of a role a config may have)."""
MAX_SECONDS = threading.TIMEOUT_MAX
"""The longest wait the platform's locks and queues take (about 292 years on Linux)."""


def seconds(*, note: str = "") -> Accepts:
    """A number of seconds to wait, > 0 and finite (no longer than :data:`MAX_SECONDS`), or None (the default): no
    limit."""
    rule = satisfying("a finite number of seconds > 0", lambda v: conforms(PositiveFloat, v) and v <= MAX_SECONDS)
    return optional(rule, note=note)


def _count_or_inf(value: Any) -> bool:
    return conforms(PositiveInt, value) or (conforms(float, value) and value == math.inf)


MANAGER_CONFIG: dict[str, Any] = {
    "episode_num": satisfying("a positive int or inf", _count_or_inf, default=math.inf, note="inf: no limit"),
    "max_retry": count(2, note="attempts per failure; 1 = no retry"),
    "retry_type": one_of(*RETRY_TYPES, default="reset", note="reset the failed env or renew (rebuild) it"),
    "auto_reset": True,  # reset an env inside the step that ended its episode
    "step_timeout": seconds(note="the time a step may take; set: envs run on per-env threads"),
    "reset_timeout": seconds(note="the time a reset may take; set: envs run on per-env threads"),
    "connect_timeout": seconds(note="the time workers may take to start, and any reset to answer"),
    "retry_waiting_time": non_negative(0.1, note="seconds to wait before retrying a failed reset"),
    "reset_inplace": False,  # accepted for DI-engine configs: ding always resets within the step
    "copy_on_get": True,  # observations read from shared memory are copies
    "shared_memory": False,  # observations, rewards and flags in shared memory (process managers)
    "context": one_of(*CONTEXTS, None, default=None, note="the start method of worker processes"),
    "wait_num": optional(
        satisfying("a positive int or inf", _count_or_inf, default=math.inf),
        note="results an async step waits for; inf: every env",
    ),
    "step_wait_timeout": seconds(note="the time an async step waits for wait_num results"),
    "envs_per_worker": count(1, note="envs each worker process holds"),
    "batch_size": optional(count(), note="envs recv() waits for; None: every env in flight"),
}
"""The keys every env manager has: their defaults (the base manager's) and what they accept."""
IDENTITY_KEYS = ("type", "import_names", "cfg_type")
"""Keys that name the manager rather than set it: accepted by every manager constructor, then set aside."""


@dataclasses.dataclass
class ManagerSettings:
    """A manager's settings, merged once from its declared defaults and the user's config, read where they apply.

    The manager and its engine share one instance, so a setting changed on the manager (DI-engine's
    ``manager._step_timeout = 0.3``) takes effect at its next use.

    >>> from ding.utils.accepts import plain_defaults
    >>> settings = ManagerSettings.take({**plain_defaults(MANAGER_CONFIG), "reset_timeout": 8.0})
    >>> settings.max_retry, settings.reset_wait(), settings.rest.envs_per_worker
    (2, 8.0, 1)
    """

    episode_num: float
    max_retry: int
    retry_type: str
    auto_reset: bool
    step_timeout: float | None
    reset_timeout: float | None
    connect_timeout: float | None
    retry_waiting_time: float
    reset_inplace: bool
    copy_on_get: bool
    wait_num: float | None
    step_wait_timeout: float | None
    batch_size: int | None
    rest: EasyDict
    """The other keys: how workers run (``envs_per_worker``, ``shared_memory``, ``context``, a transport's own)."""

    @classmethod
    def take(cls, merged: Mapping[str, Any]) -> ManagerSettings:
        """The settings of a merged config: its keys named above, and the rest as :attr:`rest`."""
        fields = [f.name for f in dataclasses.fields(cls) if f.name != "rest"]
        return cls(
            **{k: merged[k] for k in fields}, rest=EasyDict({k: v for k, v in merged.items() if k not in fields})
        )

    def reset_wait(self) -> float | None:
        """How long a reset may take (see :func:`reset_wait`)."""
        return reset_wait(self.reset_timeout, self.connect_timeout)

    def wait_before_retry(self) -> None:
        """Wait ``retry_waiting_time`` seconds before a failed reset is tried again."""
        if self.retry_waiting_time > 0:
            time.sleep(self.retry_waiting_time)

    def launch_timeout(self) -> float | None:
        """Seconds a worker may take to start and build its envs: ``connect_timeout``, else ``reset_timeout``."""
        return self.connect_timeout if self.connect_timeout is not None else self.reset_timeout


@dataclasses.dataclass
class EnvSetup:
    """What every env is built with besides its constructor; an engine applies it whenever it builds an env."""

    seeds: dict[int, int] = dataclasses.field(default_factory=dict)
    """Seeds by env id (:func:`expand_seeds`); envs without one are not seeded."""
    dynamic_seed: bool | None = None
    """Passed to the envs' ``seed`` when not None (:func:`seed_env`)."""
    replay_dirs: list[str] | None = None
    """One video directory per env (:func:`replay_dirs`), or None: no recording."""


DI_ENGINE_KEY_FATES: dict[str, str] = {
    "episode_num": "accepted: episodes each env plays before it is DONE (inf: no limit)",
    "max_retry": "accepted: attempts per failure (1 = no retry); past it the manager raises and stays open",
    "retry_type": "accepted: 'reset' the failed env or 'renew' (rebuild) it",
    "auto_reset": "accepted: reset an env inside the step that ended its episode",
    "step_timeout": "accepted: seconds an env step may take (base: on a per-env thread)",
    "reset_timeout": "accepted: seconds an env reset may take (base: on a per-env thread)",
    "retry_waiting_time": "accepted: seconds to wait before retrying a failed reset",
    "shared_memory": "accepted: observations, rewards and flags in shared memory",
    "copy_on_get": "accepted: observations read from shared memory are copies",
    "context": "accepted: the multiprocessing start method of the workers",
    "wait_num": "accepted: async results to wait for; inf (all envs) for sync managers",
    "step_wait_timeout": "accepted: seconds an async step waits for wait_num results",
    "connect_timeout": "accepted: seconds workers may take to start and build their envs, and any reset to answer",
    "reset_inplace": "accepted: ding always resets in the worker within the step (DI-engine's True), keeping the "
    "last observation in the timestep; False is accepted and behaves the same; True needs auto_reset",
    "cfg_type": "accepted and ignored (DI-engine's config tag)",
    "type": "accepted: the registry name of the manager",
    "import_names": "accepted: modules create_env_manager imports before building the manager",
}
"""What ding does with every key of DI-engine 0.5.3's base, sync and async subprocess manager configs."""


def check_manager_config(cfg: Mapping[str, Any], *, partial_batches: bool = False) -> None:
    """Reject manager settings that disagree with each other (each value is one its key accepts).

    ``partial_batches``: the manager returns partial batches (async), so a finite ``wait_num`` means something.
    """
    wait_num = cfg["wait_num"]
    if not partial_batches and wait_num not in (None, math.inf):
        raise ConfigError(
            f"env.manager.wait_num must be inf (every env) or None for a manager that returns whole batches, got "
            f"{wait_num!r}; the async_subprocess manager returns partial batches, as zmq and ray do with a number"
        )
    if cfg["reset_inplace"] and not cfg["auto_reset"]:
        raise ConfigError("env.manager.reset_inplace=True resets envs within the step, which needs auto_reset=True")
    resolve_cores(cfg.get("cpu_affinity"))  # cores this process may not use are refused here, not at launch


def check_identity_keys(cfg: Mapping[str, Any], names: Sequence[str]) -> None:
    """Check the keys that name a manager: ``type`` must be one of ``names``; ``import_names`` a list of modules."""
    manager_type = cfg.get("type")
    if manager_type is not None and manager_type not in names:
        raise ConfigError(f"env.manager.type is {manager_type!r}, but this manager is of type {' / '.join(names)}")
    check_import_names(cfg.get("import_names", []))


def check_import_names(modules: Any) -> None:
    """``import_names`` must be a list of module names."""
    if isinstance(modules, str) or not isinstance(modules, Sequence) or not all(isinstance(m, str) for m in modules):
        raise ConfigError(f"env.manager.import_names must be a list of module names, got {modules!r}")


def reset_wait(reset_timeout: float | None, connect_timeout: float | None) -> float | None:
    """How long a reset may take: the shorter of the two limits that are set (None: no limit).

    >>> reset_wait(None, 8), reset_wait(60.0, 8), reset_wait(None, None)
    (8, 8, None)
    """
    limits = [t for t in (reset_timeout, connect_timeout) if t is not None]
    return min(limits) if limits else None


def seed_env(env: Any, seed: int, dynamic_seed: bool | None) -> None:
    """``env.seed(seed, dynamic_seed=...)``, or ``env.seed(seed)`` when ``dynamic_seed`` is None (DI-engine's envs)."""
    if dynamic_seed is None:
        env.seed(seed)
    else:
        env.seed(seed, dynamic_seed=dynamic_seed)


def _seed_value(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"{where} (the seed of env {where[5:-1]}) must be an int, got {value!r} ({type(value).__name__})"
        )
    return int(value)


def expand_seeds(seed: int | Sequence[int] | Mapping[int, int], env_num: int) -> dict[int, int]:
    """Seeds per env id: an int gives ``seed + env_id``; a list gives one per env; a dict gives some envs theirs.

    >>> expand_seeds(10, 3), expand_seeds({1: 5}, 3)
    ({0: 10, 1: 11, 2: 12}, {1: 5})
    """
    if isinstance(seed, Mapping):
        for env_id in seed:
            if not isinstance(env_id, int) or not 0 <= env_id < env_num:
                raise ValueError(f"seed dict names env id {env_id!r}; accepted ids: 0..{env_num - 1}")
        return {int(k): _seed_value(v, f"seed[{k}]") for k, v in seed.items()}
    if isinstance(seed, (list, tuple)):
        if len(seed) != env_num:
            raise ValueError(f"seed list has {len(seed)} entries for {env_num} envs")
        return {i: _seed_value(s, f"seed[{i}]") for i, s in enumerate(seed)}
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return {i: int(seed) + i for i in range(env_num)}
    raise TypeError(f"seed must be an int, a list of ints or a dict {{env_id: int}}, got {seed!r}")


def replay_dirs(replay_path: str | Sequence[str], env_num: int) -> list[str]:
    """One replay directory per env: a list as given, or ``<path>/env<i>`` for a single path."""
    if isinstance(replay_path, str):
        return [replay_path] if env_num == 1 else [os.path.join(replay_path, f"env{i}") for i in range(env_num)]
    paths = list(replay_path)
    if len(paths) != env_num:
        raise ValueError(f"replay_path list has {len(paths)} entries for {env_num} envs")
    return paths
