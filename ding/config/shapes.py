"""Model shapes from env spaces: fill ``policy.model.obs_shape`` / ``action_shape`` and check hand-typed ones.

The shapes follow DI-engine's model configs: a 1-D observation or Box action of size ``n`` is the
int ``n`` (``obs_shape=4`` for CartPole); ``Discrete(n)`` is ``n``; ``MultiDiscrete`` is a list of
ints; a multi-dimensional Box is a tuple such as ``(4, 84, 84)``; ``Dict`` and ``Tuple`` spaces
give a dict or tuple of shapes.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.spaces import EnvSpaces, Shape, is_flat_shape, space_to_shape
from ding.errors import ConfigError

SHAPE_KEYS = ("obs_shape", "action_shape")


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
    """Return a copy of ``policy_cfg`` whose ``model`` has ``obs_shape`` and ``action_shape`` set from the env.

    Missing or ``None`` shapes are filled in; a given shape must agree with the env's, or
    :class:`~ding.errors.ConfigError` names both.

    Example:
        >>> env_spaces = EnvSpaces(spaces.Box(0, 1, (4,)), spaces.Discrete(2))
        >>> fill_model_shapes({'model': {'obs_shape': None}}, env_spaces, 'cartpole')['model']
        {'obs_shape': 4, 'action_shape': 2}
        >>> fill_model_shapes({'model': {'obs_shape': 3}}, env_spaces, 'cartpole')
        Traceback (most recent call last):
        ...
        ding.errors.ConfigError: policy.model.obs_shape is 3, but env 'cartpole' produces observations \
of shape 4 (Box(0.0, 1.0, (4,), float32)); leave obs_shape out to have it filled in
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
        given = model.get(key)
        if given is None:
            model[key] = expected
        elif not same_shape(given, expected):
            raise ConfigError(
                f"policy.model.{key} is {given!r}, but env {env_type!r} produces {what} of shape {expected!r} "
                f"({space}); leave {key} out to have it filled in"
            )
    policy["model"] = model
    return policy
