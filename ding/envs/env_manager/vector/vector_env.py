"""``ManagerVectorEnv``: a ding env manager as a ``gymnasium.vector.VectorEnv``, with gymnasium's semantics.

Autoreset modes are gymnasium's (``metadata['autoreset_mode']`` says which):

- ``NEXT_STEP`` (the default, as in gymnasium): the step that ends an episode returns its last observation; the
  next ``step`` starts the env's next episode instead of stepping it (its action is ignored) and returns the first
  observation with reward 0, no end flags and the reset's info.
- ``SAME_STEP``: the step that ends an episode returns the next episode's first observation, with the last one in
  ``infos['final_obs']`` and the step's info in ``infos['final_info']`` (rows flagged by ``_final_obs`` /
  ``_final_info``); the reset's info is at the top level.
- ``DISABLED``: the step that ends an episode returns its last observation, and the env must be reset with
  ``reset(options={'reset_mask': mask})`` before it steps again.

A manager with ``auto_reset`` (its default) restarts an env inside the step that ended its episode; the vector env
holds the new episode back until the mode shows it, so nothing is reset twice. Other managers' ended envs are
reset by the vector env when the mode needs them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ding.envs.env_manager.base_manager import BaseEnvManager
from ding.envs.env_manager.env_fn import EnvFn
from ding.envs.env_manager.factory import create_env_manager
from ding.envs.env_manager.subprocess_manager import AsyncSubprocessEnvManager
from ding.envs.env_manager.vector.batch_spaces import (
    BatchSpecError,
    ObservationMode,
    batch_spaces,
    check_observation_mode,
    unequal_spaces_message,
)
from ding.envs.env_manager.vector.batching import action_rows, batch_with_rows, owned
from ding.envs.env_manager.vector.env_calls import EnvCalls, EnvView
from ding.envs.env_manager.vector.passthrough_env import vector_env_fn
from ding.envs.env_manager.vector.render import tile_images
from ding.envs.env_manager.vector.reset_args import reset_env_ids, reset_seeds
from ding.envs.env_manager.vector.step_result import StepResult, step_envs
from ding.errors import EnvManagerError, EnvSpecError

DEFAULT_MANAGER: Mapping[str, Any] = {"type": "base"}
"""The manager ``ManagerVectorEnv(env_fns)`` runs its envs on when given no ``manager_cfg``: in this process, as
gymnasium's ``SyncVectorEnv`` does."""


def autoreset_mode_of(mode: AutoresetMode | str) -> AutoresetMode:
    """``mode`` as an :class:`AutoresetMode` (its value, e.g. ``'NextStep'``, is accepted as gymnasium accepts it).

    >>> autoreset_mode_of('SameStep')
    <AutoresetMode.SAME_STEP: 'SameStep'>
    """
    if isinstance(mode, AutoresetMode):
        return mode
    try:
        return AutoresetMode(mode)
    except ValueError:
        accepted = [m.value for m in AutoresetMode]
        raise ValueError(f"autoreset_mode must be an AutoresetMode or one of {accepted}, got {mode!r}") from None


