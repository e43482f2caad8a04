"""Which env manager configurations ``ding -m bench`` measures for a config's envs on this machine, and which not.

For N collector envs on C cores: ``base`` (in the calling process); ``thread`` with one group per core;
``subprocess`` with one env per worker and with one worker per core (``envs_per_worker = ceil(N / C)``), and the
same groups with the caller stepping one of them (``step_in_caller``); ``async_subprocess`` with its defaults; and
the config's own manager when it is none of these; for a config whose manager is ``envpool``, also the pool with
each thread count from 1 to C (envpool's default is one per core: for a cheap env one thread can leave the caller a
core and run faster). With more than :data:`MAX_PROCESSES_PER_CORE` envs per core, one
process per env is left out and ``async_subprocess`` gets one worker per core. Kinds that do not fit are listed
with the reason. Each candidate has a simplicity rank: the recommendation prefers the simpler of two that run about
as fast.

Example:
    >>> found, skipped = candidates(4, 2, {'type': 'base'})
    >>> [c.label for c in found]  # doctest: +NORMALIZE_WHITESPACE
    ['base', 'thread envs_per_worker=2', 'subprocess envs_per_worker=1', 'subprocess envs_per_worker=2',
     'subprocess envs_per_worker=2 step_in_caller=True', 'async_subprocess']
    >>> [s.kind for s in skipped]
    ['envpool', 'zmq', 'ray']
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from ding.envs.env_manager import manager_default_config

TUNED_KEYS = ("type", "envs_per_worker", "step_in_caller", "wait_num", "step_wait_timeout", "num_threads")
"""The manager keys a candidate sets; a config's other manager keys are kept (where the candidate's type takes them)."""
IDENTITY_KEYS = ("import_names", "cfg_type")
MEASURING_KEYS = ("episode_num", "auto_reset")
"""Keys a measurement keeps at their defaults: it steps until its time is up, every env reset as its episode ends."""
MAX_PROCESSES_PER_CORE = 4
"""Past this many envs per core, one worker process per env is not measured."""
SIMPLICITY = ("base", "thread", "subprocess", "async_subprocess")
"""Manager types from the simplest (no process, no thread) on; a type not listed ranks after them."""
NOT_MEASURED = {
    "envpool": "builds envpool's own env from an env_id, not this config's env: only for a config whose manager is "
    "already envpool",
    "zmq": "made for workers on other machines; on one machine subprocess is its fast path",
    "ray": "made for a Ray cluster; on one machine subprocess is its fast path",
}


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One manager configuration to measure: the keys it sets, how simple it is, and whether it is the config's."""

    settings: dict[str, Any]
    rank: tuple[int, int]
    from_config: bool = False

    @property
    def type(self) -> str:
        return str(self.settings["type"])

    @property
    def label(self) -> str:
        """The type and the keys set besides it, as they would be written in ``env.manager``."""
        keys = " ".join(f"{key}={value!r}" for key, value in self.settings.items() if key != "type")
        return f"{self.type} {keys}".strip() + (" (the config's)" if self.from_config else "")


@dataclasses.dataclass(frozen=True)
class Skipped:
    """A manager kind that is not measured, and why."""

    kind: str
    reason: str


def rank_of(settings: Mapping[str, Any]) -> tuple[int, int]:
    """Simpler first: by type (:data:`SIMPLICITY`), then fewer non-default keys.

    >>> in_caller = {'type': 'subprocess', 'step_in_caller': True}
    >>> rank_of({'type': 'base'}) < rank_of({'type': 'subprocess'}) < rank_of(in_caller)
    True
    """
    kind = str(settings["type"])
    by_type = SIMPLICITY.index(kind) if kind in SIMPLICITY else len(SIMPLICITY)
    defaults = manager_default_config(kind)
    changed = sum(1 for key, value in settings.items() if key != "type" and defaults.get(key) != value)
    return by_type, changed


