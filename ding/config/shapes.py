"""Model shapes and input from env spaces: fill ``policy.model``'s spec keys and check hand-typed ones.

The shapes follow DI-engine's model configs: a 1-D observation or Box action of size ``n`` is the
int ``n`` (``obs_shape=4`` for CartPole); ``Discrete(n)`` is ``n``; ``MultiDiscrete`` is a list of
ints; a multi-dimensional Box is a tuple such as ``(4, 84, 84)``; ``Dict`` and ``Tuple`` spaces
give a dict or tuple of shapes.

The input keys tell the model what values arrive (:mod:`ding.model.obs_input`): ``obs_dtype`` is the
observation's dtype name (``'uint8'`` for Atari frames, ``'float32'`` for CartPole) and ``obs_range`` the
``[low, high]`` an integer observation lies in (``[0, 255]`` for frames), which the model scales to
``[0, 1]``; float observations have ``obs_range`` None. Dict and Tuple observations give them per entry.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.values.spaces import EnvSpaces, Shape, is_flat_shape, space_to_shape
from ding.errors import ConfigError

SHAPE_KEYS = ("obs_shape", "action_shape")
INPUT_KEYS = ("obs_dtype", "obs_range")
MODEL_SPEC_KEYS = (*SHAPE_KEYS, *INPUT_KEYS)
"""Every ``policy.model`` key filled from the env's spaces."""


def with_model_spec_keys(defaults: dict[str, Any], spec_keys: Sequence[str] = MODEL_SPEC_KEYS) -> dict[str, Any]:
    """``defaults`` whose non-empty ``model`` section also has ``spec_keys`` (None: filled from the env's spaces).

    >>> with_model_spec_keys({'model': {'hidden': 64}}, ('obs_shape',))
    {'model': {'obs_shape': None, 'hidden': 64}}
    """
    model = defaults.get("model")
    if isinstance(model, Mapping) and model:
        defaults["model"] = {**dict.fromkeys(spec_keys), **model}
    return defaults


def model_shape(space: spaces.Space[Any]) -> Shape:
    """The shape a model config gives for ``space``: like ``space_to_shape``, but a 1-D shape ``(n,)`` is ``n``.

    >>> model_shape(spaces.Box(0, 1, (4,))), model_shape(spaces.Discrete(2)), model_shape(spaces.Box(0, 1, (2, 3)))
    (4, 2, (2, 3))
    >>> model_shape(spaces.MultiDiscrete([3, 4]))
    [3, 4]
    """
    shape = space_to_shape(space)
    if isinstance(shape, tuple) and is_flat_shape(shape) and len(shape) == 1:  # a Box (n,), not a Tuple of one space
        return int(shape[0])
    return shape


def model_input(space: spaces.Space[Any]) -> tuple[Any, Any]:
    """The ``obs_dtype`` and ``obs_range`` a model config gives for observations of ``space``.

    >>> model_input(spaces.Box(0, 255, (4, 84, 84), np.uint8))
    ('uint8', [0, 255])
    >>> model_input(spaces.Box(-1, 1, (3,), np.float64)), model_input(spaces.Discrete(3, start=1))
    (('float64', None), ('int64', [1, 3]))
    >>> model_input(spaces.Dict({'frame': spaces.Box(0, 255, (2, 2), np.uint8), 'speed': spaces.Box(0, 1, (1,))}))
    ({'frame': 'uint8', 'speed': 'float32'}, {'frame': [0, 255], 'speed': None})
    """
    if isinstance(space, spaces.Dict):
        items = {key: model_input(sub) for key, sub in space.spaces.items()}
        return {key: dtype for key, (dtype, _) in items.items()}, {key: bounds for key, (_, bounds) in items.items()}
    if isinstance(space, spaces.Tuple):
        parts = [model_input(sub) for sub in space.spaces]
        return tuple(dtype for dtype, _ in parts), tuple(bounds for _, bounds in parts)
    dtype = np.dtype(space.dtype) if space.dtype is not None else None
    if dtype is None or dtype.kind not in "biu":
        return (dtype.name if dtype is not None else None), None
    if isinstance(space, spaces.Discrete):
        return dtype.name, [int(space.start), int(space.start + space.n - 1)]
    if isinstance(space, spaces.MultiDiscrete):
        return dtype.name, [int(np.min(space.start)), int(np.max(space.start + space.nvec - 1))]
    if isinstance(space, spaces.MultiBinary) or dtype.kind == "b":
        return dtype.name, [0, 1]
    low, high = getattr(space, "low", None), getattr(space, "high", None)
    if low is None or high is None:
        return dtype.name, None
    return dtype.name, [int(np.min(low)), int(np.max(high))]


def same_input(given: Any, expected: Any) -> bool:
    """Whether a hand-typed ``obs_dtype`` / ``obs_range`` means ``expected`` (dtype names, lists and tuples alike).

    >>> same_input('uint8', 'uint8'), same_input((0.0, 255.0), [0, 255]), same_input('float32', 'uint8')
    (True, True, False)
    """
    return bool(_input_normalized(given) == _input_normalized(expected))


