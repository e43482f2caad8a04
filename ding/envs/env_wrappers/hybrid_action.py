"""Hybrid (parametrized) actions: a discrete action type with continuous arguments, presented as a Dict.

Envs such as gym-hybrid take ``Tuple(Discrete(n), Box(shape))``: the type of action and the arguments
for it. DI-engine's policies for them produce ``{"type", "mask", "args"}`` dicts, which
:class:`GymHybridDictActionWrapper` turns back into the env's tuple.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.env_wrappers.base import DingActionWrapper, SpaceTriple, register_wrapper
from ding.envs.env_wrappers.rule import SpaceKindError, describe_space

_KEYS = ("type", "mask", "args")


@register_wrapper("gym_hybrid_dict_action")
class GymHybridDictActionWrapper(DingActionWrapper):
    """Take a hybrid action ``Tuple(Discrete(n), Box)`` as ``Dict(type=Discrete(n), mask=..., args=Box)``.

    ``type`` is the discrete action and ``args`` the Box of continuous arguments, both as the env
    declares them; ``mask`` is an int64 0/1 Box of the arguments' shape saying which arguments the
    type uses. The env receives ``(type, args)``: as in DI-engine, the mask is carried for the
    policy's sake and not applied (it may be left out of the action dict). Observations and rewards
    are unchanged.

    Example:
        >>> hybrid = spaces.Tuple((spaces.Discrete(3), spaces.Box(-1.0, 1.0, (2,), np.float32)))
        >>> GymHybridDictActionWrapper.new_shape((10,), (3, (2,)), (1,))[1]
        {'args': (2,), 'mask': (2,), 'type': 3}
        >>> GymHybridDictActionWrapper.new_space(spaces.Box(0, 1, (10,)), hybrid, None)[1]['mask']
        Box(0, 1, (2,), int64)
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any]
    ) -> SpaceTriple:
        if not (
            isinstance(act_space, spaces.Tuple)
            and len(act_space.spaces) == 2
            and isinstance(act_space.spaces[0], spaces.Discrete)
            and isinstance(act_space.spaces[1], spaces.Box)
        ):
            raise SpaceKindError(
                "gym_hybrid_dict_action needs a hybrid action space Tuple(Discrete(n), Box) (shape (n, (k, ...))); "
                f"got {describe_space(act_space, 'action')}"
            )
        type_space, args_space = act_space.spaces
        mask = spaces.Box(0, 1, args_space.shape, np.int64)
        return obs_space, spaces.Dict({"type": type_space, "mask": mask, "args": args_space}), rew_space

    def _setup(self) -> None:
        self._type_space: spaces.Discrete = self.env.action_space[0]  # type: ignore[index]
        self._args_space: spaces.Box = self.env.action_space[1]  # type: ignore[index]

    def action(self, action: Any) -> tuple[np.int64, np.ndarray]:
        """``{"type", "args"[, "mask"]}`` → ``(type, args)`` in the inner env's dtypes and shapes."""
        if not isinstance(action, Mapping):
            raise TypeError(f"gym_hybrid_dict_action takes a dict action with keys {list(_KEYS)}; got {action!r}")
        unknown = set(action) - set(_KEYS)
        if unknown or "type" not in action or "args" not in action:
            raise ValueError(
                f"gym_hybrid_dict_action needs a dict action with keys 'type' and 'args' (and optionally 'mask'); "
                f"got keys {sorted(map(str, action))}"
            )
        kind = np.asarray(action["type"])
        if kind.size != 1 or not np.issubdtype(kind.dtype, np.integer):
            raise ValueError(f"gym_hybrid_dict_action: 'type' must be one integer; got {action['type']!r}")
        args = np.asarray(action["args"], dtype=self._args_space.dtype)
        if args.size != int(np.prod(self._args_space.shape)):
            raise ValueError(
                f"gym_hybrid_dict_action: 'args' must have {self._args_space.shape} elements for {self._args_space}; "
                f"got shape {args.shape}"
            )
        return self._type_space.dtype.type(kind.reshape(())), args.reshape(self._args_space.shape)
