"""``tile_images``: several envs' frames as one image."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def tile_images(frames: Sequence[Any], cols: int | None = None) -> np.ndarray:
    """Lay equally shaped frames (``(H, W)`` or ``(H, W, C)`` arrays) out in a grid, row by row.

    ``cols`` defaults to ``ceil(sqrt(len(frames)))``; cells left over in the last row are black.

    Raises:
        TypeError: A frame is not an array (an env that renders nothing gives None).
        ValueError: There is no frame, frames differ in shape or dtype, or ``cols`` is not positive.

    Example:
        >>> frames = [np.full((2, 3, 3), i, np.uint8) for i in range(3)]
        >>> grid = tile_images(frames)
        >>> grid.shape, grid[0, 3, 0], grid[2, 0, 0], grid[2, 3, 0]
        ((4, 6, 3), np.uint8(1), np.uint8(2), np.uint8(0))
    """
    if not frames:
        raise ValueError("tile_images needs at least one frame")
    for i, frame in enumerate(frames):
        if not isinstance(frame, np.ndarray):
            raise TypeError(f"frame {i} is {type(frame).__name__}, not an array; does env {i} render rgb_array frames?")
    first = frames[0]
    if first.ndim not in (2, 3):
        raise ValueError(f"frames must be (H, W) or (H, W, C) arrays, got shape {first.shape}")
    odd = [(i, f.shape, f.dtype) for i, f in enumerate(frames) if f.shape != first.shape or f.dtype != first.dtype]
    if odd:
        raise ValueError(f"frames must share frame 0's shape {first.shape} and dtype {first.dtype}; differing: {odd}")
    count = len(frames)
    cols = math.ceil(math.sqrt(count)) if cols is None else cols
    if cols < 1:
        raise ValueError(f"cols must be at least 1, got {cols}")
    rows = math.ceil(count / cols)
    height, width = first.shape[:2]
    grid = np.zeros((rows * height, cols * width, *first.shape[2:]), dtype=first.dtype)
    for i, frame in enumerate(frames):
        r, c = divmod(i, cols)
        grid[r * height : (r + 1) * height, c * width : (c + 1) * width] = frame
    return grid
