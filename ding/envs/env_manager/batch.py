"""Values that hold several envs' data at once: stacked observations and whole-batch steps."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.values.timestep import BaseEnvTimestep


@dataclasses.dataclass(frozen=True, init=False)
class BatchTimestep:
    """One step of every env as arrays with a leading env axis (what vectorized trainers consume).

    ``obs`` holds each env's next observation: the new episode's first one where an episode ended
    and the env was reset; ``final_obs`` maps the env ids whose episode ended to its last one.
    ``env_ids`` names the env of each row (``recv`` returns some envs, in any order; ``step_batch`` every env, in
    order). It is immutable.

    Example:
        >>> batch = BatchTimestep(np.zeros((2, 3)), np.ones((2, 1)), np.zeros(2, bool), np.zeros(2, bool),
        ...     np.zeros(2, bool), [{}, {}], {}, np.array([1, 0]))
        >>> batch.obs.shape, batch.env_ids.tolist()
        ((2, 3), [1, 0])
    """

    obs: Any
    reward: np.ndarray
    done: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    info: Sequence[dict[str, Any]]
    final_obs: dict[int, Any]
    env_ids: np.ndarray

    def __init__(
        self,
        obs: Any,
        reward: np.ndarray,
        done: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray,
        info: Sequence[dict[str, Any]],
        final_obs: dict[int, Any],
        env_ids: np.ndarray | None = None,
    ) -> None:
        # Built once per batch: the fields go straight into the instance's dict (the frozen class refuses
        # attribute assignment, and its generated __init__ pays object.__setattr__ per field).
        fields = self.__dict__
        fields["obs"] = obs
        fields["reward"] = reward
        fields["done"] = done
        fields["terminated"] = terminated
        fields["truncated"] = truncated
        fields["info"] = info
        fields["final_obs"] = final_obs
        fields["env_ids"] = np.empty(0, dtype=np.int64) if env_ids is None else env_ids


@dataclasses.dataclass(frozen=True)
class ObsBatch:
    """Observations of several envs stacked on a leading axis, with the env id of each row."""

    env_ids: np.ndarray
    obs: Any


def stack_obs(items: Sequence[Any]) -> Any:
    """Stack observations (arrays, or dicts/tuples of arrays) on a new leading axis.

    >>> stack_obs([{'a': np.zeros(2)}, {'a': np.ones(2)}])['a'].shape
    (2, 2)
    """
    first = items[0]
    if isinstance(first, Mapping):
        return {key: stack_obs([item[key] for item in items]) for key in first}
    if isinstance(first, tuple):
        return tuple(stack_obs([item[i] for item in items]) for i in range(len(first)))
    return np.stack([np.asarray(item) for item in items])


def stack_timesteps(
    timesteps: Mapping[int, BaseEnvTimestep], env_ids: Sequence[int], ready: Mapping[int, Any]
) -> BatchTimestep:
    """The timesteps of ``env_ids`` as one batch; an env's row shows its ``ready`` observation where it has one.

    >>> ts = {0: BaseEnvTimestep(np.zeros(2), 1.0, True, {}), 1: BaseEnvTimestep(np.ones(2), 0.5, False, {})}
    >>> batch = stack_timesteps(ts, [0, 1], {0: np.full(2, 7.0)})  # env 0 was reset: its row is the new first obs
    >>> batch.obs.tolist(), batch.done.tolist(), sorted(batch.final_obs)
    ([[7.0, 7.0], [1.0, 1.0]], [True, False], [0])
    """
    return BatchTimestep(
        obs=stack_obs([ready[i] if i in ready else timesteps[i].obs for i in env_ids]),
        reward=np.stack([np.asarray(timesteps[i].reward) for i in env_ids]),
        done=np.array([timesteps[i].done for i in env_ids], dtype=bool),
        terminated=np.array([timesteps[i].terminated for i in env_ids], dtype=bool),
        truncated=np.array([timesteps[i].truncated for i in env_ids], dtype=bool),
        info=[timesteps[i].info for i in env_ids],
        final_obs={i: ts.obs for i, ts in timesteps.items() if ts.done},
        env_ids=np.asarray(env_ids, dtype=np.int64),
    )


def empty_stack(space: spaces.Space[Any] | None) -> Any:
    """What :func:`stack_obs` gives for no observation of ``space``: arrays with 0 rows (same structure).

    >>> empty_stack(spaces.Box(0, 1, (3,))).shape
    (0, 3)
    """
    if isinstance(space, spaces.Dict):
        return {key: empty_stack(sub) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(empty_stack(sub) for sub in space.spaces)
    if space is None or space.shape is None or space.dtype is None:
        return np.empty((0,))
    return np.empty((0, *space.shape), dtype=space.dtype)
