"""Envs of a user's own, for the tests of a config's wrapper chain around them (``ChainedEnv``).

- :class:`CountingEnv` declares its spaces (``raw_spaces``) and its keys (``config``, strict); observations are
  ``[t, t, noise]`` (``noise`` drawn from the env's own generator, which its own ``seed`` seeds), the reward is 1 per
  step, episodes last ``episode_len`` steps. Every step's ``info`` says what the env received: the action's type,
  dtype and shape, and the arguments of its last ``seed`` call.
- :class:`PropertyCountingEnv` is the same env written DI-engine's way: no ``raw_spaces``, spaces as properties first
  known after ``reset``.
- Envs that cannot take a chain: :class:`OwnChainEnv` (its own ``wrapper_chain``), :class:`NativeBatchEnv`
  (``batched``) and :class:`TeamRewardEnv` (a reward per agent).
- :class:`LyingEnv` declares float32 observations in ``[0, 1]`` but returns values above 1 (``lie='bounds'``) or
  float64 arrays (``lie='dtype'``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from ding.envs import BaseEnv, BaseEnvTimestep, EnvSpaces
from ding.envs.env_registry import ENV_REGISTRY

OBS_SPACE = spaces.Box(0.0, 1000.0, (3,), np.float32)
ACTION_SPACE = spaces.Discrete(3)
REWARD_SPACE = spaces.Box(0.0, 1.0, (1,), np.float32)


class _Counting:
    """The dynamics both counting envs share."""

    _cfg: Mapping[str, Any]

    def _start(self) -> np.ndarray:
        self._t = 0
        self._rng = getattr(self, "_rng", None) or np.random.default_rng()
        if not getattr(self, "_dynamic", True):
            self._rng = np.random.default_rng(self._seeded_with)
        return self._obs()

    def _obs(self) -> np.ndarray:
        return np.array([self._t, self._t, self._rng.uniform(0, 1)], np.float32)

    def _step(self, action: Any) -> BaseEnvTimestep:
        self._t += 1
        arr = np.asarray(action)
        info = {
            "action_type": type(action).__name__,
            "action_dtype": str(arr.dtype),
            "action_shape": arr.shape,
            "seed_call": getattr(self, "_seed_call", None),
        }
        return BaseEnvTimestep(self._obs(), np.ones(1, np.float32), self._t >= self._cfg["episode_len"], info)

    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        self._seed_call = (seed, dynamic_seed)
        self._seeded_with, self._dynamic = seed, dynamic_seed
        self._rng = np.random.default_rng(seed)


@ENV_REGISTRY.register("chain_counting")
class CountingEnv(_Counting, BaseEnv):
    config: ClassVar[dict[str, Any]] = {"episode_len": 200}

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        return EnvSpaces(OBS_SPACE, ACTION_SPACE, REWARD_SPACE)

    def reset(self) -> np.ndarray:
        return self._start()

    def step(self, action: Any) -> BaseEnvTimestep:
        return self._step(action)

    def close(self) -> None:
        pass


@ENV_REGISTRY.register("chain_property_counting")
class PropertyCountingEnv(_Counting, BaseEnv):
    def __init__(self, cfg: Mapping[str, Any]) -> None:
        self._cfg = {"episode_len": 200, **cfg}
        self._known = False

    @property
    def observation_space(self) -> spaces.Space[Any]:  # type: ignore[override]
        if not self._known:
            raise AttributeError("the observation space is known after reset")
        return OBS_SPACE

    @property
    def action_space(self) -> spaces.Space[Any]:  # type: ignore[override]
        if not self._known:
            raise AttributeError("the action space is known after reset")
        return ACTION_SPACE

    @property
    def reward_space(self) -> spaces.Space[Any]:  # type: ignore[override]
        return REWARD_SPACE

    def reset(self) -> np.ndarray:
        self._known = True
        return self._start()

    def step(self, action: Any) -> BaseEnvTimestep:
        return self._step(action)

    def render(self) -> np.ndarray:
        return np.full((4, 4, 3), self._t, np.uint8)

    def close(self) -> None:
        pass


@ENV_REGISTRY.register("chain_own_chain")
class OwnChainEnv(CountingEnv):
    @classmethod
    def wrapper_chain(cls, cfg: Mapping[str, Any]) -> Any:
        return [("frame_stack", {"n_frames": 2})]


@ENV_REGISTRY.register("chain_native_batch")
class NativeBatchEnv(CountingEnv):
    batched = True
    batch_size = 2


@ENV_REGISTRY.register("chain_team_reward")
class TeamRewardEnv(CountingEnv):
    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        return EnvSpaces(OBS_SPACE, ACTION_SPACE, spaces.Box(0.0, 1.0, (3,), np.float32))


@ENV_REGISTRY.register("chain_lying")
class LyingEnv(BaseEnv):
    config: ClassVar[dict[str, Any]] = {"lie": "bounds", "episode_len": 20}

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        return EnvSpaces(spaces.Box(0.0, 1.0, (2,), np.float32), spaces.Discrete(2))

    def reset(self) -> np.ndarray:
        self._t = 0
        return self._obs()

    def _obs(self) -> np.ndarray:
        if self._cfg["lie"] == "dtype":
            return np.full(2, 0.5, np.float64)
        return np.full(2, self._t / 4, np.float32)  # above 1 from step 5 on

    def step(self, action: Any) -> BaseEnvTimestep:
        self._t += 1
        return BaseEnvTimestep(self._obs(), np.zeros(1, np.float32), self._t >= self._cfg["episode_len"], {})

    def close(self) -> None:
        pass