def _input_normalized(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, Mapping):
        return {key: _input_normalized(sub) for key, sub in value.items()}
    if isinstance(value, (list, tuple)) and all(isinstance(v, (int, float, np.number)) for v in value):
        return ("range", *(float(v) for v in value))
    if isinstance(value, (list, tuple)):
        return tuple(_input_normalized(sub) for sub in value)
    try:
        return np.dtype(value).name
    except (TypeError, ValueError):
        return ("not a dtype", repr(value))


def same_shape(given: Any, expected: Any) -> bool:
    """Whether a hand-typed shape means ``expected``: lists and tuples are alike, and ``[n]`` or ``(n,)`` is ``n``.

    >>> same_shape([4, 84, 84], (4, 84, 84)), same_shape((4,), 4), same_shape(8, 4), same_shape(True, 1)
    (True, True, False, False)
    """
    return bool(_normalized(given) == _normalized(expected))


def _normalized(shape: Any) -> Any:
    if isinstance(shape, (bool, np.bool_)):
        return ("not a shape", repr(shape))
    if isinstance(shape, (int, np.integer)):
        return int(shape)
    if isinstance(shape, Mapping):
        return {key: _normalized(sub) for key, sub in shape.items()}
    if isinstance(shape, (list, tuple)):
        items = tuple(_normalized(sub) for sub in shape)
        return items[0] if len(items) == 1 and isinstance(items[0], int) else items
    return ("not a shape", repr(shape))


def fill_model_shapes(policy_cfg: Mapping[str, Any], env_spaces: EnvSpaces, env_type: str) -> dict[str, Any]:
    """Return a copy of ``policy_cfg`` whose ``model`` has every key of :data:`MODEL_SPEC_KEYS` set from the env.

    Missing or ``None`` values are filled in (``obs_shape``, ``action_shape``, ``obs_dtype``, ``obs_range``);
    a given one must agree with the env's, or :class:`~ding.errors.ConfigError` names both.

    Example:
        >>> env_spaces = EnvSpaces(spaces.Box(0, 1, (4,)), spaces.Discrete(2))
        >>> fill_model_shapes({'model': {'obs_shape': None}}, env_spaces, 'cartpole')['model']
        {'obs_shape': 4, 'action_shape': 2, 'obs_dtype': 'float32', 'obs_range': None}
        >>> fill_model_shapes({'model': {'obs_shape': 3}}, env_spaces, 'cartpole')
        Traceback (most recent call last):
        ...
        ding.errors.ConfigError: policy.model.obs_shape is 3, but env 'cartpole' produces observations \
of shape 4 (Box(0.0, 1.0, (4,), float32)); leave obs_shape out to have it filled in
        >>> fill_model_shapes({'model': {'obs_dtype': 'uint8'}}, env_spaces, 'cartpole')
        Traceback (most recent call last):
        ...
        ding.errors.ConfigError: policy.model.obs_dtype is 'uint8', but env 'cartpole' produces observations \
of dtype 'float32' (Box(0.0, 1.0, (4,), float32)); leave obs_dtype out to have it filled in
    """
    policy = copy.deepcopy(dict(policy_cfg))
    model = policy.get("model")
    if model is None:
        model = {}
    if not isinstance(model, Mapping):
        raise ConfigError(f"policy.model must be a dict, got {type(model).__name__} {model!r}")
    model = dict(model)
    for key, what, space in (
        ("obs_shape", "observations", env_spaces.observation),
        ("action_shape", "actions", env_spaces.action),
    ):
        expected = model_shape(space)
        fill_or_check(
            model, key, expected, same_shape, f"env {env_type!r} produces {what} of shape {expected!r} ({space})"
        )
    obs_dtype, obs_range = model_input(env_spaces.observation)
    for key, what, expected in (("obs_dtype", "dtype", obs_dtype), ("obs_range", "value range", obs_range)):
        source = f"env {env_type!r} produces observations of {what} {expected!r} ({env_spaces.observation})"
        fill_or_check(model, key, expected, same_input, source)
    policy["model"] = model
    return policy


def fill_or_check(
    model: dict[str, Any], key: str, expected: Any, agrees: Callable[[Any, Any], bool], source: str
) -> None:
    """Set ``model[key]`` to ``expected`` when it is missing or None; a given value must agree with it.

    >>> model = {'obs_shape': None}
    >>> fill_or_check(model, 'obs_shape', 4, same_shape, 'the env has 4'); model
    {'obs_shape': 4}
    >>> fill_or_check({'obs_shape': 3}, 'obs_shape', 4, same_shape, 'the env has 4')
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: policy.model.obs_shape is 3, but the env has 4; leave obs_shape out to have it filled in
    """
    given = model.get(key)
    if given is None:
        model[key] = expected
    elif not agrees(given, expected):
        raise ConfigError(f"policy.model.{key} is {given!r}, but {source}; leave {key} out to have it filled in")
