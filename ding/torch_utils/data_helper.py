"""Convert nested data between torch tensors, numpy arrays, lists and Python scalars (DI-engine's ``data_helper``).

Each function walks dicts, lists and tuples (named tuples keep their type) and converts the leaves.
torch is imported only by the functions that make tensors (:func:`to_tensor`, :func:`to_dtype`);
the others recognise tensors only when torch is already loaded, since nothing else can hold one.
An unsupported leaf raises ``TypeError`` naming its type.
"""

from __future__ import annotations

import numbers
import sys
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np


def _is_tensor(item: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(item, torch.Tensor)


def _is_namedtuple(item: Any) -> bool:
    return isinstance(item, tuple) and hasattr(item, "_fields")


def _starts_with_number(item: Sequence[Any]) -> bool:
    return isinstance(item[0], (numbers.Integral, numbers.Real))


def _unsupported(item: Any) -> TypeError:
    return TypeError(f"cannot convert an item of type {type(item).__name__}: {item!r}")


def _torch() -> Any:
    try:
        import torch
    except ImportError as err:
        raise ImportError(
            f"this conversion needs torch, which is not installed ({err}); pip install 'ding[torch]'"
        ) from err
    return torch


def to_ndarray(item: Any, dtype: Any = None) -> Any:
    """Tensors, scalars and number lists as numpy arrays (of ``dtype`` when given), through nested containers.

    A list or tuple that starts with a number becomes one array; other lists and tuples are
    converted item by item (into a list; a named tuple keeps its type); an empty one gives None.
    ``bool``, ``str`` and None are kept as they are.

    >>> to_ndarray({'obs': [1, 2], 'done': True, 'x': 2.5}, np.float32)
    {'obs': array([1., 2.], dtype=float32), 'done': True, 'x': array(2.5, dtype=float32)}
    >>> to_ndarray([np.zeros(2, np.int8), None])
    [array([0, 0], dtype=int8), None]
    """
    if isinstance(item, dict):
        return {key: to_ndarray(value, dtype) for key, value in item.items()}
    if isinstance(item, (list, tuple)):
        if len(item) == 0:
            return None
        if _starts_with_number(item):
            return np.array(item, dtype=dtype)
        if _is_namedtuple(item):
            return type(item)(*[to_ndarray(value, dtype) for value in item])
        return [to_ndarray(value, dtype) for value in item]
    if _is_tensor(item):
        array = item.detach().cpu().numpy()
        return array if dtype is None else array.astype(dtype)
    if isinstance(item, np.ndarray):
        return item if dtype is None else item.astype(dtype)
    if item is None or isinstance(item, (bool, str)):
        return item
    if np.isscalar(item):
        return np.array(item, dtype=dtype)
    raise _unsupported(item)


def to_list(item: Any) -> Any:
    """Tensors and arrays as (nested) Python lists, through dicts, lists and tuples (tuples become lists).

    >>> to_list({'a': np.arange(3), 'b': (np.float32(0.5), None), 'c': 'text'})
    {'a': [0, 1, 2], 'b': [np.float32(0.5), None], 'c': 'text'}
    """
    if item is None:
        return None
    if _is_tensor(item) or isinstance(item, np.ndarray):
        return item.tolist()
    if isinstance(item, (list, tuple)):
        return [to_list(value) for value in item]
    if isinstance(item, dict):
        return {key: to_list(value) for key, value in item.items()}
    if np.isscalar(item):
        return item
    raise _unsupported(item)


def to_tensor(item: Any, dtype: Any = None, ignore_keys: Collection[Any] = (), transform_scalar: bool = True) -> Any:
    """Arrays, scalars and number lists as torch tensors (of ``dtype`` when given), through nested containers.

    A float64 array becomes a float32 tensor when no ``dtype`` is given (DI-engine's rule); other
    arrays share their memory with the tensor. Dict values under ``ignore_keys`` stay as they are;
    ``transform_scalar=False`` keeps Python and numpy scalars. ``bool``, ``str`` and None are kept.

    >>> import torch
    >>> to_tensor({'obs': np.zeros(2), 'act': [1, 2], 'id': 'a'})
    {'obs': tensor([0., 0.]), 'act': tensor([1, 2]), 'id': 'a'}
    >>> to_tensor((np.ones(1), 3), torch.float64)
    [tensor([1.], dtype=torch.float64), tensor(3., dtype=torch.float64)]
    """
    torch = _torch()
    if isinstance(item, dict):
        return {
            key: value if key in ignore_keys else to_tensor(value, dtype, ignore_keys, transform_scalar)
            for key, value in item.items()
        }
    if isinstance(item, (list, tuple)):
        if len(item) == 0:
            return []
        if _starts_with_number(item):
            return torch.as_tensor(item) if dtype is None else torch.tensor(item, dtype=dtype)
        if _is_namedtuple(item):
            return type(item)(*[to_tensor(value, dtype) for value in item])
        return [to_tensor(value, dtype, ignore_keys, transform_scalar) for value in item]
    if isinstance(item, np.ndarray):
        if dtype is None:
            return torch.from_numpy(item.astype(np.float32)) if item.dtype == np.float64 else torch.from_numpy(item)
        return torch.from_numpy(item).to(dtype)
    if item is None or isinstance(item, (bool, str)):
        return item
    if np.isscalar(item):
        if not transform_scalar:
            return item
        return torch.as_tensor(item) if dtype is None else torch.as_tensor(item).to(dtype)
    if isinstance(item, torch.Tensor):
        return item if dtype is None else item.to(dtype)
    raise _unsupported(item)


def to_dtype(item: Any, dtype: Any) -> Any:
    """Tensors cast to the torch ``dtype``, through dicts and sequences (which become lists).

    >>> import torch
    >>> to_dtype({'t': [torch.tensor([1, 2])]}, torch.float32)
    {'t': [tensor([1., 2.])]}
    """
    torch = _torch()
    if isinstance(item, torch.Tensor):
        return item.to(dtype=dtype)
    if isinstance(item, Sequence) and not isinstance(item, (str, bytes)):
        return [to_dtype(value, dtype) for value in item]
    if isinstance(item, dict):
        return {key: to_dtype(value, dtype) for key, value in item.items()}
    raise _unsupported(item)


def to_item(data: Any, ignore_error: bool = True) -> Any:
    """One-element tensors and arrays as Python scalars, through dicts, lists and tuples (tuples become lists).

    With ``ignore_error`` (the default, as in DI-engine) a dict entry that is not a single value
    (a tensor of several elements, say) is left out of the result; without it, the conversion's
    ``ValueError`` or ``RuntimeError`` propagates.

    >>> to_item({'loss': np.array([0.5]), 'n': 3, 'batch': np.zeros(4)})
    {'loss': 0.5, 'n': 3}
    >>> to_item({'batch': np.zeros(4)}, ignore_error=False)
    Traceback (most recent call last):
    ...
    ValueError: can only convert an array of size 1 to a Python scalar
    """
    if data is None or isinstance(data, (bool, str)) or np.isscalar(data):
        return data
    if isinstance(data, np.ndarray) or _is_tensor(data):
        return data.item()
    if isinstance(data, (list, tuple)):
        return [to_item(value) for value in data]
    if isinstance(data, dict):
        converted = {}
        for key, value in data.items():
            if ignore_error:
                try:
                    converted[key] = to_item(value)
                except (ValueError, RuntimeError):  # documented: entries that are not single values are left out
                    continue
            else:
                converted[key] = to_item(value)
        return converted
    raise _unsupported(data)


__all__ = ["to_dtype", "to_item", "to_list", "to_ndarray", "to_tensor"]