def _candidate(settings: dict[str, Any], from_config: bool = False) -> Candidate:
    return Candidate(settings, rank_of(settings), from_config)


def candidates(env_num: int, cores: int, config_manager: Mapping[str, Any]) -> tuple[list[Candidate], list[Skipped]]:
    """The configurations to measure for ``env_num`` envs on ``cores`` cores, and the kinds left out with why.

    ``config_manager`` is the config's compiled ``env.manager``: it is measured too when it differs from every
    candidate in the keys a candidate sets.
    """
    per_core = math.ceil(env_num / max(1, cores))
    found = [_candidate({"type": "base"})]
    skipped: list[Skipped] = []
    if env_num >= 2:
        found.append(_candidate({"type": "thread", "envs_per_worker": per_core}))
    else:
        skipped.append(Skipped("thread", "one env: a thread would only add a hand-over to base"))
    many = env_num > MAX_PROCESSES_PER_CORE * cores  # one process per env would crowd the cores
    if many:
        reason = f"{env_num} envs: one process each would be more than {MAX_PROCESSES_PER_CORE} per core"
        skipped.append(Skipped("subprocess envs_per_worker=1", reason))
    else:
        found.append(_candidate({"type": "subprocess", "envs_per_worker": 1}))
    if per_core > 1:
        found.append(_candidate({"type": "subprocess", "envs_per_worker": per_core}))
    if env_num >= 2:
        found.append(_candidate({"type": "subprocess", "envs_per_worker": per_core, "step_in_caller": True}))
    else:
        skipped.append(Skipped("subprocess step_in_caller", "one env: the caller would step it alone, as base does"))
    found.append(_candidate({"type": "async_subprocess", **({"envs_per_worker": per_core} if many else {})}))
    own = {key: config_manager[key] for key in TUNED_KEYS if key in config_manager}
    own_type = str(own.get("type", "base"))
    defaults = manager_default_config(own_type)
    own = {key: value for key, value in own.items() if key == "type" or defaults.get(key) != value}
    if own_type == "envpool":
        found.extend(_candidate({"type": "envpool", "num_threads": threads}) for threads in range(1, cores + 1))
    if not any(_same(candidate.settings, own) for candidate in found):
        found.append(_candidate(own, from_config=True))
    for kind, reason in NOT_MEASURED.items():
        if kind != own_type:
            skipped.append(Skipped(kind, reason))
    return found, skipped


def _same(settings: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    """The same configuration once each type's defaults are filled in."""
    if settings["type"] != other.get("type", "base"):
        return False
    defaults = manager_default_config(str(settings["type"]))
    return all(
        settings.get(key, defaults.get(key)) == other.get(key, defaults.get(key))
        for key in TUNED_KEYS
        if key in defaults
    )


def manager_config(candidate: Candidate, config_manager: Mapping[str, Any]) -> dict[str, Any]:
    """The manager config a candidate runs with: its keys, and the config's own settings (those set away from their
    type's defaults) that the candidate's type takes, such as ``step_timeout`` or ``context`` (not
    :data:`MEASURING_KEYS`).

    >>> manager_config(Candidate({'type': 'base'}, (0, 0)), {'type': 'subprocess', 'step_in_caller': True,
    ...                                                      'step_timeout': 5.0, 'episode_num': 1})
    {'step_timeout': 5.0, 'type': 'base'}
    """
    own_type = str(config_manager.get("type", "base"))
    own_defaults = manager_default_config(own_type)
    accepted = manager_default_config(candidate.type)
    kept = {
        key: value
        for key, value in config_manager.items()
        if key not in TUNED_KEYS
        and key not in IDENTITY_KEYS
        and key not in MEASURING_KEYS
        and key in accepted
        and own_defaults.get(key) != value
    }
    return {**kept, **candidate.settings}


__all__ = ["NOT_MEASURED", "TUNED_KEYS", "Candidate", "Skipped", "candidates", "manager_config", "rank_of"]
