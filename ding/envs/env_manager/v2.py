"""DI-engine's ``V2`` managers: stacked ready observations in, a list of timesteps out.

``ready_obs`` stacks the ready envs' observations (in ``ready_obs_id`` order; Dict observations
per key), ``step`` takes one action per ready env in that order and returns one
:class:`TimestepV2` per stepped env, whose fields are attributes (``timestep.info.abnormal``, and
``timestep.env_id.item()``), as DI-engine's treetensor timesteps are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from ding.envs.env_manager.base_manager import BaseEnvManager
from ding.envs.env_manager.batch import empty_stack, stack_obs
from ding.envs.env_manager.engine import EngineFactory
from ding.envs.env_manager.factory import ENV_MANAGER_REGISTRY
from ding.envs.env_manager.subprocess_manager import SyncSubprocessEnvManager
from ding.envs.values.timestep import BaseEnvTimestep


class AttrDict(dict[str, Any]):
    """A dict whose keys read as attributes too.

    >>> info = AttrDict({'abnormal': True})
    >>> info.abnormal, 'abnormal' in info
    (True, True)
    """

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"info has no key {name!r}; keys: {sorted(self)}") from None


@dataclasses.dataclass(frozen=True)
class TimestepV2:
    """One env's step, with its env id as a NumPy integer array."""

    obs: Any
    reward: Any
    done: bool
    info: AttrDict
    env_id: np.ndarray
    terminated: bool
    truncated: bool

    @classmethod
    def of(cls, env_id: int, timestep: BaseEnvTimestep) -> TimestepV2:
        info = timestep.info if isinstance(timestep.info, Mapping) else {}
        return cls(
            timestep.obs,
            timestep.reward,
            timestep.done,
            AttrDict(info),
            np.asarray(env_id, dtype=np.int64),
            bool(timestep.terminated),
            bool(timestep.truncated),
        )


class BaseEnvManagerV2(BaseEnvManager):
    """:class:`BaseEnvManager` with DI-engine's V2 interface.

    Example:
        >>> from functools import partial
        >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
        >>> manager = BaseEnvManagerV2([partial(CartPoleEnv, cfg={}) for _ in range(2)])
        >>> manager.launch()
        >>> manager.ready_obs.shape
        (2, 4)
        >>> [t.env_id.item() for t in manager.step([0, 1])]
        [0, 1]
        >>> manager.close()
    """

    manager_type = "base_v2"

    @property
    def ready_obs(self) -> Any:  # type: ignore[override]
        """The ready envs' observations stacked in ``ready_obs_id`` order."""
        ids = self.ready_obs_id
        if not ids:
            return empty_stack(self._spaces.observation if self._spaces is not None else None)
        return stack_obs([self._ledger.obs(i) for i in ids])

    def step(self, actions: Any) -> list[TimestepV2]:  # type: ignore[override]
        """Step every ready env with its row of ``actions`` (a sequence or array in ``ready_obs_id`` order).

        A dict ``{env_id: action}`` steps the envs it names.
        """
        self._check_launched()
        if isinstance(actions, Mapping):
            by_env = dict(actions)
        else:
            ids = self.ready_obs_id
            rows = list(actions)
            if len(rows) != len(ids):
                raise ValueError(
                    f"step() got {len(rows)} actions for the {len(ids)} ready envs {ids} (one per env, in "
                    "ready_obs_id order)"
                )
            by_env = dict(zip(ids, rows, strict=True))
        timesteps = super().step(by_env)
        return [TimestepV2.of(env_id, timestep) for env_id, timestep in timesteps.items()]


class SubprocessEnvManagerV2(BaseEnvManagerV2):
    """:class:`SyncSubprocessEnvManager`'s configuration (its config and engine) with DI-engine's V2 interface (see
    :class:`BaseEnvManagerV2`)."""

    manager_type = "subprocess_v2"
    config: ClassVar[dict[str, Any]] = SyncSubprocessEnvManager.config
    make_engine: ClassVar[EngineFactory] = SyncSubprocessEnvManager.make_engine


ENV_MANAGER_REGISTRY.register("base_v2")(BaseEnvManagerV2)
ENV_MANAGER_REGISTRY.register("subprocess_v2")(SubprocessEnvManagerV2)
