"""Observation batches for a policy's model: stacked in the dtype the env's spec declares, then moved to the device.

Policies never cast observations: a uint8 frame batch crosses to the model's device as uint8 (a quarter of
float32's bytes) and the model makes it float32 (:class:`ding.model.obs_input.ObsInput`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch


def obs_tensor(
    observations: Sequence[Any], device: torch.device | str, shape: Sequence[int] | None = None
) -> torch.Tensor:
    """The observations stacked on a new leading axis, in their own dtype, as a tensor on ``device``.

    ``shape`` reshapes each observation first (a model's ``obs_shape``).

    >>> frames = [np.full((2, 2), 255, np.uint8), np.zeros((2, 2), np.uint8)]
    >>> batch = obs_tensor(frames, 'cpu')
    >>> batch.dtype, tuple(batch.shape)
    (torch.uint8, (2, 2, 2))
    >>> obs_tensor([np.zeros(3), np.ones(3)], 'cpu', shape=(3,)).dtype
    torch.float64
    """
    if shape is None:
        batch = np.stack([np.asarray(obs) for obs in observations])
    else:
        batch = np.stack([np.asarray(obs).reshape(tuple(shape)) for obs in observations])
    return torch.from_numpy(batch).to(device)
