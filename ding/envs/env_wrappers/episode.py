"""Episode bookkeeping wrappers: returns, time limits, episode boundaries."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from ding.envs.env_wrappers.base import DingWrapper, ShapeTriple, register_wrapper
from ding.envs.spaces import Shape


@register_wrapper("eval_episode_return")
class EvalEpisodeReturnWrapper(DingWrapper):
    """Accumulate the reward and report it as ``info['eval_episode_return']`` when an episode ends.

    The return has the reward's own shape (a float32 array of the reward space's shape).

    Example:
        >>> from gymnasium.envs.classic_control import CartPoleEnv
        >>> env = EvalEpisodeReturnWrapper(CartPoleEnv())
        >>> _ = env.reset(seed=0)
        >>> done = False
        >>> while not done:
        ...     _, _, term, trunc, info = env.step(0)
        ...     done = term or trunc
        >>> float(info['eval_episode_return'][0])
        10.0
    """

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self._declare_spaces()
        self._return = np.zeros(self.reward_space.shape, dtype=np.float32)

    @staticmethod
    def new_shape(obs_shape: Shape, act_shape: Shape, rew_shape: Shape) -> ShapeTriple:
        return obs_shape, act_shape, rew_shape

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._return = np.zeros(self.reward_space.shape, dtype=np.float32)
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._return += np.asarray(reward, dtype=np.float32).reshape(self._return.shape)
        if terminated or truncated:
            info = {**info, "eval_episode_return": self._return.copy()}
        return obs, reward, terminated, truncated, info
