"""``cpu_affinity``: pin each local worker process to one core, so workers stay on warm caches and off each other.

A worker of a busy batch that the scheduler moves between cores starts its next step on a cold cache, and two
workers may share a core while another idles. Pinning (what Sample Factory does for its workers by default, and
envpool's ``thread_affinity_offset`` for its threads) keeps worker ``w`` on core ``cores[w % len(cores)]``. The
calling process is not pinned: it is the user's. With ``step_in_caller`` group 0 has no worker, so on two cores the
one worker gets the second core.

>>> worker_core([4, 5], 3)
5
>>> accepts_cores('auto'), accepts_cores([0]), accepts_cores([]), accepts_cores(-1)
(True, True, False, False)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ding.errors import ConfigError

AFFINITY_TEXT = "None (the OS places workers), 'auto' (the cores this process may use) or a non-empty list of core ids"


def accepts_cores(value: Any) -> bool:
    """Whether ``value`` is a ``cpu_affinity`` setting: None, ``'auto'`` or a non-empty list of ints >= 0."""
    if value is None or value == "auto":
        return True
    return (
        isinstance(value, (list, tuple))
        and len(value) > 0
        and all(isinstance(core, int) and not isinstance(core, bool) and core >= 0 for core in value)
    )


def usable_cores() -> list[int]:
    """The cores this process may run on, in order."""
    return sorted(os.sched_getaffinity(0))


def resolve_cores(setting: Any) -> list[int] | None:
    """The cores workers are pinned to for ``cpu_affinity=setting`` (None: not pinned).

    A core this process may not use is refused, naming it and the cores it may use.
    """
    if setting is None:
        return None
    usable = usable_cores()
    if setting == "auto":
        return usable
    cores = [int(core) for core in setting]
    outside = sorted(set(cores) - set(usable))
    if outside:
        raise ConfigError(
            f"env.manager.cpu_affinity={list(setting)!r} names cores {outside} this process may not use; it may use "
            f"cores {usable}, or 'auto' for all of them"
        )
    return cores


def worker_core(cores: Sequence[int], worker: int) -> int:
    """The core of worker ``worker``: the cores in turn."""
    return cores[worker % len(cores)]


def pin(pid: int, core: int) -> None:
    """Run process ``pid`` on ``core`` only."""
    os.sched_setaffinity(pid, {core})
