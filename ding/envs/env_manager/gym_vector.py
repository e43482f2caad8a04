"""``ManagerVectorEnv``: a synchronous ding env manager seen as a ``gymnasium.vector.VectorEnv``.

Autoreset mode is ``AutoresetMode.SAME_STEP``, which is what a ding manager does: an env whose
episode ends is reset inside the same ``step`` call. So for such an env the returned observation
is the *new* episode's first one, and the ended episode's last observation and info are in
``infos['final_obs']`` and ``infos['final_info']`` (rows flagged by ``infos['_final_obs']`` and
``infos['_final_info']``), laid out as gymnasium's own vector envs do in that mode. The info of a
step that did not end an episode is merged at the top level with ``_key`` masks. ding envs report
no info on reset, so a reset leaves no top-level entries.

Observations and rewards keep the dtypes of the envs' spaces (uint8 frames stay uint8; rewards are the reward
space's float32 where gymnasium's own vector envs give float64).

As gymnasium expects, envs play episode after episode: an env the manager leaves waiting after an
episode (``auto_reset=False``, or ``episode_num`` reached) is reset by the adapter in the same step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, iterate

from ding.envs.env_manager.async_manager import AsyncSubprocessEnvManager
from ding.envs.env_manager.base_manager import BaseEnvManager
from ding.envs.env_manager.env_fn import EnvFn
from ding.envs.env_manager.factory import create_env_manager
from ding.errors import EnvManagerError

_ARRAY_ACTIONS = (spaces.Discrete, spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)


def _owned(obs: Any) -> Any:
    """Copy the array leaves of ``obs`` that are views of memory owned elsewhere (e.g. shared memory)."""
    if isinstance(obs, dict):
        return {key: _owned(value) for key, value in obs.items()}
    if isinstance(obs, tuple):
        return tuple(_owned(value) for value in obs)
    if isinstance(obs, np.ndarray) and not obs.flags.owndata:
        return obs.copy()
    return obs


class ManagerVectorEnv(VectorEnv[Any, Any, np.ndarray]):
    """Drive a ding env manager (``base`` or ``subprocess``) through gymnasium's vector env API.

    Every env steps in every call, so the manager must return whole batches: an async manager is
    rejected. The adapter owns the manager: ``close()`` closes it, and a manager that is not launched
    is launched by the first ``reset()``.

    Args:
        manager: The env manager to drive.
        copy: Return observations that stay valid after the next ``step``/``reset``: views the
            manager hands out (a subprocess manager's shared memory) are copied, arrays that own
            their data (stacked or already copied by the manager) are not. With ``False`` such
            views are returned as they are; the next call overwrites them and they must not be
            read after ``close()``.

    Example:
        >>> from functools import partial
        >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
        >>> envs = ManagerVectorEnv(BaseEnvManager([partial(CartPoleEnv, cfg={}) for _ in range(3)]))
        >>> envs.action_space
        MultiDiscrete([2 2 2])
        >>> obs, infos = envs.reset(seed=0)
        >>> obs.shape, infos
        ((3, 4), {})
        >>> obs, rewards, terminations, truncations, infos = envs.step(np.array([0, 1, 0]))
        >>> rewards, terminations
        (array([1., 1., 1.], dtype=float32), array([False, False, False]))
        >>> envs.close()
    """

    def __init__(self, manager: BaseEnvManager, *, copy: bool = True) -> None:
        if not isinstance(manager, BaseEnvManager):
            raise TypeError(f"ManagerVectorEnv takes a ding env manager, got {type(manager).__name__}")
        if isinstance(manager, AsyncSubprocessEnvManager):
            raise TypeError(
                f"ManagerVectorEnv needs a manager that steps every env in every call (type 'base' or 'subprocess'), "
                f"got {type(manager).__name__} (type {manager.manager_type!r}), which returns partial batches"
            )
        env_spaces = manager.env_spaces  # declared, or probed from one env built apart from the batch
        reward_shape = tuple(env_spaces.reward.shape or (1,))
        if int(np.prod(reward_shape)) != 1:
            raise ValueError(
                f"ManagerVectorEnv needs one reward value per step (reward shape (1,) or ()), got shape {reward_shape}"
            )
        self._manager = manager
        self.copy = bool(copy)
        self.num_envs = manager.env_num
        self.single_observation_space = env_spaces.observation
        self.single_action_space = env_spaces.action
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    @property
    def manager(self) -> BaseEnvManager:
        """The driven env manager."""
        return self._manager

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every env (or those ``options['reset_mask']`` selects) and return the batched observations.

        Args:
            seed: ``int`` seeds env ``i`` with ``seed + i``; a list gives one seed (or None) per env;
                None keeps the envs' current seeding.
            options: Only ``reset_mask`` (a bool array of shape ``(num_envs,)``) is accepted.

        Returns:
            The observations of every env and an empty info dict.
        """
        ids = self._reset_ids(options)
        seeds = self._seeds(seed, ids)
        launched = self._manager.launched
        if not launched and len(ids) != self.num_envs:
            raise ValueError("the first reset() of ManagerVectorEnv starts every env; it takes no reset_mask")
        if isinstance(seed, (int, np.integer)):
            super().reset(seed=int(seed))
        if seeds:
            self._manager.seed(seeds)
        if not launched:
            self._manager.launch()
        else:
            self._manager.reset({env_id: {} for env_id in ids})
        return self._observations(), {}

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every env with its row of ``actions``.

        Returns:
            Batched ``(observations, rewards, terminations, truncations, infos)``; observations and rewards
            have the dtypes of the envs' spaces (rewards: the reward space's, float32 by default).
        """
        rows = self._split_actions(actions)
        self._check_all_ready()
        batch = self._manager.step_batch(rows)
        rewards = np.asarray(batch.reward).reshape(self.num_envs)
        infos: dict[str, Any] = {}
        for env_id, info in enumerate(batch.info):
            if batch.done[env_id]:
                final_obs = _owned(batch.final_obs[env_id]) if self.copy else batch.final_obs[env_id]
                final = {"final_obs": final_obs, "final_info": dict(info)}
                infos = self._add_info(infos, final, env_id)
            elif info:
                infos = self._add_info(infos, dict(info), env_id)
        if len(self._manager.ready_obs_id) == self.num_envs:
            obs = _owned(batch.obs) if self.copy else batch.obs
        else:  # ended episodes the manager does not restart by itself
            ready = set(self._manager.ready_obs_id)
            self._manager.reset({env_id: {} for env_id in range(self.num_envs) if env_id not in ready})
            obs = self._observations()
        return obs, rewards, np.asarray(batch.terminated), np.asarray(batch.truncated), infos

    def close_extras(self, **kwargs: Any) -> None:
        """Close the manager and its envs."""
        self._manager.close()

    def __enter__(self) -> ManagerVectorEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ManagerVectorEnv({type(self._manager).__name__}, num_envs={self.num_envs})"

    # ----- helpers -------------------------------------------------------------------------------
    def _reset_ids(self, options: Mapping[str, Any] | None) -> list[int]:
        if options is None:
            return list(range(self.num_envs))
        if not isinstance(options, Mapping):
            raise TypeError(f"reset options must be a dict, got {type(options).__name__}")
        unknown = sorted(set(options) - {"reset_mask"})
        if unknown:
            raise ValueError(f"reset options accept only 'reset_mask' (ding envs reset without options), got {unknown}")
        if "reset_mask" not in options:
            return list(range(self.num_envs))
        mask = options["reset_mask"]
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
            got = f"{mask.dtype} array of shape {mask.shape}" if isinstance(mask, np.ndarray) else type(mask).__name__
            raise ValueError(f"options['reset_mask'] must be a bool array of shape ({self.num_envs},), got {got}")
        if not mask.any():
            raise ValueError("options['reset_mask'] selects no env; set at least one entry to True")
        return [int(i) for i in np.flatnonzero(mask)]

    def _seeds(self, seed: int | Sequence[int | None] | None, ids: list[int]) -> dict[int, int]:
        if seed is None:
            return {}
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            return {i: int(seed) + i for i in ids}
        if isinstance(seed, (list, tuple)):
            if len(seed) != self.num_envs:
                raise ValueError(f"a seed list needs one entry per env ({self.num_envs}), got {len(seed)}")
            return {i: int(s) for i, s in enumerate(seed) if i in ids and s is not None}
        raise TypeError(f"seed must be an int, a list of ints (or None) per env, or None; got {seed!r}")

    def _split_actions(self, actions: Any) -> Any:
        """The actions as one row per env (an array, or a list for composite spaces); each value is checked later."""
        space = self.single_action_space
        if isinstance(space, _ARRAY_ACTIONS):
            batch = np.asarray(actions)
            expected = (self.num_envs, *(space.shape or ()))
            if batch.shape != expected:
                raise ValueError(
                    f"actions must have shape {expected} (num_envs={self.num_envs} rows of {space}), "
                    f"got shape {batch.shape}"
                )
            return batch
        try:
            rows = list(iterate(self.action_space, actions))
        except (TypeError, ValueError, KeyError, IndexError) as err:
            raise ValueError(f"actions do not fit the batched action space {self.action_space}: {err}") from err
        if len(rows) != self.num_envs:
            raise ValueError(f"actions hold {len(rows)} rows for {self.num_envs} envs of {self.action_space}")
        return rows

    def _check_all_ready(self) -> None:
        if not self._manager.launched:
            raise EnvManagerError("ManagerVectorEnv.step() before reset(); call reset() first")
        ready = self._manager.ready_obs_id
        if len(ready) != self.num_envs:
            states = {i: s.value for i, s in self._manager.env_states.items() if i not in ready}
            raise EnvManagerError(f"ManagerVectorEnv steps every env, but envs {states} are not waiting for an action")

    def _observations(self) -> Any:
        batch = self._manager.ready_obs_batch()
        if len(batch.env_ids) != self.num_envs:
            raise EnvManagerError(f"only envs {batch.env_ids.tolist()} of {self.num_envs} are ready after a reset")
        return _owned(batch.obs) if self.copy else batch.obs


def make_vector_env(manager_cfg: Mapping[str, Any], env_fns: Sequence[EnvFn], *, copy: bool = True) -> ManagerVectorEnv:
    """Build the manager ``manager_cfg`` names over ``env_fns`` and wrap it in a :class:`ManagerVectorEnv`.

    Example:
        >>> from functools import partial
        >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
        >>> with make_vector_env({'type': 'base'}, [partial(CartPoleEnv, cfg={})] * 2) as envs:
        ...     envs.single_observation_space.shape, envs.observation_space.shape
        ((4,), (2, 4))
    """
    manager = create_env_manager(manager_cfg, env_fns)
    try:
        return ManagerVectorEnv(manager, copy=copy)
    except BaseException:
        manager.close()
        raise
