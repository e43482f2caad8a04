"""Wrappers that put the previous action (and reward) into the observation, for recurrent and meta-RL agents."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.env_wrappers.action import zero_action
from ding.envs.env_wrappers.base import DingWrapper, SpaceTriple, episode_began, register_wrapper
from ding.envs.env_wrappers.reward import reward_box, with_zero_box
from ding.envs.env_wrappers.rule import SpaceKindError, describe_space

_RECORDABLE = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)


def _check_action_space(act_space: spaces.Space[Any], wrapper: str) -> None:
    if not isinstance(act_space, _RECORDABLE):
        raise SpaceKindError(
            f"{wrapper} needs a Box, Discrete, MultiDiscrete or MultiBinary action space; "
            f"got {describe_space(act_space, 'the nested action')}"
        )


def _action_recorder(space: spaces.Space[Any]) -> Callable[[Any], Any]:
    """A function turning an agent's action into a fresh value of ``space`` (Box actions clipped to its bounds)."""
    dtype = np.dtype(space.dtype)
    if isinstance(space, spaces.Discrete):
        return lambda action: dtype.type(np.asarray(action).item())
    if isinstance(space, spaces.Box):
        low, high = space.low, space.high
        return lambda action: np.clip(np.asarray(action, dtype=dtype).reshape(low.shape), low, high)
    if isinstance(space, (spaces.MultiDiscrete, spaces.MultiBinary)):
        shape = space.shape
        return lambda action: np.array(action, dtype=dtype).reshape(shape)
    raise TypeError(f"cannot record actions of {space}; supported: Box, Discrete, MultiDiscrete, MultiBinary")


def _fresh(value: Any) -> Any:
    return value.copy() if isinstance(value, np.ndarray) else value


def _with_prev_action(obs: Any, action: Any) -> dict[str, Any]:
    """The layout of :class:`ActionObservationWrapper`'s observation, for shapes, spaces and values alike."""
    return {"observation": obs, "prev_action": action}


def _with_prev_action_reward(obs: Any, action: Any, reward: Any) -> dict[str, Any]:
    """The layout of :class:`ObsPlusPrevActRewWrapper`'s observation, for shapes, spaces and values alike."""
    return {"obs": obs, "prev_action": action, "prev_reward_extrinsic": reward}


@register_wrapper("action_observation")
class ActionObservationWrapper(DingWrapper):
    """Observe the previous action too: the observation becomes ``Dict(observation=obs, prev_action=action)``.

    ``prev_action`` is the action that led to the current observation, in the action space itself (a
    Discrete action stays a Discrete entry holding the index, not a one-hot vector; Box actions are
    recorded clipped to the bounds). After reset, and with the first observation of an episode begun inside
    ``step``, it is the space's zero action (zeros, or the low bound where 0 is not allowed).

    Example:
        >>> box = spaces.Box(-1, 1, (3,))
        >>> ActionObservationWrapper.new_space(box, spaces.Discrete(2), box)[0]
        Dict('observation': Box(-1.0, 1.0, (3,), float32), 'prev_action': Discrete(2))
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any]
    ) -> SpaceTriple:
        _check_action_space(act_space, "action_observation")
        return spaces.Dict(_with_prev_action(obs_space, act_space)), act_space, rew_space

    def _setup(self) -> None:
        self._record = _action_recorder(self.env.action_space)
        self._zero = zero_action(self.env.action_space)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return _with_prev_action(obs, _fresh(self._zero)), info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        prev = _fresh(self._zero) if episode_began(info) is not None else self._record(action)
        return _with_prev_action(obs, prev), reward, terminated, truncated, info


@register_wrapper("obs_plus_prev_action_reward")
class ObsPlusPrevActRewWrapper(DingWrapper):
    """Observe the previous action and reward too: ``Dict(obs=obs, prev_action=..., prev_reward_extrinsic=...)``.

    ``prev_action`` has the action space (recorded as :class:`ActionObservationWrapper` does) and
    ``prev_reward_extrinsic`` is the previous reward as a float32 array of the reward shape. Both are zeros
    after reset and with the first observation of an episode begun inside ``step`` (the action: the space's zero
    action), so the reward entry is bounded by the reward's
    bounds widened to include 0, as ``reward_in_obs`` does (DI-engine also shows 0 after a reset).

    Example:
        >>> box = spaces.Box(-1.0, 1.0, (1,), np.float64)
        >>> ObsPlusPrevActRewWrapper.new_space(box, spaces.Discrete(2), box)[0]['prev_reward_extrinsic']
        Box(-1.0, 1.0, (1,), float32)
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any]
    ) -> SpaceTriple:
        _check_action_space(act_space, "obs_plus_prev_action_reward")
        reward_entry = with_zero_box(reward_box("obs_plus_prev_action_reward", rew_space))
        return spaces.Dict(_with_prev_action_reward(obs_space, act_space, reward_entry)), act_space, rew_space

    def _setup(self) -> None:
        self._record = _action_recorder(self.env.action_space)
        self._zero = zero_action(self.env.action_space)
        self._rew_shape: tuple[int, ...] = self.reward_space.shape or ()

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        prev_reward = np.zeros(self._rew_shape, dtype=np.float32)
        return _with_prev_action_reward(obs, _fresh(self._zero), prev_reward), info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if episode_began(info) is not None:
            new_obs = _with_prev_action_reward(obs, _fresh(self._zero), np.zeros(self._rew_shape, dtype=np.float32))
        else:
            prev_reward = np.array(reward, dtype=np.float32).reshape(self._rew_shape)
            new_obs = _with_prev_action_reward(obs, self._record(action), prev_reward)
        return new_obs, reward, terminated, truncated, info
