"""A manager's envs split into groups: group ``w`` (``envs_per_worker`` consecutive env ids) lives in worker ``w``."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class EnvGroups:
    """The env groups of a batch: which envs each worker holds, and which worker holds each env.

    >>> groups = EnvGroups.split(5, 2)
    >>> groups.groups, groups.worker_of[4], groups.rows[1]
    ([[0, 1], [2, 3], [4]], 2, slice(2, 4, None))
    >>> groups.by_worker({3: 'a', 0: 'b', 2: 'c'})
    {1: {3: 'a', 2: 'c'}, 0: {0: 'b'}}
    """

    groups: list[list[int]]
    worker_of: dict[int, int]
    rows: list[slice]
    """Each group's rows in the step buffers."""

    @classmethod
    def split(cls, env_num: int, per_worker: int) -> EnvGroups:
        groups = [list(range(s, min(s + per_worker, env_num))) for s in range(0, env_num, per_worker)]
        worker_of = {env_id: w for w, group in enumerate(groups) for env_id in group}
        return cls(groups, worker_of, [slice(group[0], group[-1] + 1) for group in groups])

    def __len__(self) -> int:
        return len(self.groups)

    def workers_of(self, env_ids: Iterable[int]) -> list[int]:
        """The workers holding ``env_ids``, in order."""
        worker_of = self.worker_of
        return sorted({worker_of[env_id] for env_id in env_ids})

    def by_worker(self, values: Mapping[int, T]) -> dict[int, dict[int, T]]:
        """``values`` (by env id) split by the worker holding each env."""
        split: dict[int, dict[int, Any]] = {}
        for env_id, value in values.items():
            split.setdefault(self.worker_of[env_id], {})[env_id] = value
        return split
