"""``GymnasiumEnv``: one ding env as a ``gymnasium.Env``, for tools that take one (stable-baselines3 among them).

The reverse of :class:`~ding.envs.DingEnvWrapper`, which runs a gymnasium env as a ding env.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from ding.envs.base_env import BaseEnv


class GymnasiumEnv(gym.Env[Any, Any]):
    """Run a ding env (any ``BaseEnv``) through the gymnasium API; ``close()`` closes it.

    ``reset(seed=s)`` seeds the ding env with ``s`` (``env.seed(s)``: its episode seeds then come from
    the stream ``s`` starts, see :mod:`ding.envs.seeding`) and resets it; a ``reset()`` without a seed
    starts the stream's next episode. ``step`` returns the env's one reward value as a float and its
    ``terminated`` / ``truncated`` flags; observations keep the dtypes of the env's spec.

    SB3 takes it as any gymnasium env: ``PPO('MlpPolicy', GymnasiumEnv(env))``, or
    ``stable_baselines3.common.env_checker.check_env(GymnasiumEnv(env))``.

    Example:
        >>> from ding.envs import DingEnvWrapper
        >>> env = GymnasiumEnv(DingEnvWrapper(cfg={'env_id': 'CartPole-v1'}))
        >>> obs, info = env.reset(seed=0)
        >>> obs.dtype, info
        (dtype('float32'), {})
        >>> obs, reward, terminated, truncated, info = env.step(0)
        >>> reward, terminated, truncated
        (1.0, False, False)
        >>> env.close()
    """

    def __init__(self, env: BaseEnv) -> None:
        if not isinstance(env, BaseEnv):
            raise TypeError(f"GymnasiumEnv takes a ding env (a BaseEnv), got {type(env).__name__}")
        reward_shape = tuple(env.reward_space.shape or (1,))
        if int(np.prod(reward_shape)) != 1:
            raise ValueError(
                f"GymnasiumEnv needs one reward value per step (shape (1,) or ()), got shape {reward_shape} "
                f"from {type(env).__name__}"
            )
        self.env = env
        self.observation_space = env.observation_space
        self.action_space = env.action_space
        self.render_mode = getattr(env, "render_mode", None)
        self.metadata = {"render_modes": [self.render_mode] if self.render_mode else []}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        if options:
            raise ValueError(
                f"{type(self.env).__name__}.reset takes no options (ding envs reset without), got {options!r}"
            )
        super().reset(seed=seed)
        if seed is not None:
            self.env.seed(seed)
        return self.env.reset(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        timestep = self.env.step(action)
        reward = float(np.asarray(timestep.reward).reshape(-1)[0])
        return timestep.obs, reward, bool(timestep.terminated), bool(timestep.truncated), dict(timestep.info)

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()