class ManagerVectorEnv(VectorEnv[Any, Any, np.ndarray]):
    """Drive a ding env manager through gymnasium's vector env API; built as ``SyncVectorEnv`` is, from env functions.

    ``ManagerVectorEnv(env_fns, copy, observation_mode, autoreset_mode)`` takes ``SyncVectorEnv``'s arguments: the
    functions make gymnasium envs (kept as they are, :class:`GymnasiumPassthroughEnv`) or ding envs, and run on the
    manager ``manager_cfg`` describes (default ``{'type': 'base'}``, in this process; ``{'type': 'subprocess'}``
    runs them in worker processes). An already built manager can be given instead of the functions.

    Every env steps in every call (or starts its next episode), so the manager must return whole batches: an async
    manager is rejected. The vector env owns the manager: it launches it when built (as gymnasium's vector envs build
    their envs; a launch resets every env, and the first ``reset()`` without a seed returns those observations
    rather than resetting again, unless ``call``, ``set_attr`` or ``render`` reached the envs in between), checks
    every env's spaces against the batch, and ``close()`` closes it.

    Args:
        envs: Functions that make the envs (see :func:`vector_env_fn`), or a built env manager to drive.
        copy: Return observations that stay valid after the next ``step``/``reset``: views the manager hands out
            (a subprocess manager's shared memory) are copied. With ``False`` such views are returned as they are;
            the next call overwrites them and they must not be read after ``close()``.
        autoreset_mode: When an ended episode's env starts its next one (see the module docstring).
        observation_mode: gymnasium's: ``'same'`` (every env has the same observation space), ``'different'``
            (spaces may differ in bounds, not in shape or dtype; the batched space holds each env's) or a
            ``(batched, single)`` pair of spaces.
        tile_frames: ``render()`` returns one image with every env's frame tiled (:func:`tile_images`) instead of
            a tuple of frames.
        manager_cfg: The manager that runs ``envs`` given as functions (a ding manager config, e.g.
            ``{'type': 'subprocess', 'envs_per_worker': 2}``).

    Example:
        >>> from functools import partial
        >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
        >>> envs = ManagerVectorEnv(BaseEnvManager([partial(CartPoleEnv, cfg={}) for _ in range(3)]))
        >>> envs.action_space, envs.metadata['autoreset_mode']
        (MultiDiscrete([2 2 2]), <AutoresetMode.NEXT_STEP: 'NextStep'>)
        >>> obs, infos = envs.reset(seed=0)
        >>> obs.shape, infos
        ((3, 4), {})
        >>> obs, rewards, terminations, truncations, infos = envs.step(np.array([0, 1, 0]))
        >>> rewards, terminations
        (array([1., 1., 1.], dtype=float32), array([False, False, False]))
        >>> envs.close()
        >>> import gymnasium as gym
        >>> with ManagerVectorEnv([lambda: gym.make('CartPole-v1')] * 2, manager_cfg={'type': 'subprocess'}) as envs:
        ...     envs.reset(seed=42)[0].shape
        (2, 4)
    """

    def __init__(
        self,
        envs: BaseEnvManager | Sequence[EnvFn],
        copy: bool = True,
        observation_mode: ObservationMode = "same",
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        *,
        manager_cfg: Mapping[str, Any] | None = None,
        tile_frames: bool = False,
    ) -> None:
        manager = _manager_for(envs, manager_cfg)
        try:
            self._setup(manager, copy, observation_mode, autoreset_mode, tile_frames)
        except BaseException:
            manager.close()
            raise

    def _setup(
        self,
        manager: BaseEnvManager,
        copy: bool,
        observation_mode: ObservationMode,
        autoreset_mode: AutoresetMode | str,
        tile_frames: bool,
    ) -> None:
        if isinstance(manager, AsyncSubprocessEnvManager) or manager.partial_batches:
            raise TypeError(
                f"ManagerVectorEnv needs a manager that steps every env in every call (type 'base' or 'subprocess'), "
                f"got {type(manager).__name__} (type {manager.manager_type!r}), which returns partial batches"
            )
        check_observation_mode(observation_mode)
        env_spaces = manager.env_spaces  # declared, or probed from one env built apart from the batch
        reward_shape = tuple(env_spaces.reward.shape or (1,))
        if int(np.prod(reward_shape)) != 1:
            raise ValueError(
                f"ManagerVectorEnv needs one reward value per step (reward shape (1,) or ()), got shape {reward_shape}"
            )
        self._manager = manager
        self._calls = EnvCalls(manager)
        self.copy = bool(copy)
        self.tile_frames = bool(tile_frames)
        self.autoreset_mode = autoreset_mode_of(autoreset_mode)
        self.observation_mode = observation_mode
        self.num_envs = manager.env_num
        self.single_observation_space = env_spaces.observation
        self.single_action_space = env_spaces.action
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._reward_dtype = np.dtype(env_spaces.reward.dtype or np.float32)
        self.metadata = {"autoreset_mode": self.autoreset_mode}
        self._ended: dict[int, Any] = {}
        """NEXT_STEP / DISABLED: envs whose episode ended at the last step, with the last observation returned."""
        self._given_seeds: list[int | None] = [None] * self.num_envs
        self._fresh = False
        """Every env holds the first observation of an episode nothing has touched yet (right after launch)."""
        self._start()

    @property
    def manager(self) -> BaseEnvManager:
        """The driven env manager."""
        return self._manager

    # ----- the vector env API --------------------------------------------------------------------------
    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every env, or those ``options['reset_mask']`` selects, and return every env's observation.

        Args:
            seed: ``int`` seeds env ``i`` with ``seed + i``; a list gives one seed (or None) per env; None keeps
                each env's own seeding. What a seed does is the env's: :class:`GymnasiumPassthroughEnv` seeds its
                next reset as gymnasium does, DI-engine-style envs seed their episode seeds.
            options: Only ``reset_mask`` (a bool array of shape ``(num_envs,)``) is accepted: ding envs reset
                without options.

        Returns:
            The observations of every env (unmasked envs keep their last one) and the infos of the resets.
        """
        env_ids = reset_env_ids(options, self.num_envs)
        seeds = reset_seeds(seed, self.num_envs, env_ids)
        if not self._manager.launched:
            self._start(seeds)
        elif not (self._fresh and not seeds):  # right after launch, every env's episode is still untouched
            if seeds:
                self._manager.seed(seeds)
            ready = set(self._manager.ready_obs_id)
            # An env whose ended episode the manager already restarted has a fresh first observation waiting.
            restarted = {i for i in env_ids if i in self._ended and i in ready and i not in seeds}
            stale = [i for i in env_ids if i not in restarted]
            if stale:
                self._manager.reset({i: {} for i in stale})
        self._fresh = False
        for env_id in env_ids:
            self._ended.pop(env_id, None)
        for env_id, env_seed in seeds.items():
            self._given_seeds[env_id] = env_seed
        infos: dict[str, Any] = {}
        for env_id, info in self._calls.reset_infos(env_ids).items():
            infos = self._add_info(infos, info, env_id)
        return self._observations(), infos

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every env with its row of ``actions`` (an env starting its next episode ignores its row).

        Returns:
            Batched ``(observations, rewards, terminations, truncations, infos)``; observations and rewards have the
            dtypes of the envs' spaces (rewards: the reward space's, float32 unless the env declares another).
        """
        rows = action_rows(self.single_action_space, self.action_space, self.num_envs, actions)
        if not self._manager.launched:
            raise EnvManagerError("ManagerVectorEnv.step() after close(): its manager is closed")
        self._fresh = False
        if self._ended and self.autoreset_mode is AutoresetMode.DISABLED:
            raise EnvManagerError(
                f"envs {sorted(self._ended)} ended their episodes and autoreset_mode is DISABLED: reset them with "
                "reset(options={'reset_mask': mask}) before stepping"
            )
        starting = sorted(self._ended)  # NEXT_STEP: these envs start their next episode instead of stepping
        if starting:
            waiting = [i for i in starting if i not in set(self._manager.ready_obs_id)]
            if waiting:
                self._manager.reset({i: {} for i in waiting})
            self._ended = {}
        result = step_envs(self._manager, rows, starting, self._reward_dtype)
        infos: dict[str, Any] = {}
        for env_id, info in self._calls.reset_infos(starting).items():
            infos = self._add_info(infos, info, env_id)
        if self.autoreset_mode is AutoresetMode.SAME_STEP:
            obs = self._same_step(result, infos)
        else:
            obs = self._next_step(result, infos)
        return obs, result.rewards, result.terminated, result.truncated, infos

    def render(self) -> Any:
        """Each env's frame (a tuple, gymnasium's form), or one tiled image with ``tile_frames``."""
        self._touch()
        frames = self._calls.call("render", None)
        ordered = tuple(frames[i] for i in range(self.num_envs))
        return tile_images(ordered) if self.tile_frames else ordered

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Each env's method ``name`` called with ``args`` and ``kwargs``, or its attribute ``name`` (one per env)."""
        self._touch()
        return self._calls.values(name, args, kwargs)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Each env's attribute ``name`` (a method is called without arguments, as gymnasium does)."""
        return self.call(name)

    def set_attr(self, name: str, values: list[Any] | tuple[Any, ...] | Any) -> None:
        """Set attribute ``name`` of every env: ``values`` holds one value per env, or is one value for all."""
        if not isinstance(values, (list, tuple)):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise ValueError(
                f"set_attr({name!r}) needs one value per env ({self.num_envs}) or a single value, got {len(values)}"
            )
        self._touch()
        self._calls.set(name, values)

    @property
    def envs(self) -> tuple[EnvView, ...]:
        """Each env, as ``SyncVectorEnv.envs`` lists them: a view reading, setting and calling through the manager."""
        self._check_open()
        return tuple(EnvView(self._calls, env_id, self._touch) for env_id in range(self.num_envs))

    @property
    def render_mode(self) -> str | None:  # type: ignore[override]
        """The envs' render mode (env 0's ``render_mode``; None for envs without one)."""
        self._check_open()
        kind = self._calls.describe("render_mode")[0]
        return kind[1] if kind[0] == "value" else None

    @property
    def np_random_seed(self) -> tuple[int | None, ...]:  # type: ignore[override]
        """Each env's ``np_random_seed``; for envs without one, the seed ``reset`` last gave it (None if none)."""
        self._check_open()
        described = self._calls.describe("np_random_seed")
        return tuple(kind[1] if kind[0] == "value" else self._given_seeds[i] for i, kind in sorted(described.items()))

    def close_extras(self, **kwargs: Any) -> None:
        """Close the manager and its envs."""
        self._ended = {}
        self._fresh = False
        self._manager.close()

    def __enter__(self) -> ManagerVectorEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ManagerVectorEnv({type(self._manager).__name__}, num_envs={self.num_envs})"

    # ----- helpers -------------------------------------------------------------------------------------
    def _start(self, seeds: Mapping[int, int] | None = None) -> None:
        """Launch the manager (every env is built and reset) and check the envs' spaces against the batch.

        A manager launched by the caller is taken as it is (its envs may have stepped already).
        """
        self._ended = {}
        if not self._manager.launched:
            if seeds:
                self._manager.seed(dict(seeds))
            try:
                self._manager.launch()
            except EnvSpecError as err:  # the manager found envs whose spaces do not fit one batch
                detail = f"{type(self._manager).__name__}: {err}"
                if self.observation_mode == "same":
                    raise BatchSpecError(
                        unequal_spaces_message(detail) + " (with a manager that lays out no shared memory)"
                    ) from err
                raise BatchSpecError(f"the envs' observation spaces cannot be batched: {detail}") from err
            self._fresh = True
        obs_spaces = self._calls.describe("observation_space")
        action_spaces = self._calls.describe("action_space")
        self.observation_space, self.single_observation_space = batch_spaces(
            self.observation_mode,
            self.single_observation_space,
            self.single_action_space,
            [obs_spaces[i][-1] for i in range(self.num_envs)],  # a missing space ("missing",) fails the check
            [action_spaces[i][-1] for i in range(self.num_envs)],
        )
        kind = self._calls.describe("metadata")[0]  # env 0's render modes, fps, ...
        if kind[0] == "value" and isinstance(kind[1], Mapping):
            for key, value in kind[1].items():
                self.metadata.setdefault(key, value)

    def _check_open(self) -> None:
        if not self._manager.launched:
            raise EnvManagerError("ManagerVectorEnv is closed: its envs are gone")

    def _touch(self) -> None:
        """Before a call that may change the envs: they no longer hold untouched first observations."""
        self._check_open()
        self._fresh = False

    def _observations(self, rows: Mapping[int, Any] | None = None) -> Any:
        """Every env's observation: ``rows`` (else the last observations of ended episodes), else the ready one."""
        rows = self._ended if rows is None else rows
        if not rows and len(self._manager.ready_obs_id) == self.num_envs:
            obs = self._manager.ready_obs_batch().obs
            return owned(obs) if self.copy else obs
        try:
            return batch_with_rows(self.single_observation_space, self.num_envs, self._manager.ready_obs, rows)
        except KeyError as err:
            raise EnvManagerError(f"{err.args[0]}; env states: {self._manager.env_states}") from None

    def _same_step(self, result: StepResult, infos: dict[str, Any]) -> Any:
        ended = [int(i) for i in np.flatnonzero(result.terminated | result.truncated)]
        finals = self._calls.final_observations(result.final_obs)
        for env_id, info in result.infos.items():
            if env_id in finals:
                final = finals[env_id]
                infos = self._add_info(
                    infos, {"final_obs": owned(final) if self.copy else final, "final_info": dict(info)}, env_id
                )
            elif info:
                infos = self._add_info(infos, dict(info), env_id)
        waiting = [i for i in ended if i not in set(self._manager.ready_obs_id)]
        if waiting:  # ended episodes the manager does not restart by itself
            self._manager.reset({i: {} for i in waiting})
        for env_id, info in self._calls.reset_infos(ended).items():
            infos = self._add_info(infos, info, env_id)
        if result.obs is not None and not waiting:
            return owned(result.obs) if self.copy else result.obs
        return self._observations({})

    def _next_step(self, result: StepResult, infos: dict[str, Any]) -> Any:
        for env_id, info in result.infos.items():
            if info:
                infos = self._add_info(infos, dict(info), env_id)
        self._ended = {env_id: owned(obs) for env_id, obs in result.final_obs.items()}
        if result.obs is not None and not self._ended:
            return owned(result.obs) if self.copy else result.obs
        return self._observations()


