"""Small envs whose optimal policy and value are known, for testing learners.

Every episode lasts ``episode_length`` steps and then terminates. Observations are float32 in [0, 1] of shape
``(obs_dim,)``; actions are ``Discrete(2)`` (``action_type='discrete'``) or a float32 ``Box(0, 1, (1,))``
(``'continuous'``); rewards lie in [0, 1], of shape ``(reward_dim,)`` (the same value in every entry). With
discount ``gamma``, a state ``k`` steps before the episode's end is worth at most ``(1 - gamma**k) / (1 - gamma)``
(``k`` for ``gamma = 1``), the return of reward 1 at each remaining step: :func:`optimal_value`.

The envs (``L`` = ``episode_length``):

- ``value_unittest``: reward 1 at every step, whatever the action; the observation is the fraction of the episode
  still to come. Every policy is optimal: return ``L``, value ``optimal_value(k, gamma)`` with ``k`` steps left.
- ``policy_unittest``: each step shows a random bit; reward 1 when the action matches it (discrete), or
  ``1 - |action - bit|`` (continuous). Optimal: act ``obs[0]``, return ``L`` (a random policy earns ``L / 2``).
- ``rnn_policy_unittest``: the bit is shown at the first step only (0.5 afterwards), and rewarded as above from
  step ``gap`` on. Optimal: remember the first bit, return ``L - gap``.
- ``mixed_policy_unittest``: the action is a pair ``(discrete, continuous)``; reward 1 when
  ``discrete == (continuous > 0.5)``. Optimal: any consistent pair, return ``L``.

Seeds work as for every ding env: ``seed(s, dynamic_seed=True)`` draws a new episode
seed at each reset, ``dynamic_seed=False`` replays ``s``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from ding.envs.base_env import BaseEnv
from ding.envs.env_registry import ENV_REGISTRY
from ding.envs.spaces import EnvSpaces
from ding.envs.timestep import BaseEnvTimestep
from ding.errors import ConfigError
from ding.utils.accepts import count, one_of

ACTION_TYPES = ("discrete", "continuous")


def optimal_value(steps_left: int, gamma: float) -> float:
    """The discounted return of reward 1 at each of ``steps_left`` steps: ``sum(gamma**j for j < steps_left)``.

    >>> optimal_value(3, 0.5), optimal_value(4, 1.0)
    (1.75, 4.0)
    """
    if gamma == 1.0:
        return float(steps_left)
    return float((1.0 - gamma**steps_left) / (1.0 - gamma))


class UnittestEnv(BaseEnv):
    """Base of the unittest envs: the config, the spaces, the episode clock and seeding.

    Subclasses state ``_observe`` (the observation at the episode's step ``t``) and ``_reward`` (of an action).
    """

    config: ClassVar[dict[str, Any]] = {
        "episode_length": count(10),
        "obs_dim": count(1),
        "action_type": one_of(*ACTION_TYPES, default="discrete"),
        "reward_dim": count(1),
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg)
        self._rng = np.random.default_rng()
        self._reward_shape = (int(self._cfg.reward_dim),)
        self._t = 0
        self._return = 0.0
        self._closed = False

    @classmethod
    def action_space_of(cls, cfg: Mapping[str, Any]) -> spaces.Space[Any]:
        if cfg["action_type"] == "discrete":
            return spaces.Discrete(2)
        return spaces.Box(0.0, 1.0, (1,), np.float32)

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        cls.check_config(cfg)
        return EnvSpaces(
            spaces.Box(0.0, 1.0, (int(cfg["obs_dim"]),), np.float32),
            cls.action_space_of(cfg),
            spaces.Box(0.0, 1.0, (int(cfg["reward_dim"]),), np.float32),
        )

    @property
    def episode_length(self) -> int:
        return int(self._cfg.episode_length)

    def _observe(self, t: int) -> np.ndarray:
        raise NotImplementedError

    def _reward(self, action: Any) -> float:
        raise NotImplementedError

    def _fill(self, value: float) -> np.ndarray:
        return np.full((int(self._cfg.obs_dim),), value, dtype=np.float32)

    def _check_action(self, action: Any) -> Any:
        space = self.action_space
        value = np.asarray(action, dtype=space.dtype)
        if isinstance(space, spaces.Discrete):
            value = value.reshape(-1)[0] if value.size == 1 else value
        if not space.contains(value):
            raise ValueError(f"{type(self).__name__}: action {action!r} is outside {space}")
        return value

    def reset(self) -> np.ndarray:
        if self._closed:
            raise RuntimeError(f"{type(self).__name__} is closed")
        seed = self._next_episode_seed()
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._t = 0
        self._return = 0.0
        self._obs = self._observe(0)
        return self._obs

    def step(self, action: Any) -> BaseEnvTimestep:
        reward = float(self._reward(self._check_action(action)))
        self._t += 1
        self._return += reward
        done = self._t >= self.episode_length
        info: dict[str, Any] = {}
        if done:
            info["eval_episode_return"] = np.full(self._reward_shape, self._return, dtype=np.float32)
        self._obs = self._observe(self._t)
        rewards = np.full(self._reward_shape, reward, dtype=np.float32)
        return BaseEnvTimestep(self._obs, rewards, done, info, terminated=done)

    def close(self) -> None:
        self._closed = True


@ENV_REGISTRY.register("value_unittest")
class ValueUnittestEnv(UnittestEnv):
    """Reward 1 at every step whatever the action; the observation is the fraction of the episode to come.

    A state with ``k`` steps left (observation ``k / episode_length``) is worth ``optimal_value(k, gamma)``
    under every policy.

    Example:
        >>> env = ValueUnittestEnv({'episode_length': 4})
        >>> env.reset().tolist(), env.step(1).obs.tolist(), env.step(0).reward.tolist()
        ([1.0], [0.75], [1.0])
    """

    def _observe(self, t: int) -> np.ndarray:
        return self._fill((self.episode_length - t) / self.episode_length)

    def _reward(self, action: Any) -> float:
        return 1.0


@ENV_REGISTRY.register("policy_unittest")
class PolicyUnittestEnv(UnittestEnv):
    """Each step shows a random bit (in every entry); the action that matches it earns 1.

    Discrete: reward 1 for ``action == bit``, else 0. Continuous: ``1 - |action - bit|``. The optimal policy acts
    the bit and earns ``episode_length`` per episode; a uniformly random one earns half of that.

    Example:
        >>> env = PolicyUnittestEnv({'episode_length': 3})
        >>> env.seed(0)
        >>> bit = int(env.reset()[0])
        >>> env.step(bit).reward.tolist(), env.step(1 - int(env._obs[0])).reward.tolist()
        ([1.0], [0.0])
    """

    def _observe(self, t: int) -> np.ndarray:
        return self._fill(float(self._rng.integers(2)))

    def _reward(self, action: Any) -> float:
        return 1.0 - abs(float(np.asarray(action).reshape(-1)[0]) - float(self._obs[0]))


@ENV_REGISTRY.register("rnn_policy_unittest")
class RNNPolicyUnittestEnv(UnittestEnv):
    """A random bit is shown at the first step only (0.5 afterwards); from step ``gap`` on, acting it earns 1.

    Rewards as :class:`PolicyUnittestEnv`'s, against the first step's bit, at steps ``gap .. episode_length - 1``
    (0 before). A policy that remembers the bit earns ``episode_length - gap`` per episode; one without memory
    cannot tell the bit after the first step. ``gap`` must be below ``episode_length``.

    Example:
        >>> env = RNNPolicyUnittestEnv({'episode_length': 4, 'gap': 2})
        >>> env.seed(1)
        >>> bit = int(env.reset()[0])
        >>> [float(env.step(bit).reward[0]) for _ in range(4)], float(env._obs[0])
        ([0.0, 0.0, 1.0, 1.0], 0.5)
    """

    config: ClassVar[dict[str, Any]] = {"gap": count(3, low=0)}

    @classmethod
    def check_config(cls, cfg: Mapping[str, Any]) -> None:
        super().check_config(cfg)
        gap = cfg["gap"]
        if gap >= cfg["episode_length"]:
            raise ConfigError(
                f"{cls.__name__}: gap must be below episode_length={cfg['episode_length']}; got gap={gap}"
            )

    def _observe(self, t: int) -> np.ndarray:
        if t == 0:
            self._bit = float(self._rng.integers(2))
            return self._fill(self._bit)
        return self._fill(0.5)

    def _reward(self, action: Any) -> float:
        if self._t < int(self._cfg.gap):
            return 0.0
        return 1.0 - abs(float(np.asarray(action).reshape(-1)[0]) - self._bit)


@ENV_REGISTRY.register("mixed_policy_unittest")
class MixedPolicyUnittestEnv(UnittestEnv):
    """Actions are ``(discrete in {0, 1}, continuous in [0, 1])``; reward 1 when ``discrete == (continuous > 0.5)``.

    The observation is a random bit, which the reward ignores. Any consistent pair earns ``episode_length`` per
    episode. ``action_type`` must stay ``'discrete'`` (the action is always the pair).

    Example:
        >>> env = MixedPolicyUnittestEnv({'episode_length': 2})
        >>> _ = env.reset()
        >>> env.step((1, np.float32([0.9]))).reward.tolist(), env.step((1, np.float32([0.1]))).reward.tolist()
        ([1.0], [0.0])
    """

    @classmethod
    def action_space_of(cls, cfg: Mapping[str, Any]) -> spaces.Space[Any]:
        if cfg["action_type"] != "discrete":
            raise ConfigError(f"{cls.__name__}: the action is a (discrete, continuous) pair; leave action_type alone")
        return spaces.Tuple((spaces.Discrete(2), spaces.Box(0.0, 1.0, (1,), np.float32)))

    def _check_action(self, action: Any) -> Any:
        space = self.action_space
        try:
            discrete, continuous = action
        except (TypeError, ValueError) as err:
            raise ValueError(
                f"{type(self).__name__}: action must be a (discrete, continuous) pair; got {action!r}"
            ) from err
        value = (int(np.asarray(discrete).reshape(-1)[0]), np.asarray(continuous, dtype=np.float32).reshape(1))
        if not space.contains(value):
            raise ValueError(f"{type(self).__name__}: action {action!r} is outside {space}")
        return value

    def _observe(self, t: int) -> np.ndarray:
        return self._fill(float(self._rng.integers(2)))

    def _reward(self, action: Any) -> float:
        discrete, continuous = action
        return float(discrete == int(continuous[0] > 0.5))
