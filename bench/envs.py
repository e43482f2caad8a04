"""A synthetic env with a tunable cost per step and reset, as a ding ``BaseEnv`` and as a gymnasium env.

The simulator and the gymnasium face are :mod:`bench.synthetic_core` (no ding import, so the peers' own venvs run
the same code); this module adds ding's face and ding's ``ConfigError``.

The cost is spent in a busy loop (CPU work, not sleep), so it models simulator compute. Observations
are deterministic: they come from a fixed bank of frames, indexed by the episode seed and the
actions taken. Both faces share one simulator core and return identical observations (of the declared
dtype: float32 vectors, uint8 images), so contenders driving either face do the same work.

Config keys (``SyntheticEnv.config``):

- ``step_cost_us`` / ``reset_cost_us``: microseconds of busy CPU work per step / per reset.
- ``obs_kind``: ``"vector4"`` (4 float32) or ``"image"`` (4x84x84 uint8).
- ``episode_len``: steps per episode; the last one is ``truncated`` (a time limit, never ``terminated``).
- ``hang_at_step``: ``None``, or k: the env's k-th ``step`` call since construction never returns
  (for hung-worker tests; use it only in a subprocess manager with a ``step_timeout``).

Example:
    >>> env = SyntheticEnv({'obs_kind': 'vector4', 'episode_len': 2})
    >>> env.observation_space.shape, env.action_space
    ((4,), Discrete(2))
    >>> env.seed(0, dynamic_seed=False)
    >>> obs = env.reset()
    >>> [env.step(1).done for _ in range(2)]
    [False, True]
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import numpy as np

from bench import synthetic_core
from bench.synthetic_core import BANK_SIZE, OBS_KINDS, SYNTHETIC_DEFAULTS, burn_cpu, hang_forever
from ding.envs import ENV_REGISTRY, BaseEnv, BaseEnvTimestep, EnvSpaces
from ding.errors import ConfigError


@contextlib.contextmanager
def config_errors() -> Iterator[None]:
    """The simulator's config errors (``ValueError``) as ding's ``ConfigError``."""
    try:
        yield
    except ValueError as err:
        raise ConfigError(str(err)) from None


def check_synthetic_config(cfg: Mapping[str, Any]) -> None:
    """Reject synthetic-env settings outside their accepted values, naming key and value."""
    with config_errors():
        synthetic_core.check_synthetic_config(cfg)


def synthetic_raw_spaces(cfg: Mapping[str, Any]) -> EnvSpaces:
    """The simulator's own spaces for ``cfg``: a 4-float vector or a 4x84x84 uint8 image; 2 actions."""
    with config_errors():
        return EnvSpaces(*synthetic_core.synthetic_spaces(cfg))


class SyntheticCore(synthetic_core.SyntheticCore):
    """The simulator, its config errors as ding's."""

    def __init__(self, cfg: Mapping[str, Any]) -> None:
        with config_errors():
            super().__init__(cfg)


@ENV_REGISTRY.register("synthetic")
class SyntheticEnv(BaseEnv):
    """The synthetic env behind ding's ``BaseEnv`` API, with statically declared spaces."""

    config: ClassVar[dict[str, Any]] = dict(SYNTHETIC_DEFAULTS)

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg)
        self._core = SyntheticCore(self._cfg)

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        return synthetic_raw_spaces(cfg)

    def reset(self) -> np.ndarray:
        return self._core.reset(self._next_episode_seed())

    def step(self, action: Any) -> BaseEnvTimestep:
        obs, ended = self._core.step(int(action))
        return BaseEnvTimestep(obs, np.ones(1, np.float32), ended, {}, terminated=False, truncated=ended)

    def close(self) -> None:
        """Nothing to release."""

    @property
    def total_steps(self) -> int:
        """Step calls since construction (``hang_at_step`` counts these)."""
        return self._core.total_steps


class GymSyntheticEnv(synthetic_core.GymSyntheticEnv):
    """The same simulator as a gymnasium env, for gymnasium's vector envs; its config errors are ding's.

    Its observations equal the ding face's, so both move the same bytes.

    Example:
        >>> env = GymSyntheticEnv({'obs_kind': 'image'})
        >>> obs, info = env.reset(seed=3)
        >>> obs.shape, obs.dtype, env.observation_space.contains(obs)
        ((4, 84, 84), dtype('uint8'), True)
    """

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        with config_errors():
            super().__init__(cfg)


__all__ = [
    "BANK_SIZE",
    "OBS_KINDS",
    "SYNTHETIC_DEFAULTS",
    "GymSyntheticEnv",
    "SyntheticCore",
    "SyntheticEnv",
    "burn_cpu",
    "check_synthetic_config",
    "hang_forever",
    "synthetic_raw_spaces",
]