def _manager_for(envs: BaseEnvManager | Sequence[EnvFn], manager_cfg: Mapping[str, Any] | None) -> BaseEnvManager:
    """The manager a vector env drives: ``envs`` itself, or one ``manager_cfg`` describes over the env constructors."""
    if isinstance(envs, BaseEnvManager):
        if manager_cfg is not None:
            raise TypeError("ManagerVectorEnv takes a manager_cfg with env constructors only, not with a built manager")
        return envs
    if isinstance(envs, (str, bytes, Mapping)) or not isinstance(envs, Sequence) or not envs:
        raise TypeError(
            "ManagerVectorEnv takes a ding env manager or a non-empty list of functions that make envs (gymnasium or "
            f"ding envs), got {envs!r}"
        )
    return create_env_manager(dict(manager_cfg or DEFAULT_MANAGER), [vector_env_fn(fn) for fn in envs])


def make_vector_env(
    manager_cfg: Mapping[str, Any],
    env_fns: Sequence[EnvFn],
    *,
    copy: bool = True,
    autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
    observation_mode: ObservationMode = "same",
    tile_frames: bool = False,
) -> ManagerVectorEnv:
    """Build the manager ``manager_cfg`` names over ``env_fns`` and wrap it in a :class:`ManagerVectorEnv`.

    ``env_fns`` make ding envs or gymnasium envs (see :func:`vector_env_fn`).

    Example:
        >>> from functools import partial
        >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
        >>> with make_vector_env({'type': 'base'}, [partial(CartPoleEnv, cfg={})] * 2) as envs:
        ...     envs.single_observation_space.shape, envs.observation_space.shape
        ((4,), (2, 4))
    """
    return ManagerVectorEnv(
        env_fns,
        copy=copy,
        observation_mode=observation_mode,
        autoreset_mode=autoreset_mode,
        manager_cfg=manager_cfg,
        tile_frames=tile_frames,
    )
