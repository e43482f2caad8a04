"""Per-space converters between gymnasium values and the spaces an env declares, built once per env.

Observations: arrays of the dtypes the observation space declares. A simulator value already of that dtype
passes as it is (no copy); another one (a Python number, a float64 array under a float32 space) is cast.
Rewards: arrays of the reward space's dtype and shape (float32 ``(1,)`` by default). Actions: checked against
the action space — shape, dtype and bounds — and cast to what the simulator takes, with errors that name the
value received and the space expected. A Box action outside the bounds, or not finite, is refused, unless the
space is a :class:`ClippedBox` (``continuous_action_clip`` declares one): then a finite action is clipped into
the bounds. Every env and every env manager checks actions with :func:`action_converter`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.errors import ActionError

Converter = Callable[[Any], Any]

BOUND_SLACK = 1e-6
"""How far (relative to ``max(1, |bound|)``) a float action may pass a Box bound and still count as on it:
float32 rounding of an action computed in other precision. Such an action is clipped onto the bound."""

CLIP_HINT = "to clip such actions into the bounds instead, add 'continuous_action_clip' to the env's wrapper chain"


class ClippedBox(spaces.Box):
    """A Box action space whose env clips finite actions outside the bounds into them, instead of refusing them.

    It holds the same values as the Box (``contains`` and ``sample`` are the Box's); only the actions an env
    takes differ, so it equals only another ``ClippedBox`` with the same bounds.

    Example:
        >>> box = ClippedBox.of(spaces.Box(-2.0, 2.0, (1,), np.float32))
        >>> box, box == spaces.Box(-2.0, 2.0, (1,), np.float32)
        (ClippedBox(-2.0, 2.0, (1,), float32), False)
        >>> action_converter(box)(np.array([3.0]))
        array([2.], dtype=float32)
    """

    @classmethod
    def of(cls, box: spaces.Box) -> ClippedBox:
        """``box`` (same bounds, shape and dtype) as a clipping action space."""
        return cls(box.low, box.high, box.shape, box.dtype)  # type: ignore[arg-type]

    def __eq__(self, other: object, /) -> bool:
        return isinstance(other, ClippedBox) and super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]  # as Box: mutable bounds

    def __repr__(self) -> str:
        return "Clipped" + super().__repr__()


def action_bounds(space: spaces.Space[Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """The lowest and highest action of each element (Discrete: of the one value), or None for other spaces.

    >>> action_bounds(spaces.MultiDiscrete([3, 2], start=[1, 0]))
    (array([1, 0]), array([3, 1]))
    """
    if isinstance(space, spaces.Box):
        return space.low, space.high
    if isinstance(space, spaces.Discrete):
        return np.asarray(space.start), np.asarray(space.start + space.n - 1)
    if isinstance(space, spaces.MultiDiscrete):
        return space.start, space.start + space.nvec - 1
    if isinstance(space, spaces.MultiBinary):
        zeros = np.zeros(space.shape, np.int8)
        return zeros, zeros + 1
    return None


def within_bounds(space: spaces.Space[Any], values: np.ndarray) -> bool:
    """True when every action in ``values`` (one action, or actions stacked on leading axes) is within bounds.

    NaN and infinities never are (not even in a Box with infinite bounds). This is the check with which
    :func:`action_converter` passes an action unchanged.

    >>> within_bounds(spaces.Box(-1, 1, (2,)), np.array([[0.5, -1.0], [1.0, 0.0]])), within_bounds(
    ...     spaces.Box(-1, 1, (2,)), np.array([0.5, np.nan]))
    (True, False)
    """
    bounds = action_bounds(space)
    return bounds is not None and _inside(values, *bounds, _finite(*bounds))


def bounds_check(space: spaces.Space[Any]) -> Callable[[np.ndarray], bool]:
    """:func:`within_bounds` for one space, its bounds worked out once: for checking many batches of actions.

    >>> check = bounds_check(spaces.Discrete(3))
    >>> check(np.array([0, 2])), check(np.array([0, 3])), check(np.array([-1, 0])), check(np.array([0.0, 1.0]))
    (True, False, False, True)
    """
    bounds = action_bounds(space)
    if bounds is None:
        return lambda values: False
    low, high = bounds
    finite = _finite(low, high)
    if isinstance(space, spaces.Discrete) and space.start == 0:
        count = int(space.n)

        def discrete(values: np.ndarray) -> bool:
            if values.dtype.kind in "iu" and values.size:
                return integers_below(values, count)
            return _inside(values, low, high, finite)

        return discrete
    return lambda values: _inside(values, low, high, finite)


UNSIGNED = {size: np.dtype(f"u{size}") for size in (1, 2, 4, 8)}
"""The unsigned integer dtype of each integer size."""


def integers_below(values: np.ndarray, count: int) -> bool:
    """Whether every integer in ``values`` is in ``[0, count)``, with one reduction: read as unsigned, a negative
    integer is above every count.

    >>> integers_below(np.array([0, 2]), 3), integers_below(np.array([0, -1]), 3)
    (True, False)
    """
    return int(np.maximum.reduce(values.view(UNSIGNED[values.dtype.itemsize]), axis=None)) < count


def _finite(low: np.ndarray, high: np.ndarray) -> bool:
    return bool(np.isfinite(low).all() and np.isfinite(high).all())


def _inside(values: np.ndarray, low: np.ndarray, high: np.ndarray, finite_bounds: bool) -> bool:
    """:func:`within_bounds` for the space's bounds (and whether they are all finite, worked out once)."""
    if not ((values >= low) & (values <= high)).all():
        return False
    # an infinite bound lets an infinity through the comparisons
    return finite_bounds or values.dtype.kind != "f" or bool(np.isfinite(values).all())


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

    Discrete, Box, MultiDiscrete and MultiBinary actions are checked (other spaces' actions pass as given): a
    value out of range, a Box action outside the bounds (beyond :data:`BOUND_SLACK`) or not finite raises
    :class:`ActionError`, naming the value and what is accepted, and a wrong type ``TypeError``. Error messages
    start with ``"<owner>: "`` (nothing when ``owner`` is empty).

    >>> to_torque = action_converter(spaces.Box(-2.0, 2.0, (1,), np.float32), owner="Pendulum")
    >>> to_torque([1.5]), to_torque(np.array([2.0000005]))  # float rounding at a bound lands on the bound
    (array([1.5], dtype=float32), array([2.], dtype=float32))
    >>> to_torque(np.array([3.0]))
    Traceback (most recent call last):
    ...
    ding.errors.ActionError: Pendulum: action array([3.]) is outside the bounds of \
Box(-2.0, 2.0, (1,), float32): element 0 is 3.0, accepted [-2.0, 2.0]; to clip such actions into the bounds \
instead, add 'continuous_action_clip' to the env's wrapper chain
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
                raise ActionError(f"{owner}action {value} is out of range for {space} (accepted {low}..{high - 1})")
            return value

        return discrete
    if isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
        return _array_converter(space, owner)
    return lambda action: action


def _array_converter(space: spaces.Box | spaces.MultiDiscrete | spaces.MultiBinary, owner: str) -> Converter:
    shape, dtype = tuple(space.shape), np.dtype(space.dtype)
    low, high = _bounds(space)
    finite_bounds = _finite(low, high)
    settle = _out_of_bounds(space, owner)

    def array(action: Any) -> np.ndarray:
        arr = np.asarray(action)
        if dtype.kind in "iu" and arr.dtype.kind == "f":
            raise TypeError(f"{owner}action {action!r} has dtype {arr.dtype}; {space} takes integers")
        if arr.shape != shape:
            if arr.size != int(np.prod(shape)):
                raise ActionError(f"{owner}action of shape {arr.shape} does not fit {space} (shape {shape})")
            arr = arr.reshape(shape)
        if not _inside(arr, low, high, finite_bounds):  # the common case passes with this one check
            arr = settle(arr, action)
        return arr.astype(dtype, copy=False)

    return array


def _bounds(space: spaces.Box | spaces.MultiDiscrete | spaces.MultiBinary) -> tuple[np.ndarray, np.ndarray]:
    bounds = action_bounds(space)
    assert bounds is not None, "every Box, MultiDiscrete and MultiBinary has bounds"
    return bounds


def _out_of_bounds(
    space: spaces.Box | spaces.MultiDiscrete | spaces.MultiBinary, owner: str
) -> Callable[[np.ndarray, Any], np.ndarray]:
    """What becomes of an action (``arr``, as given: ``action``) that is not within the space's bounds.

    A float within :data:`BOUND_SLACK` of a Box bound is clipped onto it, and so is any finite value of a
    :class:`ClippedBox`; anything else raises an :class:`ActionError` naming the value and the bounds.
    """
    low, high = _bounds(space)
    is_box = isinstance(space, spaces.Box)
    slack = BOUND_SLACK if is_box and np.dtype(space.dtype).kind == "f" else 0.0
    lowest = low - slack * np.maximum(1.0, np.abs(low))
    highest = high + slack * np.maximum(1.0, np.abs(high))
    clips = isinstance(space, ClippedBox)

    def settle(arr: np.ndarray, action: Any) -> np.ndarray:
        if arr.dtype.kind == "f" and not np.isfinite(arr).all():
            bad = ~np.isfinite(arr)
            raise ActionError(
                f"{owner}action {action!r} is not finite ({_element(arr, bad)}); {space} takes finite values in "
                f"{_accepted(low, high, bad)}"
            )
        outside = (arr < lowest) | (arr > highest)
        if outside.any() and not clips:
            hint = f"; {CLIP_HINT}" if is_box else ""
            raise ActionError(
                f"{owner}action {action!r} is outside the {'bounds' if is_box else 'range'} of {space}: "
                f"{_element(arr, outside)}, accepted {_accepted(low, high, outside)}{hint}"
            )
        return np.clip(arr, low, high)

    return settle


def _element(arr: np.ndarray, mask: np.ndarray) -> str:
    """``"element 2 is 3.5"`` for the first element ``mask`` marks (``"element (1, 0) ..."`` in more dimensions)."""
    flat = int(np.flatnonzero(mask)[0])
    value = arr.reshape(-1)[flat]
    others = int(mask.sum()) - 1
    more = f" (and {others} more)" if others else ""
    if arr.ndim == 0:
        return f"the value is {value}"
    index = tuple(int(i) for i in np.unravel_index(flat, arr.shape))
    return f"element {index[0] if arr.ndim == 1 else index} is {value}{more}"


def _accepted(low: np.ndarray, high: np.ndarray, mask: np.ndarray) -> str:
    """The bounds as ``"[-2.0, 2.0]"``; where elements have different bounds, those of the first one ``mask`` marks."""
    lo, hi = np.broadcast_to(low, mask.shape).reshape(-1), np.broadcast_to(high, mask.shape).reshape(-1)
    if (lo == lo[0]).all() and (hi == hi[0]).all():
        return f"[{lo[0]}, {hi[0]}]"
    flat = int(np.flatnonzero(mask)[0])
    return f"[{lo[flat]}, {hi[flat]}] for that element"
