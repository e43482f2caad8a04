"""Model input from the env's spec: observations reach a model in the dtype the spec declares.

``compile_config`` fills ``policy.model.obs_dtype`` (the observation's dtype, ``'uint8'`` for Atari frames) and
``obs_range`` (``[low, high]`` of an integer observation, ``[0, 255]`` for frames; None for float observations)
from the env's observation space (:mod:`ding.config.shapes`). A model's :class:`ObsInput` then checks each batch
against them and makes it float32 on the model's device, after the batch crossed to it in its own dtype:

- float32 passes unchanged; other float dtypes (float64 from MuJoCo or dm_control) are cast to float32;
- integer and bool batches are cast to float32 and, with ``obs_range``, mapped from ``[low, high]`` onto ``[0, 1]``
  (``(x - low) * (1 / (high - low))`` in float32; uint8 frames give exactly ``scaled_float_frame``'s values).

A model built without ``obs_dtype`` (by hand, or for an env whose spaces are not known) takes any dtype and casts
it to float32 without scaling.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from ding.config.shapes import INPUT_KEYS
from ding.errors import ConfigError
from ding.model.common import as_shape

__all__ = ["INPUT_KEYS", "ObsInput", "input_dtype", "input_range"]


def input_dtype(value: Any) -> np.dtype[Any] | None:
    """``obs_dtype`` as a NumPy dtype (None stays None).

    >>> input_dtype('uint8'), input_dtype(None)
    (dtype('uint8'), None)
    >>> input_dtype('pixels')
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: obs_dtype must be a NumPy dtype name such as 'uint8' or 'float32', or None; got 'pixels'
    """
    if value is None:
        return None
    try:
        dtype = np.dtype(value)
    except TypeError:
        dtype = None
    if dtype is None or dtype.kind not in "biuf":
        raise ConfigError(
            f"obs_dtype must be a NumPy dtype name such as 'uint8' or 'float32', or None; got {value!r}"
        ) from None
    return dtype


def input_range(value: Any, dtype: np.dtype[Any] | None) -> tuple[float, float] | None:
    """``obs_range`` as ``(low, high)`` floats; only integer (or bool) observations have one.

    >>> input_range([0, 255], np.dtype('uint8'))
    (0.0, 255.0)
    >>> input_range([0, 1], np.dtype('float32'))
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: obs_range scales integer observations; obs_dtype float32 takes obs_range None, got [0, 1]
    """
    if value is None:
        return None
    if dtype is None or dtype.kind == "f":
        raise ConfigError(
            f"obs_range scales integer observations; obs_dtype {dtype} takes obs_range None, got {value!r}"
        )
    ok = isinstance(value, (list, tuple)) and len(value) == 2
    bounds = [float(v) for v in value] if ok and all(_is_number(v) for v in value) else None
    if bounds is None or not all(np.isfinite(bounds)) or not bounds[0] < bounds[1]:
        raise ConfigError(f"obs_range must be [low, high], two finite numbers with low < high; got {value!r}")
    return bounds[0], bounds[1]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


class ObsInput(nn.Module):
    """A model's first step: check a batch of observations and make it float32 (see the module).

    A batch whose shape (after the batch axis) is not ``obs_shape``, or whose dtype is not ``obs_dtype`` when that
    is given, is an error that names the model (``owner``), what it was built for and what it got.

    Example:
        >>> frames = ObsInput('DQN', (2, 2), 'uint8', (0, 255))
        >>> frames(torch.tensor([[[0, 255], [255, 0]]], dtype=torch.uint8))
        tensor([[[0., 1.],
                 [1., 0.]]])
        >>> ObsInput('DQN', 3, 'float64')(torch.zeros(1, 3, dtype=torch.float64)).dtype
        torch.float32
        >>> frames(torch.zeros(1, 2, 2))
        Traceback (most recent call last):
        ...
        TypeError: DQN built for obs_dtype uint8 got a batch of dtype float32 (the env's spec says uint8)
    """

    def __init__(
        self,
        owner: str,
        obs_shape: int | Sequence[int],
        obs_dtype: Any = None,
        obs_range: Sequence[float] | None = None,
    ) -> None:
        super().__init__()
        self.owner = owner
        self.obs_shape = as_shape(obs_shape)
        self.obs_dtype = input_dtype(obs_dtype)
        self.obs_range = input_range(obs_range, self.obs_dtype)
        self._torch_dtype = None if self.obs_dtype is None else torch.from_numpy(np.zeros(0, self.obs_dtype)).dtype
        self._low = 0.0
        self._scale: float | None = None
        if self.obs_range is not None:
            low, high = self.obs_range
            self._low = low
            self._scale = float(np.float32(1.0) / np.float32(high - low))  # as scaled_float_frame's 1/255

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        if tuple(obs.shape[1:]) != self.obs_shape:
            raise ValueError(
                f"{self.owner} built for obs_shape {self.obs_shape} got a batch of shape {tuple(obs.shape)}"
            )
        if self._torch_dtype is not None and obs.dtype != self._torch_dtype:
            got = str(obs.dtype).removeprefix("torch.")
            raise TypeError(
                f"{self.owner} built for obs_dtype {self.obs_dtype} got a batch of dtype {got} "
                f"(the env's spec says {self.obs_dtype})"
            )
        if obs.dtype == torch.float32:
            return obs
        x = obs.to(torch.float32)
        if self._scale is None or obs.is_floating_point():
            return x
        if self._low:
            x = x - self._low
        return x * self._scale

    def extra_repr(self) -> str:
        return f"obs_shape={self.obs_shape}, obs_dtype={self.obs_dtype}, obs_range={self.obs_range}"
