"""One discrete action per point of a grid over a Box action: ``Discrete(bins ** k)`` for a Box of k elements.

Each dimension takes ``bins`` evenly spaced values from its low to its high bound (ding's ``discrete_action``
wrapper), and the joint choices are numbered in C order, the last dimension fastest. DI-engine's discrete Pendulum
and its ``MujocoDiscEnv`` act this way.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ding.envs.env_wrappers import DingActionWrapper, apply_wrappers, update_space
from ding.envs.env_wrappers.base import SpaceTriple


class FlatDiscreteAction(DingActionWrapper):
    """Number the joint choices of a ``MultiDiscrete(nvec)`` action: ``Discrete(prod(nvec))``, C order.

    Example:
        >>> FlatDiscreteAction.new_shape((3,), [2, 3], (1,))
        ((3,), 6, (1,))
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any]
    ) -> SpaceTriple:
        if not isinstance(act_space, spaces.MultiDiscrete):
            raise TypeError(f"FlatDiscreteAction needs a MultiDiscrete action space, got {act_space}")
        return obs_space, spaces.Discrete(int(np.prod(act_space.nvec, dtype=np.int64))), rew_space

    def _setup(self) -> None:
        inner = self.env.action_space
        assert isinstance(inner, spaces.MultiDiscrete)  # checked by the space rule
        self._nvec = tuple(int(n) for n in inner.nvec.reshape(-1))

    def action(self, action: Any) -> np.ndarray:
        index = int(np.asarray(action).reshape(()))
        return np.asarray(np.unravel_index(index, self._nvec), dtype=np.int64)


def grid_action_space(box: spaces.Space[Any], bins: int) -> spaces.Discrete:
    """The action space :func:`grid_discrete_action` gives an env whose action space is ``box``, without an env.

    >>> grid_action_space(spaces.Box(-1.0, 1.0, (3,), np.float32), 4)
    Discrete(64)
    """
    placeholder = spaces.Box(0.0, 1.0, (1,), np.float32)
    per_dim = update_space(placeholder, box, None, [("discrete_action", {"bins": bins})]).action
    space = FlatDiscreteAction.space_rule(placeholder, per_dim, placeholder)[1]
    assert isinstance(space, spaces.Discrete)
    return space


def grid_discrete_action(env: gym.Env[Any, Any], bins: int) -> gym.Env[Any, Any]:
    """``env`` acting through ``Discrete(bins ** k)``: index ``i`` is grid point ``unravel_index(i, [bins] * k)``.

    Example:
        >>> from gymnasium.envs.classic_control import PendulumEnv
        >>> env = grid_discrete_action(PendulumEnv(), 5)  # torques -2, -1, 0, 1, 2
        >>> env.action_space, env.env.action(env.action(3))
        (Discrete(5), array([1.], dtype=float32))
    """
    return FlatDiscreteAction(apply_wrappers(env, [("discrete_action", {"bins": bins})]))
