"""Each env's info dict, made from the pool's info arrays: all at once for ``step``, or row by row when read.

envpool gives infos as arrays with one row per env (``env_id``, ``elapsed_step``, Atari's ``lives`` and ``ram`` ...).
``step`` hands each env a dict (:func:`info_rows`); ``step_batch`` hands :class:`PoolInfos`, a sequence that makes a
row's dict only when it is read, so a batch in which nobody reads an info costs no dict.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any, overload

import numpy as np


@dataclasses.dataclass(frozen=True)
class InfoColumn:
    """One info array of a pool: its key path in the info dict and its index in the pool's raw results."""

    path: tuple[str, ...]
    index: int


Columns = Sequence[tuple[InfoColumn, np.ndarray]]
"""A batch's info arrays, each with its column."""


def info_rows(columns: Columns, rows: int) -> list[dict[str, Any]]:
    """The info arrays as one dict per row (nested keys as nested dicts): a scalar per row as a Python object, a
    row of an array (Atari's ``ram``) as a read-only view of the pool's array, as envpool's own infos give it.

    >>> info_rows([(InfoColumn(('env_id',), 0), np.array([3, 5])), (InfoColumn(('players', 'env_id'), 1),
    ...     np.array([3, 5]))], 2)
    [{'env_id': 3, 'players': {'env_id': 3}}, {'env_id': 5, 'players': {'env_id': 5}}]
    >>> info_rows([(InfoColumn(('ram',), 0), np.array([[1, 2], [3, 4]], dtype=np.uint8))], 2)[1]['ram']
    array([3, 4], dtype=uint8)
    """
    keys, top, nested = [], [], []
    for column, values in columns:
        if len(column.path) == 1:
            keys.append(column.path[0])
            top.append(_row_values(values))
        else:
            nested.append((column.path, _row_values(values)))
    # one dict per row from the top-level columns at once, then the nested ones; every column has a value per row and
    # every row a value per key, so the zips need no strict check (which costs more than the rest of the dict here)
    infos = (
        [dict(zip(keys, row, strict=False)) for row in zip(*top, strict=False)] if top else [{} for _ in range(rows)]
    )
    for path, row_values in nested:
        head, middle, last = path[0], path[1:-1], path[-1]
        for info, value in zip(infos, row_values, strict=True):
            node = info.get(head)
            if node is None:
                node = info[head] = {}
            for key in middle:
                node = node.setdefault(key, {})
            node[last] = value
    return infos


def info_row(columns: Columns, row: int) -> dict[str, Any]:
    """Row ``row``'s info dict (as :func:`info_rows` gives it).

    >>> info_row([(InfoColumn(('lives',), 0), np.array([3, 5]))], 1)
    {'lives': 5}
    """
    info: dict[str, Any] = {}
    for column, values in columns:
        node = info
        for key in column.path[:-1]:
            node = node.setdefault(key, {})
        node[column.path[-1]] = values[row].tolist() if values.ndim == 1 else _read_only(values[row])
    return info


def _row_values(values: np.ndarray) -> list[Any]:
    """Each row's value: Python scalars for a column of scalars, read-only row views for a column of arrays."""
    if values.ndim == 1:
        return values.tolist()
    return list(_read_only(values))


def _read_only(values: np.ndarray) -> np.ndarray:
    view = values.view()
    view.flags.writeable = False
    return view


class PoolInfos(Sequence[dict[str, Any]]):
    """The info dicts of a batch's rows, each made from the arrays when first read and kept from then on.

    Example:
        >>> infos = PoolInfos([(InfoColumn(('elapsed_step',), 0), np.array([4, 9]))])
        >>> len(infos), infos[1], infos[-1] is infos[1]
        (2, {'elapsed_step': 9}, True)
        >>> [info['elapsed_step'] for info in infos]
        [4, 9]
    """

    __slots__ = ("_columns", "_made")

    def __init__(self, columns: Columns, rows: int | None = None) -> None:
        self._columns = columns
        count = rows if rows is not None else len(columns[0][1])
        self._made: list[dict[str, Any] | None] = [None] * count

    def __len__(self) -> int:
        return len(self._made)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._made)))]
        row = range(len(self._made))[index]  # IndexError past the end; negative indices count from it
        info = self._made[row]
        if info is None:
            info = self._made[row] = info_row(self._columns, row)
        return info

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self[row] for row in range(len(self._made)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (PoolInfos, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PoolInfos({list(self)!r})"
