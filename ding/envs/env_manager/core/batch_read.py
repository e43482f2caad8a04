"""Read several envs' step results out of the step buffers at once (one copy per array, no per-env objects).

``step_batch`` and ``recv`` of the process managers build their :class:`~ding.envs.env_manager.batch.BatchTimestep`
from this when no env of the batch failed; an env failure takes the per-env path instead.

>>> from gymnasium import spaces
>>> from ding.envs.env_manager.core.shm import BufferLayout, SharedBuffers
>>> from ding.envs.values.spaces import EnvSpaces
>>> env_spaces = EnvSpaces(spaces.Box(-1, 1, (2,)), spaces.Discrete(2), spaces.Box(-1, 1, (1,)))
>>> buffers = SharedBuffers(BufferLayout.plan(env_spaces, 3, shared=False), create=True)
>>> buffers.ready[0][:] = [[0, 0], [1, 1], [2, 2]]
>>> buffers.flags[2, FLAG_DONE] = True
>>> rows = read_rows(buffers, env_spaces.observation, [0, 2])
>>> rows.leaves[()].tolist(), rows.done.tolist()
([[0.0, 0.0], [2.0, 2.0]], [False, True])
>>> buffers.close()
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.env_manager.core.shm import (
    FLAG_DONE,
    FLAG_RESET,
    FLAG_TERMINATED,
    FLAG_TRUNCATED,
    SharedBuffers,
    build_tree,
    get_path,
)


@dataclasses.dataclass(slots=True)
class BatchRows:
    """Copies of some envs' rows of the step buffers; ``leaves`` hold the ready observations by leaf path."""

    space: spaces.Space[Any]
    leaves: dict[Any, np.ndarray]
    reward: np.ndarray
    done: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    reset: np.ndarray

    @property
    def obs(self) -> Any:
        """The observations as one tree of arrays with a leading env axis."""
        return build_tree(self.space, self.leaves.__getitem__)

    def row(self, j: int) -> Any:
        """Row ``j``'s observation: views of the batch's arrays."""
        return build_tree(self.space, lambda path: self.leaves[path][j])

    def rows_by_env(self, env_ids: Sequence[int], js: Iterable[int]) -> dict[int, Any]:
        """``{env_ids[j]: row(j)}`` for each ``j`` of ``js``; one array's rows are taken without a tree per row."""
        single = self.leaves.get(()) if len(self.leaves) == 1 else None
        if single is not None:
            return {env_ids[j]: single[j] for j in js}
        return {env_ids[j]: self.row(j) for j in js}

    def set_row(self, j: int, obs: Any, paths: Sequence[Any]) -> None:
        """Put ``obs`` (a tree of ``space``) in row ``j``."""
        for path in paths:
            self.leaves[path][j] = get_path(obs, path)


def read_rows(
    buffers: SharedBuffers, space: spaces.Space[Any], env_ids: Sequence[int], copy: bool = True, whole: bool = False
) -> BatchRows:
    """Copy the rows of ``env_ids`` from the ready buffers, rewards and flags.

    ``whole``: ``env_ids`` is known to be every env in order (else it is checked). With every env in order and
    ``copy=False``, the observations are views of the buffers instead.
    """
    whole = whole or (len(env_ids) == buffers.reward.shape[0] and all(i == j for j, i in enumerate(env_ids)))
    index: Any = slice(None) if whole else np.asarray(env_ids, dtype=np.intp)
    paths = buffers.layout.obs_paths
    view = whole and not copy
    leaves = {
        path: leaf if view else leaf[index].copy() if whole else leaf[index]
        for path, leaf in zip(paths, buffers.ready, strict=True)
    }
    flags = buffers.flags[index].astype(bool)
    return BatchRows(
        space=space,
        leaves=leaves,
        reward=buffers.reward[index].copy() if whole else buffers.reward[index],
        done=flags[:, FLAG_DONE],
        terminated=flags[:, FLAG_TERMINATED],
        truncated=flags[:, FLAG_TRUNCATED],
        reset=flags[:, FLAG_RESET],
    )
