"""An envpool pool's raw arrays as ding reads them: where each field sits, one ``recv`` as arrays, the actions it takes.

envpool's Python ``send`` / ``recv`` convert every batch through dicts and trees (a few µs per batch, the same order
as a CartPole step); ding talks to the pool's own ``_send`` / ``_recv`` (envpool 1.2.5, the ``envpool`` extra's pin),
which pass lists of arrays in the order of the task's ``_action_keys`` / ``_state_keys``. :class:`PoolLayout` reads
that order once per pool; :class:`PoolBatch` is one ``_recv`` as arrays, with nothing built per env.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.env_manager.envpool.infos import InfoColumn
from ding.envs.values.conversion import integers_below, within_bounds

RAW_ACTION_KEYS = frozenset({"env_id", "players.env_id", "action"})
"""The action keys of a one-player task with one action array: those ding sends through ``_send`` directly."""


@dataclasses.dataclass(frozen=True)
class PoolLayout:
    """Where ding's fields sit in a pool's raw ``_recv`` list, and how its actions are sent.

    Example:
        >>> keys = ['info:env_id', 'info:players.env_id', 'elapsed_step', 'done', 'reward', 'trunc', 'obs']
        >>> layout = PoolLayout.read(keys)
        >>> layout.done, layout.obs, [column.path for column in layout.info]
        (3, ((('obs',), 6),), [('env_id',), ('players', 'env_id'), ('elapsed_step',)])
    """

    env_id: int
    done: int
    trunc: int
    reward: int
    obs: tuple[tuple[tuple[str, ...], int], ...]
    """Each observation array's path in the observation (``()`` for a task with one array) and its index."""
    info: tuple[InfoColumn, ...]
    """The info arrays, as gymnasium's envpool info gives them (``elapsed_step`` included)."""

    @classmethod
    def read(cls, state_keys: Sequence[str]) -> PoolLayout:
        """The layout of a pool whose ``_recv`` returns arrays named ``state_keys`` (envpool's ``_state_keys``)."""
        index = {key: i for i, key in enumerate(state_keys)}
        obs = tuple((tuple(key.replace(":", ".").split(".")), i) for key, i in index.items() if _is_obs(key))
        info = [InfoColumn(tuple(key[5:].split(".")), i) for key, i in index.items() if key.startswith("info:")]
        info.append(InfoColumn(("elapsed_step",), index["elapsed_step"]))
        return cls(index["info:env_id"], index["done"], index["trunc"], index["reward"], obs, tuple(info))


def _is_obs(key: str) -> bool:
    return key == "obs" or key.startswith("obs:")


@dataclasses.dataclass(slots=True)
class PoolBatch:
    """The rows of one ``_recv`` as arrays, in the order the pool gave them (``env_ids`` names each row's env)."""

    env_ids: np.ndarray  # int32
    obs: Any  # an array with one row per env, or a dict of them (a Dict observation space)
    reward: np.ndarray  # float32
    done: np.ndarray  # bool: terminated or truncated
    truncated: np.ndarray  # bool
    info: list[tuple[InfoColumn, np.ndarray]]

    @classmethod
    def read(cls, layout: PoolLayout, state: Sequence[np.ndarray], dict_obs: bool) -> PoolBatch:
        """From ``_recv``'s arrays; ``dict_obs``: the observation space is a Dict (else one array stands alone)."""
        return cls(
            state[layout.env_id],
            _observation(layout.obs, state, dict_obs),
            state[layout.reward],
            state[layout.done],
            state[layout.trunc],
            [(column, state[column.index]) for column in layout.info],
        )

    @property
    def terminated(self) -> np.ndarray:
        return self.done & ~self.truncated

    def obs_rows(self) -> list[Any]:
        """Each row's observation (views of the pool's arrays)."""
        obs = self.obs
        if isinstance(obs, np.ndarray):
            return list(obs)
        return [_obs_row(obs, row) for row in range(len(self.env_ids))]


def _observation(paths: tuple[tuple[tuple[str, ...], int], ...], state: Sequence[np.ndarray], dict_obs: bool) -> Any:
    """The observation arrays nested as envpool's gymnasium face nests them (one array alone, unless a Dict space)."""
    if len(paths) == 1 and not dict_obs:
        return state[paths[0][1]]
    tree: dict[str, Any] = {}
    for path, i in paths:
        node = tree
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = state[i]
    obs: Any = tree["obs"]
    while not dict_obs and isinstance(obs, dict) and len(obs) == 1:
        obs = next(iter(obs.values()))
    return obs


def _obs_row(obs: Any, row: int) -> Any:
    if isinstance(obs, dict):
        return {key: _obs_row(value, row) for key, value in obs.items()}
    return obs[row]


def set_obs_rows(obs: Any, rows: list[int], values: list[Any]) -> None:
    """Write ``values`` (one observation each) into the rows ``rows`` of a stacked ``obs``."""
    if isinstance(obs, dict):
        for key, column in obs.items():
            set_obs_rows(column, rows, [value[key] for value in values])
        return
    for row, value in zip(rows, values, strict=True):
        obs[row] = value


def copy_obs(obs: Any) -> Any:
    """A copy of stacked observations (the pool's arrays are views ding hands on)."""
    if isinstance(obs, dict):
        return {key: copy_obs(value) for key, value in obs.items()}
    return obs.copy()


def action_dtype(space: spaces.Space[Any], pool_dtype: np.dtype[Any] | None = None) -> np.dtype[Any]:
    """The dtype the pool takes actions of ``space`` in (its spec's, else int32 for Discrete, else the space's)."""
    if pool_dtype is not None:
        return np.dtype(pool_dtype)
    return np.dtype(np.int32) if isinstance(space, spaces.Discrete) else np.dtype(space.dtype)


def action_rows(actions: Any, space: spaces.Space[Any], dtype: np.dtype[Any] | None = None) -> np.ndarray:
    """Actions as the array the pool takes (envpool wants int32 for Discrete).

    >>> action_rows([1, 0], spaces.Discrete(2)).dtype
    dtype('int32')
    """
    return np.asarray(actions, dtype=action_dtype(space, dtype))


def valid_action_rows(actions: Any, space: spaces.Space[Any], env_num: int, dtype: np.dtype[Any]) -> np.ndarray | None:
    """``actions`` as the pool's array when they are ``env_num`` valid actions as given (no clipping, no casts of
    floats to ints), else None: then each action is checked on its own, and a bad one named.

    A Discrete space's integers (from 0) are checked with one reduction: as unsigned, a negative value is out of range.

    >>> valid_action_rows(np.array([0, 1]), spaces.Discrete(2), 2, np.dtype(np.int32))
    array([0, 1], dtype=int32)
    >>> valid_action_rows(np.array([0, -1]), spaces.Discrete(2), 2, np.dtype(np.int32)) is None
    True
    """
    rows = np.asarray(actions)
    if isinstance(space, spaces.Discrete):
        if rows.shape != (env_num,) or rows.dtype.kind not in "iu" or space.start != 0:
            return None
        if not integers_below(rows, int(space.n)):
            return None
        return rows.astype(dtype, copy=False)
    if rows.shape != (env_num, *(space.shape or ())) or not within_bounds(space, rows):
        return None
    return rows.astype(dtype, copy=False)
