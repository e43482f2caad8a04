"""The current episode's history in preallocated arrays: what the ``transformers`` wrapper shows its transformers.

:class:`EpisodeHistory` keeps one column each of observations, actions and rewards, laid out like their spaces
(Box, Discrete, MultiDiscrete and MultiBinary leaves, nested in Dict and Tuple spaces). The arrays are allocated
once for an expected episode length and doubled when an episode runs longer, so recording a step writes into
existing memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.errors import SpaceKindError

_LEAVES = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)
Path = tuple[Any, ...]


def check_recordable(space: spaces.Space[Any], who: str, what: str) -> None:
    """Raise :class:`~ding.errors.SpaceKindError` unless every leaf of ``space`` is a space a history records.

    >>> check_recordable(spaces.Dict({'word': spaces.Text(5)}), 'transformers', 'observation')
    Traceback (most recent call last):
    ...
    ding.errors.SpaceKindError: transformers records Box, Discrete, MultiDiscrete and MultiBinary values \
(in Dict and Tuple spaces too); the observation space has a Text leaf at ('word',)
    """
    for path, leaf in _leaves(space):
        if not isinstance(leaf, _LEAVES):
            where = f" at {path}" if path else ""
            raise SpaceKindError(
                f"{who} records Box, Discrete, MultiDiscrete and MultiBinary values (in Dict and Tuple spaces too); "
                f"the {what} space has a {type(leaf).__name__} leaf{where}"
            )


def _leaves(space: spaces.Space[Any], path: Path = ()) -> Iterator[tuple[Path, spaces.Space[Any]]]:
    if isinstance(space, spaces.Dict):
        for key, sub in space.spaces.items():
            yield from _leaves(sub, (*path, key))
    elif isinstance(space, spaces.Tuple):
        for index, sub in enumerate(space.spaces):
            yield from _leaves(sub, (*path, index))
    else:
        yield path, space


def _nest(space: spaces.Space[Any], values: Iterator[Any]) -> Any:
    """The leaf values, in :func:`_leaves` order, nested as ``space`` is."""
    if isinstance(space, spaces.Dict):
        return {key: _nest(sub, values) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(_nest(sub, values) for sub in space.spaces)
    return next(values)


class _Column:
    """Rows of values of one space: an array per leaf, ``capacity`` rows each."""

    def __init__(self, space: spaces.Space[Any], capacity: int) -> None:
        self.space = space
        self._paths = [path for path, _ in _leaves(space)]
        self._arrays = [np.empty((capacity, *(leaf.shape or ())), dtype=leaf.dtype) for _, leaf in _leaves(space)]

    @property
    def capacity(self) -> int:
        return len(self._arrays[0])

    def write(self, row: int, value: Any) -> None:
        for path, array in zip(self._paths, self._arrays, strict=True):
            leaf = value
            for key in path:
                leaf = leaf[key]
            array[row] = np.asarray(leaf).reshape(array.shape[1:])

    def grow(self, capacity: int) -> None:
        """Keep the rows, with room for ``capacity`` of them."""
        bigger = []
        for array in self._arrays:
            new = np.empty((capacity, *array.shape[1:]), dtype=array.dtype)
            new[: len(array)] = array
            bigger.append(new)
        self._arrays = bigger

    def rows(self, stop: int, *, copy: bool) -> Any:
        """Rows ``[0, stop)`` nested as the space: read-only views, or copies."""
        parts = []
        for array in self._arrays:
            part = array[:stop].copy() if copy else array[:stop]
            if not copy:
                part.flags.writeable = False
            parts.append(part)
        return _nest(self.space, iter(parts))


class EpisodeHistory:
    """The current episode so far: ``len(history)`` steps, with one observation more (the reset's).

    ``observations``, ``actions`` and ``rewards`` are read-only views of the rows recorded (arrays, or dicts and
    tuples of arrays for nested spaces), valid until the next step; :meth:`dump` copies them. The arrays start
    with room for ``capacity`` steps and double whenever an episode outgrows them.

    Example:
        >>> box = spaces.Box(-9, 9, (2,), np.float32)
        >>> history = EpisodeHistory(box, spaces.Discrete(3), spaces.Box(-1, 1, (1,), np.float32), capacity=2)
        >>> history.start(np.zeros(2, np.float32))
        >>> for t in range(3):
        ...     history.record(t, 0.5, np.full(2, t + 1, np.float32))
        >>> len(history), history.capacity, history.actions.tolist(), history.observations[-1].tolist()
        (3, 4, [0, 1, 2], [3.0, 3.0])
    """

    def __init__(
        self,
        observation_space: spaces.Space[Any],
        action_space: spaces.Space[Any],
        reward_space: spaces.Space[Any],
        capacity: int,
    ) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) or capacity < 1:
            raise TypeError(f"EpisodeHistory capacity must be a positive int, got {capacity!r}")
        for space, what in ((observation_space, "observation"), (action_space, "action"), (reward_space, "reward")):
            check_recordable(space, "EpisodeHistory", what)
        self._obs = _Column(observation_space, int(capacity) + 1)
        self._actions = _Column(action_space, int(capacity))
        self._rewards = _Column(reward_space, int(capacity))
        self._length = 0
        self._started = False

    def start(self, observation: Any) -> None:
        """Begin a new episode with its first observation (the earlier rows are dropped, the memory kept)."""
        self._obs.write(0, observation)
        self._length = 0
        self._started = True

    def record(self, action: Any, reward: Any, observation: Any) -> None:
        """Add one step: the action taken, the reward it gave and the observation it led to."""
        if not self._started:
            raise RuntimeError("EpisodeHistory.record before start: reset the env before stepping it")
        row = self._length
        if row == self._actions.capacity:
            capacity = 2 * row
            self._actions.grow(capacity)
            self._rewards.grow(capacity)
            self._obs.grow(capacity + 1)
        self._actions.write(row, action)
        self._rewards.write(row, reward)
        self._obs.write(row + 1, observation)
        self._length = row + 1

    def __len__(self) -> int:
        return self._length

    @property
    def capacity(self) -> int:
        """Steps the arrays hold before they grow."""
        return self._actions.capacity

    @property
    def observations(self) -> Any:
        """Every observation of the episode so far, the reset's first: ``len(self) + 1`` rows."""
        return self._obs.rows(self._length + 1 if self._started else 0, copy=False)

    @property
    def actions(self) -> Any:
        """The actions taken, one row per step."""
        return self._actions.rows(self._length, copy=False)

    @property
    def rewards(self) -> Any:
        """The rewards received, one row per step."""
        return self._rewards.rows(self._length, copy=False)

    def dump(self) -> dict[str, Any]:
        """Copies of the episode so far: ``{'observations', 'actions', 'rewards'}``, arrays laid out as above."""
        return {
            "observations": self._obs.rows(self._length + 1 if self._started else 0, copy=True),
            "actions": self._actions.rows(self._length, copy=True),
            "rewards": self._rewards.rows(self._length, copy=True),
        }
