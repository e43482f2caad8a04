"""Per-space converters between gymnasium values and the spaces an env declares, built once per env.

Observations: arrays of the dtypes the observation space declares. A simulator value already of that dtype
passes as it is (no copy); another one (a Python number, a float64 array under a float32 space) is cast.
Rewards: arrays of the reward space's dtype and shape (float32 ``(1,)`` by default). Actions: checked against
the action space and cast to what the simulator takes, with errors that name the value received and the space
expected.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces

Converter = Callable[[Any], Any]


def observation_converter(space: spaces.Space[Any]) -> Converter:
    """Return a function giving observations of ``space`` as arrays of its declared dtypes.

    >>> to_obs = observation_converter(spaces.Box(0, 255, (2,), np.uint8))
    >>> frame = np.array([3, 4], np.uint8)
    >>> to_obs(frame) is frame, to_obs([3.0, 4.0]).dtype
    (True, dtype('uint8'))
    """
    if isinstance(space, spaces.Dict):
        subs = {key: observation_converter(sub) for key, sub in space.spaces.items()}
        return lambda obs: {key: conv(obs[key]) for key, conv in subs.items()}
    if isinstance(space, spaces.Tuple):
        parts = [observation_converter(sub) for sub in space.spaces]
        return lambda obs: tuple(conv(o) for conv, o in zip(parts, obs, strict=True))
    if space.dtype is None:
        return np.asarray
    dtype = np.dtype(space.dtype)

    def convert(obs: Any) -> np.ndarray:
        if type(obs) is np.ndarray and (obs.dtype is dtype or obs.dtype == dtype):  # ``is``: the cheap common case
            return obs
        return np.asarray(obs, dtype=dtype)

    return convert


def reward_converter(space: spaces.Space[Any]) -> Converter:
    """Return a function giving rewards as arrays of the reward space's dtype and shape.

    >>> reward_converter(spaces.Box(-1, 1, (1,), np.float32))(0.5)
    array([0.5], dtype=float32)
    """
    shape = tuple(space.shape or (1,))
    dtype = np.dtype(space.dtype) if space.dtype is not None else np.dtype(np.float32)
    size = int(np.prod(shape))
    one, flat = size == 1, shape == (1,)

    def convert(reward: Any) -> np.ndarray:
        if one and isinstance(reward, (float, int)):  # a Python number (NumPy's float64 included): one cheap call
            arr = np.array(reward, dtype, ndmin=1)
            return arr if flat else arr.reshape(shape)
        arr = np.asarray(reward, dtype=dtype)
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
            kind = type(action)
            if kind is int and low <= action < high:  # the common case, without NumPy
                return action
            if (kind is np.ndarray or isinstance(action, np.integer)) and action.dtype.kind in "iu":
                try:
                    value = action.item()  # one integer, read without a copy; more than one raises
                except ValueError:
                    value = None  # refused below, with the message every wrong action gets
                if value is not None and low <= value < high:
                    return value
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
