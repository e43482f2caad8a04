"""Batches of a vector env: action rows in, observation batches out (with the dtypes of the spaces)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import concatenate, create_empty_array, iterate

ARRAY_SPACES = (spaces.Discrete, spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)


def owned(obs: Any) -> Any:
    """``obs`` with its array leaves that view memory owned elsewhere (e.g. shared memory) copied.

    >>> shared = np.zeros(4)
    >>> owned(shared[:2]).flags.owndata, owned(shared) is shared
    (True, True)
    """
    if isinstance(obs, dict):
        return {key: owned(value) for key, value in obs.items()}
    if isinstance(obs, tuple):
        return tuple(owned(value) for value in obs)
    if isinstance(obs, np.ndarray) and not obs.flags.owndata:
        return obs.copy()
    return obs


def action_rows(single: spaces.Space[Any], batched: spaces.Space[Any], num_envs: int, actions: Any) -> Any:
    """``actions`` as one row per env: an array for array spaces, else a list (each value is checked by the manager).

    Raises:
        TypeError: ``actions`` is a single value, not a batch (gymnasium's vector envs raise the same).
        ValueError: The batch does not have ``num_envs`` rows of the single action space's shape.

    >>> action_rows(spaces.Discrete(2), spaces.MultiDiscrete([2, 2]), 2, [0, 1])
    array([0, 1])
    """
    if isinstance(single, ARRAY_SPACES):
        batch = np.asarray(actions)
        expected = (num_envs, *(single.shape or ()))
        if batch.ndim == 0:
            raise TypeError(f"actions must hold one row per env ({num_envs} rows of {single}), got {actions!r}")
        if batch.shape != expected:
            raise ValueError(
                f"actions must have shape {expected} (num_envs={num_envs} rows of {single}), got shape {batch.shape}"
            )
        return batch
    try:
        rows = list(iterate(batched, actions))
    except (TypeError, ValueError, KeyError, IndexError) as err:
        raise ValueError(f"actions do not fit the batched action space {batched}: {err}") from err
    if len(rows) != num_envs:
        raise ValueError(f"actions hold {len(rows)} rows for {num_envs} envs of {batched}")
    return rows


def assemble(single: spaces.Space[Any], items: list[Any]) -> Any:
    """One batch (new arrays of the space's dtypes) from one observation per env.

    >>> assemble(spaces.Box(0, 1, (2,), np.float32), [np.zeros(2, np.float32), np.ones(2, np.float32)]).dtype
    dtype('float32')
    """
    out = create_empty_array(single, n=len(items), fn=np.zeros)
    return concatenate(single, items, out)  # type: ignore[arg-type]  # an array space's "empty array" is never None


def batch_with_rows(single: spaces.Space[Any], num_envs: int, ready: Mapping[int, Any], rows: Mapping[int, Any]) -> Any:
    """The batch of every env's observation: ``rows[i]`` where given, else env ``i``'s ready observation.

    Raises:
        KeyError: An env has neither (names it).
    """
    missing = [i for i in range(num_envs) if i not in rows and i not in ready]
    if missing:
        raise KeyError(f"envs {missing} have no observation: they are neither ready nor just ended")
    return assemble(single, [rows[i] if i in rows else ready[i] for i in range(num_envs)])
