"""to_ndarray, to_list, to_tensor, to_dtype, to_item: DI-engine's conversions through nested data."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np
import pytest
import torch

from ding.torch_utils import to_dtype, to_item, to_list, to_ndarray, to_tensor

Pair = namedtuple("Pair", ["x", "y"])


def nested() -> dict[str, Any]:
    return {
        "tensor": torch.arange(4, dtype=torch.float32),
        "array": np.arange(3, dtype=np.int16),
        "numbers": [1, 2, 3],
        "tuple": (np.zeros(2), torch.ones(2)),
        "bool": True,
        "int": 10,
        "float": 2.5,
        "str": "text",
        "none": None,
        "inner": {"t": torch.zeros(2, 2)},
    }


class Unsupported:
    pass


def test_to_ndarray_converts_every_leaf_and_keeps_bools_strings_and_none() -> None:
    out = to_ndarray(nested())
    assert isinstance(out["tensor"], np.ndarray) and out["tensor"].dtype == np.float32
    assert out["array"].dtype == np.int16 and out["numbers"].tolist() == [1, 2, 3]
    assert isinstance(out["tuple"], list) and isinstance(out["tuple"][1], np.ndarray)
    assert out["int"].shape == () and out["int"] == 10 and isinstance(out["float"], np.ndarray)
    assert out["bool"] is True and out["str"] == "text" and out["none"] is None
    assert out["inner"]["t"].shape == (2, 2)


def test_to_ndarray_with_a_dtype_casts_every_array() -> None:
    out = to_ndarray({"a": [torch.randn(5) for _ in range(3)], "b": 3, "c": np.arange(2)}, np.float32)
    assert [a.dtype for a in out["a"]] == [np.float32] * 3 and out["a"][0].shape == (5,)
    assert out["b"].dtype == np.float32 and out["c"].dtype == np.float32


def test_to_ndarray_detaches_tensors_that_require_grad() -> None:
    weights = torch.ones(3, requires_grad=True)
    assert to_ndarray(weights * 2).tolist() == [2.0, 2.0, 2.0]


def test_to_ndarray_keeps_named_tuples_and_gives_none_for_an_empty_list() -> None:
    out = to_ndarray(Pair(torch.zeros(1), [torch.ones(1)]))
    assert type(out) is Pair and isinstance(out.x, np.ndarray) and isinstance(out.y[0], np.ndarray)
    assert to_ndarray([]) is None


def test_to_list_converts_tensors_and_arrays_to_lists() -> None:
    out = to_list(nested())
    assert out["tensor"] == [0.0, 1.0, 2.0, 3.0] and out["array"] == [0, 1, 2]
    assert out["tuple"] == [[0.0, 0.0], [1.0, 1.0]] and out["inner"] == {"t": [[0.0, 0.0], [0.0, 0.0]]}
    assert (out["bool"], out["int"], out["float"], out["str"], out["none"]) == (True, 10, 2.5, "text", None)


def test_to_tensor_converts_every_leaf() -> None:
    out = to_tensor(nested())
    assert out["array"].dtype == torch.int16 and out["numbers"].tolist() == [1, 2, 3]
    assert out["tuple"][0].dtype == torch.float32  # float64 arrays become float32 tensors, as in DI-engine
    assert out["int"].item() == 10 and out["bool"] is True and out["str"] == "text" and out["none"] is None
    assert torch.equal(out["tensor"], torch.arange(4.0))


def test_to_tensor_shares_memory_with_arrays_it_does_not_cast() -> None:
    array = np.zeros(3, np.int64)
    tensor = to_tensor(array)
    array[0] = 7
    assert tensor[0].item() == 7


def test_to_tensor_with_dtype_ignore_keys_and_scalars_kept() -> None:
    out = to_tensor({"i": 10, "raw": np.zeros(2), "a": np.zeros(2)}, torch.int32, ignore_keys=["raw"])
    assert out["i"].dtype == torch.int32 and out["a"].dtype == torch.int32
    assert isinstance(out["raw"], np.ndarray)
    assert to_tensor({"i": 10}, transform_scalar=False) == {"i": 10}
    pair = to_tensor(Pair(np.random.random(3), 4), torch.float32)
    assert type(pair) is Pair and pair.x.dtype == torch.float32 and pair.y.dtype == torch.float32
    assert to_tensor([]) == []


def test_to_dtype_casts_tensors_through_sequences_and_dicts() -> None:
    out = to_dtype({"t": [torch.randint(0, 10, (3, 5))], "u": torch.zeros(1, dtype=torch.int8)}, torch.float64)
    assert out["t"][0].dtype == torch.float64 and out["u"].dtype == torch.float64


def test_to_item_gives_python_scalars_and_drops_entries_that_are_not_single_values() -> None:
    data = {"tensor": torch.randn(1), "list": [True, torch.randn(1)], "array": np.random.randn(1), "none": None}
    out = to_item(data)
    assert all(np.isscalar(out[key]) for key in ("tensor", "array")) and np.isscalar(out["list"][-1])
    assert out["none"] is None
    assert to_item({"a": torch.randn(4), "b": torch.rand(1)}).keys() == {"b"}
    with pytest.raises((ValueError, RuntimeError)):
        to_item({"a": torch.randn(4), "b": torch.rand(1)}, ignore_error=False)


@pytest.mark.parametrize(
    "convert",
    [to_ndarray, to_list, to_tensor, lambda item: to_dtype(item, torch.float32), to_item],
    ids=["to_ndarray", "to_list", "to_tensor", "to_dtype", "to_item"],
)
def test_unsupported_items_raise_type_error_naming_the_type(convert: Any) -> None:
    with pytest.raises(TypeError, match="cannot convert an item of type Unsupported"):
        convert({"x": [Unsupported()]})


def test_to_tensor_rejects_a_set_and_to_dtype_a_string() -> None:
    with pytest.raises(TypeError, match="type set"):
        to_tensor({1, 2}, torch.int)
    with pytest.raises(TypeError, match="type str"):
        to_dtype("abc", torch.float32)
