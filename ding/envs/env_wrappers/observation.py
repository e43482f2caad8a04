"""Observation reshaping wrappers: one flat float32 vector, or 1-D leaves that keep their dtype.

- ``flat_obs`` concatenates the whole (possibly nested) observation into a single float32 vector, one-hot
  encoding discrete leaves, exactly as :func:`gymnasium.spaces.flatten` orders and encodes it.
- ``flatten_observation`` reshapes each selected Box leaf to 1-D where it sits, keeping its dtype and the
  Dict/Tuple structure around it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.env_wrappers.base import DingObservationWrapper, SpaceTriple, register_wrapper
from ding.envs.env_wrappers.fields import Fields, map_fields
from ding.envs.env_wrappers.rule import SpaceKindError, describe_space
from ding.errors import ShapeRuleError

# One entry per leaf of the observation, in flattening order:
# (index path into the observation, leaf kind, start offset, stop offset, leaf-specific data).
_Plan = list[tuple[tuple[Any, ...], str, int, int, Any]]


def _flat_plan(space: spaces.Space[Any], path: tuple[Any, ...] = ()) -> _Plan:
    """The leaves of ``space`` in gymnasium's flattening order, with their slots in the flat vector."""
    plan: _Plan = []

    def visit(node: spaces.Space[Any], at: tuple[Any, ...], start: int) -> int:
        if isinstance(node, spaces.Dict):
            for key, sub in node.spaces.items():
                start = visit(sub, (*at, key), start)
            return start
        if isinstance(node, spaces.Tuple):
            for i, sub in enumerate(node.spaces):
                start = visit(sub, (*at, i), start)
            return start
        if isinstance(node, (spaces.Box, spaces.MultiBinary)):
            stop = start + int(np.prod(node.shape, dtype=np.int64))
            plan.append((at, "array", start, stop, None))
        elif isinstance(node, spaces.Discrete):
            stop = start + int(node.n)
            plan.append((at, "discrete", start, stop, int(node.start)))
        elif isinstance(node, spaces.MultiDiscrete):
            nvec = np.asarray(node.nvec, dtype=np.int64).reshape(-1)
            offsets = np.concatenate([[0], np.cumsum(nvec)[:-1]]) + start
            stop = start + int(nvec.sum())
            plan.append((at, "multi_discrete", start, stop, (offsets, np.asarray(node.start).reshape(-1))))
        else:
            where = ".".join(map(str, at)) or "the observation"
            raise SpaceKindError(
                f"flat_obs supports Box, Discrete, MultiDiscrete and MultiBinary leaves (in Dict/Tuple); "
                f"got {node} at {where}"
            )
        return stop

    visit(space, path, 0)
    return plan


