"""DI-engine's ``MujocoDiscEnv``: a MuJoCo env whose actions are the points of a grid over its action box."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ding.envs import ENV_REGISTRY, EnvSpaces
from ding.errors import ConfigError
from ding.utils.accepts import count, optional
from dizoo.action_grid import grid_action_space, grid_discrete_action
from dizoo.flags import bool_flag
from dizoo.mujoco.envs.mujoco_env import MujocoEnv, mujoco_raw_spaces


def _disc_size(cfg: Mapping[str, Any]) -> int:
    size = cfg.get("each_dim_disc_size")
    if size is None:
        raise ConfigError(
            "mujoco-disc: each_dim_disc_size is required: the number of values each action dimension takes "
            "(the env has each_dim_disc_size ** action_dim discrete actions)"
        )
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 2:
        raise ConfigError(f"mujoco-disc: each_dim_disc_size must be an int >= 2, got {size!r}")
    return int(size)


@ENV_REGISTRY.register("mujoco-disc")
class MujocoDiscEnv(MujocoEnv):
    """:class:`MujocoEnv` with ``Discrete(n ** k)`` actions: ``n = each_dim_disc_size`` values per dimension.

    Each of the k action dimensions takes one of n evenly spaced values from -1 to 1 (the bounds of gymnasium's
    MuJoCo actions, both included), and action ``i`` is the grid point ``numpy.unravel_index(i, [n] * k)``, the
    last dimension fastest (the order of DI-engine's Cartesian product). ``_raw_action_space`` is the
    simulator's Box. Every other key is :class:`MujocoEnv`'s; ``act_scale``, ``action_clip`` and
    ``action_bins_per_branch`` concern continuous actions and are not accepted here.

    Example:
        >>> MujocoDiscEnv.spaces_from_config({'env_id': 'Hopper-v5', 'each_dim_disc_size': 3}).action
        Discrete(27)
    """

    config: ClassVar[dict[str, Any]] = {
        "each_dim_disc_size": optional(count(low=2), note="values per action dimension (required)"),
        "act_scale": False,
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg)
        raw_action = mujoco_raw_spaces(str(self._cfg.env_id), self._cfg.env_kwargs or {}).action
        assert isinstance(raw_action, spaces.Box)
        self._raw_action_space = raw_action

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        continuous = super().raw_spaces(cfg)
        return continuous.replace(action=grid_action_space(continuous.action, _disc_size(cfg)))

    @classmethod
    def action_steps(cls, cfg: Mapping[str, Any]) -> list[Any]:
        """None: the grid is part of the simulator's side; the continuous-action keys are refused."""
        for key in ("act_scale", "action_clip"):
            if bool_flag(cfg, key, "mujoco-disc"):
                raise ConfigError(
                    f"mujoco-disc: {key}=True concerns continuous actions; this env's actions are grid indices whose "
                    "values already lie within the bounds. Leave it False (or use the 'mujoco' env)"
                )
        if cfg.get("action_bins_per_branch") is not None:
            raise ConfigError(
                "mujoco-disc: action_bins_per_branch is the 'mujoco' env's per-dimension discretization; "
                "this env is set by each_dim_disc_size"
            )
        return []

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        return grid_discrete_action(super()._make_raw_env(render), _disc_size(self._cfg))
