"""Data conversions between torch tensors, numpy arrays, lists and scalars, under DI-engine's names.

Importing this package does not import torch; :func:`to_tensor` and :func:`to_dtype` do when called.
"""

from ding.torch_utils.data_helper import to_dtype, to_item, to_list, to_ndarray, to_tensor

__all__ = ["to_dtype", "to_item", "to_list", "to_ndarray", "to_tensor"]