@register_wrapper("flat_obs")
class FlatObsWrapper(DingObservationWrapper):
    """Flatten the whole observation into one 1-D float32 vector: any obs shape → ``(total,)``.

    Box and MultiBinary leaves are raveled, Discrete and MultiDiscrete leaves one-hot encoded, Dict leaves taken
    in the space's key order (gymnasium sorts plain-dict keys) — the content and order of
    :func:`gymnasium.spaces.flatten`, always as float32, with the bounds flattened alongside. Unlike
    ``flatten_observation``, the structure is gone: a Dict observation becomes a single vector.

    Example:
        >>> obs = spaces.Dict({'pos': spaces.Box(0, 1, (2, 2), np.float64), 'mode': spaces.Discrete(3)})
        >>> FlatObsWrapper.new_space(obs, spaces.Discrete(2), None)[0]
        Box(0.0, 1.0, (7,), float32)
        >>> FlatObsWrapper.new_shape({'pos': (2, 2), 'mode': 3}, 2, (1,))
        ((7,), 2, (1,))
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any]
    ) -> SpaceTriple:
        plan = _flat_plan(obs_space)  # rejects unsupported leaves, naming their path
        if not plan or plan[-1][3] == 0:
            raise ShapeRuleError(
                f"flat_obs needs an observation with at least one element; got {describe_space(obs_space)}"
            )
        bounds = spaces.flatten_space(obs_space)
        if not isinstance(bounds, spaces.Box):
            raise SpaceKindError(f"flat_obs cannot flatten {obs_space} into a Box")
        with np.errstate(over="ignore"):
            low = np.asarray(bounds.low, dtype=np.float32)
            high = np.asarray(bounds.high, dtype=np.float32)
        return spaces.Box(low, high, dtype=np.float32), act_space, rew_space

    def _setup(self) -> None:
        self._plan = _flat_plan(self.env.observation_space)
        self._size = int(self.observation_space.shape[0])  # type: ignore[index]

    def observation(self, obs: Any) -> np.ndarray:
        out = np.empty(self._size, dtype=np.float32)
        for path, kind, start, stop, data in self._plan:
            leaf = obs
            for key in path:
                leaf = leaf[key]
            if kind == "array":
                out[start:stop] = np.ravel(leaf)
            elif kind == "discrete":
                out[start:stop] = 0.0
                out[start + int(leaf) - data] = 1.0
            else:
                offsets, first = data
                out[start:stop] = 0.0
                out[offsets + (np.ravel(leaf) - first)] = 1.0
        return out


def _flat_leaf_space(space: spaces.Space[Any], where: str) -> spaces.Space[Any]:
    """flatten_observation's space rule: Box/MultiBinary leaves reshaped to 1-D, dtype and bounds kept."""
    if isinstance(space, spaces.Dict):
        return spaces.Dict({key: _flat_leaf_space(sub, f"{where}.{key}") for key, sub in space.spaces.items()})
    if isinstance(space, spaces.Tuple):
        return spaces.Tuple(tuple(_flat_leaf_space(sub, f"{where}.{i}") for i, sub in enumerate(space.spaces)))
    if isinstance(space, spaces.Box):
        return spaces.Box(space.low.reshape(-1), space.high.reshape(-1), dtype=space.dtype)  # type: ignore[arg-type]
    if isinstance(space, spaces.MultiBinary):
        return spaces.MultiBinary(int(np.prod(space.shape, dtype=np.int64)))
    raise SpaceKindError(
        f"flatten_observation needs Box (or MultiBinary) leaves; got {describe_space(space)} at {where}; "
        "select Box fields with `fields`, or use flat_obs to one-hot encode discrete leaves"
    )


def _flat_leaf_value(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _flat_leaf_value(sub) for key, sub in value.items()}
    if isinstance(value, tuple):
        return tuple(_flat_leaf_value(sub) for sub in value)
    return np.reshape(value, -1)


def _map_each_field(tree: Any, fields: Fields, rule: Callable[[Any, str], Any]) -> Any:
    """Apply ``rule(node, where)`` at each field path (or at the root), naming the path in errors."""
    if fields is None:
        return rule(tree, "the observation")
    for path in fields:

        def at_path(node: Any, where: str = path) -> Any:
            return rule(node, f"field {where!r}")

        tree = map_fields(tree, [path], at_path)
    return tree


@register_wrapper("flatten_observation")
class FlattenObservationWrapper(DingObservationWrapper):
    """Reshape each selected Box leaf to 1-D, keeping its dtype, bounds and the structure around it.

    ``fields`` selects ``"a.b.c"`` paths; a selected Dict/Tuple has all its leaves flattened. With
    ``fields=None`` a plain Box observation is flattened, and a Dict/Tuple observation has every leaf flattened
    while staying a Dict/Tuple (ALF's wrapper of this name only handles a non-nested observation there).
    Unlike ``flat_obs`` nothing is concatenated, cast or one-hot encoded, so discrete leaves are rejected.

    Example:
        >>> obs = spaces.Dict({'img': spaces.Box(0, 255, (4, 4, 3), np.uint8), 'v': spaces.Box(-1, 1, (2,))})
        >>> FlattenObservationWrapper.new_space(obs, spaces.Discrete(2), None, fields=['img'])[0]
        Dict('img': Box(0, 255, (48,), uint8), 'v': Box(-1.0, 1.0, (2,), float32))
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        fields: Fields = None,
    ) -> SpaceTriple:
        return _map_each_field(obs_space, fields, _flat_leaf_space), act_space, rew_space

    def observation(self, obs: Any) -> Any:
        if self.fields is None:
            return _flat_leaf_value(obs)
        return map_fields(obs, self.fields, _flat_leaf_value)
