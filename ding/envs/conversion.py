"""Per-space converters between gymnasium values and ding's conventions, built once per env.

Observations: Box leaves become float32 arrays. Rewards: float32 arrays of the reward shape.
Actions: checked against the action space and cast to what the simulator takes, with errors
that name the value received and the space expected.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces

Converter = Callable[[Any], Any]


def observation_converter(space: spaces.Space[Any]) -> Converter:
    """Return a function casting observations of ``space`` to ding's float32 convention."""
    if isinstance(space, spaces.Box):
        return lambda obs: np.asarray(obs, dtype=np.float32)
    if isinstance(space, spaces.Dict):
        subs = {key: observation_converter(sub) for key, sub in space.spaces.items()}
        return lambda obs: {key: conv(obs[key]) for key, conv in subs.items()}
    if isinstance(space, spaces.Tuple):
        parts = [observation_converter(sub) for sub in space.spaces]
        return lambda obs: tuple(conv(o) for conv, o in zip(parts, obs, strict=True))
    return lambda obs: np.asarray(obs)


def reward_converter(space: spaces.Space[Any]) -> Converter:
    """Return a function giving rewards as float32 arrays of the reward space's shape."""
    shape = tuple(space.shape or (1,))
    size = int(np.prod(shape))

    def convert(reward: Any) -> np.ndarray:
        arr = np.asarray(reward, dtype=np.float32)
        if arr.size != size:
            raise ValueError(f"reward {reward!r} does not fit the declared reward shape {shape}")
        return arr.reshape(shape)

    return convert


def action_converter(space: spaces.Space[Any], owner: str = "env") -> Converter:
    """Return a function validating an agent's action for ``space`` and casting it for the simulator.

    Error messages start with ``"<owner>: "`` (nothing when ``owner`` is empty).
    """
    owner = f"{owner}: " if owner else ""
    if isinstance(space, spaces.Discrete):
        low, high = int(space.start), int(space.start + space.n)

        def discrete(action: Any) -> int:
            if type(action) is int and low <= action < high:  # the common case, without NumPy
                return action
            arr = np.asarray(action)
            if arr.size != 1 or arr.dtype.kind not in "iub":
                raise TypeError(f"{owner}action {action!r} is not a single integer; expected one of {space}")
            value = int(arr.reshape(()))
            if not low <= value < high:
                raise ValueError(f"{owner}action {value} is out of range for {space} (accepted {low}..{high - 1})")
            return value

        return discrete
    if isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
        shape, dtype = tuple(space.shape), np.dtype(space.dtype)

        def array(action: Any) -> np.ndarray:
            arr = np.asarray(action)
            if dtype.kind in "iu" and arr.dtype.kind == "f":
                raise TypeError(f"{owner}action {action!r} has dtype {arr.dtype}; {space} takes integers")
            if arr.shape != shape:
                if arr.size != int(np.prod(shape)):
                    raise ValueError(f"{owner}action of shape {arr.shape} does not fit {space} (shape {shape})")
                arr = arr.reshape(shape)
            return arr.astype(dtype, copy=False)

        return array
    return lambda action: action
