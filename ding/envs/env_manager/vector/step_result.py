"""One step of a manager's envs as a vector env needs it: whole-batch arrays, and which episodes ended."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from ding.envs.env_manager.base_manager import BaseEnvManager
from ding.errors import EnvManagerError


@dataclasses.dataclass(frozen=True)
class StepResult:
    """Every env's step; envs that did not step have reward 0, no end flag and no info."""

    obs: Any | None
    """The manager's batch of ready observations after a whole-batch step (None after a partial one)."""
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    infos: dict[int, dict[str, Any]]
    """Each stepped env's info."""
    final_obs: dict[int, Any]
    """The last observation of each episode that ended."""


def step_envs(manager: BaseEnvManager, rows: Any, skip: Sequence[int], reward_dtype: np.dtype[Any]) -> StepResult:
    """Step every env but those in ``skip`` with its row of ``rows``: one ``step_batch`` when none is skipped."""
    num_envs = manager.env_num
    skipped = set(skip)
    stepped = [i for i in range(num_envs) if i not in skipped]
    ready = set(manager.ready_obs_id)
    idle = [i for i in stepped if i not in ready]
    if idle:
        states = {i: manager.env_states[i].value for i in idle}
        raise EnvManagerError(f"ManagerVectorEnv steps every env, but envs {states} are not waiting for an action")
    if not skipped:
        batch = manager.step_batch(rows)
        return StepResult(
            obs=batch.obs,
            rewards=np.array(batch.reward, dtype=reward_dtype).reshape(num_envs),
            terminated=np.array(batch.terminated, dtype=bool),
            truncated=np.array(batch.truncated, dtype=bool),
            infos=dict(enumerate(batch.info)),
            final_obs=dict(batch.final_obs),
        )
    rewards = np.zeros(num_envs, dtype=reward_dtype)
    terminated = np.zeros(num_envs, dtype=bool)
    truncated = np.zeros(num_envs, dtype=bool)
    infos: dict[int, dict[str, Any]] = {}
    final_obs: dict[int, Any] = {}
    if stepped:
        for env_id, timestep in manager.step({i: rows[i] for i in stepped}).items():
            rewards[env_id] = np.asarray(timestep.reward).reshape(())
            terminated[env_id], truncated[env_id] = timestep.terminated, timestep.truncated
            infos[env_id] = timestep.info
            if timestep.done:
                final_obs[env_id] = timestep.obs
    return StepResult(None, rewards, terminated, truncated, infos, final_obs)
