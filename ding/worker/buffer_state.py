"""Replay-buffer contents as checkpoint state: NumPy values turned into tensors and back, exactly.

Checkpoints are read with ``torch.load(weights_only=True)``, which takes tensors and plain Python values
(dicts, lists, tuples, str, int, float, bool, None) but no NumPy objects. :func:`encode` turns every NumPy array
and scalar in a value into a tensor under a marker key (:data:`ARRAY_KEY`, :data:`SCALAR_KEY`) and :func:`decode`
turns them back, with the same dtype, shape and bytes. :func:`encode_samples` stores a list of samples (dicts
with the same keys) column by column: a column of same-shaped arrays, NumPy scalars of one dtype, or Python
bools / ints / floats becomes one stacked tensor, so a buffer of a million samples is a few tensors, not millions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

ARRAY_KEY = "__ding_ndarray__"
SCALAR_KEY = "__ding_npscalar__"
COLUMN_KEY = "__ding_column__"
_MARKERS = (ARRAY_KEY, SCALAR_KEY, COLUMN_KEY)
_PYTHON_TYPES: dict[str, type] = {"bool": bool, "int": int, "float": float}


def array_to_tensor(array: np.ndarray) -> torch.Tensor:
    """A tensor holding ``array``'s bytes (sharing them when the array is contiguous)."""
    if array.dtype.hasobject:
        raise TypeError(f"cannot store an object array in a checkpoint (dtype {array.dtype}, shape {array.shape})")
    if not (array.flags.c_contiguous and array.flags.writeable):  # torch shares only writable C-ordered memory
        array = array.copy(order="C")  # (np.ascontiguousarray would make a 0-d array 1-d)
    return torch.from_numpy(array)


def encode(value: Any) -> Any:
    """``value`` with every NumPy array and scalar replaced by a marked tensor (see the module docstring).

    >>> state = encode({'obs': np.arange(3, dtype=np.uint8), 'r': np.float32(0.5), 'n': [1, (2, 'x')]})
    >>> decoded = decode(state)
    >>> decoded['obs'], type(decoded['r']).__name__, decoded['n']
    (array([0, 1, 2], dtype=uint8), 'float32', [1, (2, 'x')])
    """
    if isinstance(value, np.ndarray):
        return {ARRAY_KEY: array_to_tensor(value)}
    if isinstance(value, np.generic):
        return {SCALAR_KEY: array_to_tensor(np.asarray(value))}
    if isinstance(value, Mapping):
        clash = [key for key in value if key in _MARKERS]
        if clash:
            raise ValueError(f"cannot store a dict with the reserved key {clash[0]!r} in a checkpoint")
        return {key: encode(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        items = [encode(item) for item in value]
        return items if isinstance(value, list) else tuple(items)
    if value is None or isinstance(value, (str, int, float, bool, torch.Tensor)):
        return value
    raise TypeError(f"cannot store a {type(value).__name__} in a checkpoint: {value!r}")


def decode(value: Any) -> Any:
    """The value :func:`encode` was given."""
    if isinstance(value, Mapping):
        if ARRAY_KEY in value:
            return _tensor(value[ARRAY_KEY]).numpy()
        if SCALAR_KEY in value:
            return _tensor(value[SCALAR_KEY]).numpy()[()]
        if COLUMN_KEY in value:
            raise ValueError("a column of samples outside a samples state; use decode_samples")
        return {key: decode(item) for key, item in value.items()}
    if isinstance(value, list):
        return [decode(item) for item in value]
    if isinstance(value, tuple):
        return tuple(decode(item) for item in value)
    return value


def encode_samples(samples: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A list of sample dicts as columns (see the module docstring); :func:`decode_samples` reverses it.

    >>> samples = [{'obs': np.full(2, i, np.float32), 'reward': float(i), 'done': i == 1} for i in range(2)]
    >>> state = encode_samples(samples)
    >>> [type(state['columns'][key][COLUMN_KEY]).__name__ for key in ('obs', 'reward', 'done')]
    ['Tensor', 'Tensor', 'Tensor']
    >>> back = decode_samples(state)
    >>> back[1]['obs'], back[1]['reward'], back[1]['done']
    (array([1., 1.], dtype=float32), 1.0, True)
    """
    keys = list(samples[0]) if samples else []
    if any(not isinstance(sample, Mapping) or list(sample) != keys for sample in samples):
        return {"count": len(samples), "items": encode(list(samples))}
    columns = {key: _encode_column([sample[key] for sample in samples]) for key in keys}
    return {"count": len(samples), "columns": columns}


def decode_samples(state: Mapping[str, Any]) -> list[Any]:
    """The samples :func:`encode_samples` was given."""
    count = int(state["count"])
    if "items" in state:
        items = decode(state["items"])
        if not isinstance(items, list) or len(items) != count:
            raise ValueError(f"a samples state of {count} items holds {len(items)}")
        return items
    columns = {key: _decode_column(column, count, key) for key, column in state["columns"].items()}
    return [dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)] if columns else []


def _encode_column(values: list[Any]) -> Any:
    first = values[0]
    if isinstance(first, np.ndarray) and not first.dtype.hasobject:
        if all(isinstance(v, np.ndarray) and v.shape == first.shape and v.dtype == first.dtype for v in values):
            return {COLUMN_KEY: array_to_tensor(np.stack(values)), "kind": "array"}
    elif isinstance(first, np.generic):
        if all(isinstance(v, np.generic) and v.dtype == first.dtype for v in values):
            return {COLUMN_KEY: array_to_tensor(np.array(values, dtype=first.dtype)), "kind": "scalar"}
    else:
        for name, kind in _PYTHON_TYPES.items():
            if all(type(v) is kind for v in values):
                dtype = np.dtype({"bool": np.bool_, "int": np.int64, "float": np.float64}[name])
                try:
                    array: np.ndarray = np.array(values, dtype=dtype)
                except OverflowError:  # an int beyond int64: stored item by item
                    break
                return {COLUMN_KEY: array_to_tensor(array), "kind": name}
    return {COLUMN_KEY: encode(values), "kind": "items"}


def _decode_column(column: Mapping[str, Any], count: int, key: str) -> list[Any]:
    kind, data = column["kind"], column[COLUMN_KEY]
    if kind == "items":
        values = decode(data)
    else:
        array = _tensor(data).numpy()
        if kind == "array":
            values = list(array)
        elif kind == "scalar":
            values = [array[i] for i in range(len(array))]
        elif kind in _PYTHON_TYPES:
            values = array.tolist()
        else:
            raise ValueError(f"column {key!r} has an unknown kind {kind!r}")
    if len(values) != count:
        raise ValueError(f"column {key!r} holds {len(values)} values for {count} samples")
    return values


def _tensor(value: Any) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise ValueError(f"expected a tensor in a buffer state, got {type(value).__name__}")
    return value
