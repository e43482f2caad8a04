"""``BaseEnvManager``: the manager API, running every env in the calling process.

It defines the semantics every manager shares (the conformance suite checks them):

- ``launch`` builds and resets every env; ``ready_obs`` holds the observation of each env waiting
  for an action; ``step({env_id: action})`` steps those envs and returns their timesteps. A
  manager is ``closed`` before ``launch`` and after ``close``, and can be launched again.
- With ``auto_reset`` an env whose episode ended is reset inside the same ``step`` call, so its
  next ``ready_obs`` entry is the new episode's first observation; without it the env waits in
  ``NEED_RESET`` until ``reset({env_id: ...})``.
- After ``episode_num`` completed episodes (counted from ``launch``) an env is ``DONE`` and
  leaves ``ready_obs``; ``done`` is true when every env is.
- A fault (an exception in reset or step, a call past its timeout, a dead or hung worker) ends the
  env's episode with an *abnormal* timestep (``done=True``, ``info['abnormal'] = True``,
  ``info['error']`` the error text) and the env is reset (``retry_type='reset'``) or built anew
  (``'renew'``). Abnormal episodes do not count towards ``episode_num``. ``max_retry`` is the
  number of attempts: when an env's consecutive failures (since its last successful step or the
  caller's last reset of it) reach it, the env is ``ERROR`` and the call raises; the manager stays
  open, the other envs keep their steps, and ``reset`` revives the env. A failed ``launch``
  leaves the manager closed.

Envs whose constructors declare their spaces are checked against them (actions included); other
envs (DI-engine's style) have their spaces read from one built instance (``env_ref``) and check
their own actions.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from ding.envs.env_manager.batch import BatchTimestep, ObsBatch, stack_obs
from ding.envs.env_manager.env_fn import EnvFn, build_env
from ding.envs.env_manager.env_thread import CallTimeout, EnvThread
from ding.envs.env_manager.fanout import describe_attribute
from ding.envs.env_manager.manager_api import ManagerAPI
from ding.envs.env_manager.settings import reset_wait, seed_env
from ding.envs.env_manager.state import EnvState
from ding.envs.probe import class_declared_spaces
from ding.envs.spaces import EnvSpaces
from ding.envs.timestep import BaseEnvTimestep
from ding.errors import EnvManagerError, EnvSpecError, WorkerTimeoutError

__all__ = ["BaseEnvManager", "BatchTimestep", "ObsBatch", "stack_obs"]
R = TypeVar("R")


class BaseEnvManager(ManagerAPI):
    """Serial env manager: every env lives and steps in the calling process.

    Example:
        >>> from functools import partial
        >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
        >>> manager = BaseEnvManager([partial(CartPoleEnv, cfg={}) for _ in range(2)], {'episode_num': 1})
        >>> manager.observation_space.shape        # known before launch
        (4,)
        >>> manager.seed(0)
        >>> manager.launch()
        >>> while not manager.done:
        ...     timesteps = manager.step({i: 0 for i in manager.ready_obs_id})
        >>> manager.close()
    """

    manager_type = "base"

    def __init__(self, env_fn: Sequence[EnvFn], cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(env_fn, cfg)
        self._envs: list[Any] = []
        self._threads: dict[int, EnvThread] = {}
        """Per-env threads of envs whose calls have a timeout."""

    def in_process_envs(self) -> list[Any] | None:
        """The env objects, built in this process at launch; None for a manager whose envs run in workers (reached
        through :meth:`call_envs`)."""
        if type(self)._create_envs is not BaseEnvManager._create_envs:
            return None
        return list(self._envs)

    # ----- in-process implementation (subprocess managers override these) --------------------------
    def _create_envs(self) -> None:
        self._envs = [build_env(fn, env_id) for env_id, fn in enumerate(self._env_fns)]
        if not self._spaces_declared:  # factories of classes that declare their spaces count as declared
            found = [class_declared_spaces(env) for env in self._envs]
            same = found[0] is not None and all(spaces == found[0] for spaces in found)
            if same and self._spaces in (None, found[0]):
                self._spaces_declared, self._spaces = True, found[0]
        if self._spaces_declared:
            for env_id, env in enumerate(self._envs):
                built = EnvSpaces(env.observation_space, env.action_space, env.reward_space)
                if built != self._spaces:
                    raise EnvSpecError(f"env {env_id} has spaces {built}, but the batch declares {self._spaces}")
        self._apply_seeds()
        if self._replay_dirs is not None:
            self._apply_replay()

    def _apply_seeds(self, env_ids: Sequence[int] | None = None) -> None:
        for env_id in env_ids if env_ids is not None else range(self._env_num):
            if env_id in self._seeds:
                seed_env(self._envs[env_id], self._seeds[env_id], self._dynamic_seed)

    def _apply_replay(self, env_ids: Sequence[int] | None = None) -> None:
        assert self._replay_dirs is not None
        for env_id in env_ids if env_ids is not None else range(self._env_num):
            self._envs[env_id].enable_save_replay(self._replay_dirs[env_id])

    def _env_call(self, env_id: int, fn: Callable[[], R], timeout: float | None, operation: str) -> R:
        """Call ``fn`` (an env's reset or step): directly, or on the env's thread when a timeout applies."""
        thread = self._threads.get(env_id)
        if thread is None:
            if timeout is None:
                return fn()
            thread = self._threads[env_id] = EnvThread(f"ding-env-{env_id}")
        try:
            return thread.call(fn, timeout)
        except CallTimeout:
            del self._threads[env_id]
            self._stuck.add(env_id)
            raise WorkerTimeoutError(f"env {env_id} did not finish {operation} within {timeout} s") from None

    def _reset_envs(self, params: Mapping[int, dict[str, Any]]) -> None:
        for env_id, kwargs in params.items():
            self._reset_one(env_id, kwargs)
            if self._launching and self._fatal:
                return  # the launch fails: the other envs need no reset

    def _reset_one(self, env_id: int, kwargs: Mapping[str, Any]) -> None:
        timeout = reset_wait(self._reset_timeout, self._connect_timeout)
        while True:
            if env_id in self._stuck:
                self._renew_env(env_id)
            self._env_states[env_id] = EnvState.RESET
            env = self._envs[env_id]
            error: EnvManagerError
            try:
                obs = self._env_call(env_id, functools.partial(env.reset, **kwargs), timeout, "reset")
            except WorkerTimeoutError as err:
                error = err
            except Exception as exc:  # env code may raise anything; it is reported with its traceback
                error = self._error_from(env_id, "reset", exc)
            else:
                self._ready_obs[env_id] = obs
                self._env_states[env_id] = EnvState.RUN
                return
            if not self._recover(env_id, error):
                return
            self._wait_before_retry()

    def _step_envs(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        timesteps = {}
        timeout = self._step_timeout
        timed = timeout is not None or bool(self._threads)
        for env_id, action in actions.items():
            env = self._envs[env_id]
            try:
                if timed:
                    timesteps[env_id] = self._env_call(env_id, functools.partial(env.step, action), timeout, "step")
                else:
                    timesteps[env_id] = env.step(action)
            except WorkerTimeoutError as err:
                timesteps[env_id] = self._abnormal(env_id, err)
            except Exception as exc:  # see _reset_one
                timesteps[env_id] = self._abnormal(env_id, self._error_from(env_id, "step", exc))
        return timesteps

    def _renew_env(self, env_id: int) -> None:
        """Build env ``env_id`` anew; an env stuck in an overrun call is abandoned with its thread, not closed."""
        thread = self._threads.pop(env_id, None)
        if thread is not None:
            thread.stop()
        if env_id in self._stuck:
            self._stuck.discard(env_id)
        else:
            with contextlib.suppress(Exception):  # a broken env may fail to close; it is replaced either way
                self._envs[env_id].close()
        self._envs[env_id] = build_env(self._env_fns[env_id], env_id)
        self._apply_seeds([env_id])
        if self._replay_dirs is not None:
            self._apply_replay([env_id])

    def _close_envs(self) -> None:
        """Close every env; the closed envs stay in ``_envs`` (DI-engine's tests inspect them)."""
        for thread in self._threads.values():
            thread.stop()
        self._threads = {}
        errors = []
        for env_id, env in enumerate(self._envs):
            if env_id in self._stuck:
                continue  # its thread may still be inside it
            try:
                env.close()
            except Exception as exc:  # close every env before reporting
                errors.append(exc)
        if errors:
            raise EnvManagerError(f"{len(errors)} env(s) failed to close; first: {errors[0]!r}") from errors[0]

    def _describe_all(self, name: str) -> dict[int, tuple[Any, ...]]:
        """What ``name`` is on each env (see :func:`~ding.envs.env_manager.fanout.describe_attribute`)."""
        return {env_id: describe_attribute(env, name) for env_id, env in enumerate(self._envs)}

    def _call_envs(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], env_ids: Sequence[int] | None
    ) -> dict[int, Any]:
        """Call method ``name`` of the envs ``env_ids`` (None: every env); results by env id."""
        ids = range(self._env_num) if env_ids is None else env_ids
        return {env_id: getattr(self._envs[env_id], name)(*args, **kwargs) for env_id in ids}
