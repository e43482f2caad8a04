"""One ``recv`` of an envpool pool as ding reads it: arrays by row, each row's info dict, the env ids."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces


@dataclasses.dataclass
class PoolBatch:
    """The rows of one ``recv``, in the order the pool gave them (``env_ids`` names each row's env)."""

    env_ids: list[int]
    obs: Any
    reward: np.ndarray  # float32, one value per row
    terminated: np.ndarray  # bool
    truncated: np.ndarray  # bool
    infos: list[dict[str, Any]]

    @classmethod
    def read(cls, received: tuple[Any, Any, Any, Any, Mapping[str, Any]]) -> PoolBatch:
        """From ``pool.recv()``'s ``(obs, reward, terminated, truncated, info)``."""
        obs, reward, terminated, truncated, info = received
        env_ids = np.asarray(info["env_id"]).tolist()
        return cls(
            env_ids,
            obs,
            np.asarray(reward, dtype=np.float32),
            np.asarray(terminated, dtype=bool),
            np.asarray(truncated, dtype=bool),
            info_rows(info, len(env_ids)),
        )

    def in_env_order(self) -> PoolBatch:
        """The same rows sorted by env id (a pool may return them in any order)."""
        if self.env_ids == sorted(self.env_ids):
            return self
        order = np.argsort(self.env_ids, kind="stable")
        return PoolBatch(
            [self.env_ids[i] for i in order],
            self.obs[order],
            self.reward[order],
            self.terminated[order],
            self.truncated[order],
            [self.infos[i] for i in order],
        )


def info_rows(info: Mapping[str, Any], rows: int) -> list[dict[str, Any]]:
    """The pool's info (arrays with one row per env, nested dicts likewise) as one dict per row.

    >>> info_rows({'env_id': np.array([3, 5]), 'players': {'env_id': np.array([3, 5])}}, 2)
    [{'env_id': 3, 'players': {'env_id': 3}}, {'env_id': 5, 'players': {'env_id': 5}}]
    """
    keys = list(info)
    columns = [
        info_rows(value, rows) if isinstance(value, Mapping) else np.asarray(value).tolist() for value in info.values()
    ]
    return [dict(zip(keys, values, strict=True)) for values in zip(*columns, strict=True)] if keys else [{}] * rows


def action_rows(actions: Any, space: spaces.Space[Any]) -> np.ndarray:
    """Actions as the array the pool takes (envpool wants int32 for Discrete)."""
    dtype = np.int32 if isinstance(space, spaces.Discrete) else space.dtype
    return np.asarray(actions, dtype=dtype)
