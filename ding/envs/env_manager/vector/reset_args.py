"""The arguments of a vector env's ``reset``, checked as gymnasium's vector envs check them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np


def reset_env_ids(options: Mapping[str, Any] | None, num_envs: int) -> list[int]:
    """The envs a reset concerns: those ``options['reset_mask']`` selects, else every env.

    Raises:
        TypeError: ``options`` is not a mapping, or the mask is not a bool array.
        ValueError: ``options`` holds other keys (ding envs reset without options), or the mask has the wrong
            shape or selects no env.

    >>> reset_env_ids({'reset_mask': np.array([True, False, True])}, 3)
    [0, 2]
    """
    if options is None:
        return list(range(num_envs))
    if not isinstance(options, Mapping):
        raise TypeError(f"reset options must be a dict, got {type(options).__name__}")
    unknown = sorted(set(options) - {"reset_mask"})
    if unknown:
        raise ValueError(f"reset options accept only 'reset_mask' (ding envs reset without options), got {unknown}")
    if "reset_mask" not in options:
        return list(range(num_envs))
    mask = options["reset_mask"]
    if not isinstance(mask, np.ndarray):
        raise TypeError(f"`options['reset_mask']` must be a numpy array, got {type(mask)}")
    if mask.shape != (num_envs,):
        raise ValueError(f"`options['reset_mask']` must have shape `({num_envs},)`, got {mask.shape}")
    if mask.dtype != np.bool_:
        raise TypeError(f"`options['reset_mask']` must have `dtype=np.bool_`, got {mask.dtype}")
    if not mask.any():
        raise ValueError(
            f"`options['reset_mask']` must contain a boolean array with at least one True value, got reset_mask={mask}"
        )
    return [int(i) for i in np.flatnonzero(mask)]


def reset_seeds(seed: int | Sequence[int | None] | None, num_envs: int, env_ids: Sequence[int]) -> dict[int, int]:
    """The seed of each env in ``env_ids`` that gets one: ``seed + i`` for an int, the list's entry for a list.

    Raises:
        TypeError: ``seed`` is neither an int, a list of ints (or None), nor None.
        ValueError: A list does not hold one entry per env.

    >>> reset_seeds(10, 3, [0, 2]), reset_seeds([5, None, 7], 3, [0, 1, 2])
    ({0: 10, 2: 12}, {0: 5, 2: 7})
    """
    if seed is None:
        return {}
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return {i: int(seed) + i for i in env_ids}
    if isinstance(seed, (list, tuple)):
        if len(seed) != num_envs:
            raise ValueError(f"a seed list needs one entry per env ({num_envs}), got {len(seed)}")
        bad = [s for s in seed if s is not None and (isinstance(s, bool) or not isinstance(s, (int, np.integer)))]
        if bad:
            raise TypeError(f"a seed list holds ints or None, got {bad}")
        return {i: int(s) for i, s in enumerate(seed) if i in env_ids and s is not None}
    raise TypeError(f"seed must be an int, a list of ints (or None) per env, or None; got {seed!r}")
