"""``InProcessEngine``: every env built and stepped in the calling process (the ``base`` manager's engine).

Envs run one after the other in the caller's thread. With ``step_timeout`` / ``reset_timeout`` set, an env's calls
run on a thread of its own (:mod:`~ding.envs.env_manager.env_thread`), so a call that overruns its timeout becomes
a failure; the env is then abandoned with its thread (it may still be inside the call) and rebuilt before its next
use. Envs whose constructors declare their spaces are checked against them once built.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from ding.envs.env_manager.batch import BatchTimestep, stack_obs, stack_timesteps
from ding.envs.env_manager.core.failure import Failure
from ding.envs.env_manager.engine import EngineParts
from ding.envs.env_manager.env_fn import build_env
from ding.envs.env_manager.env_thread import CallTimeout, EnvThread
from ding.envs.env_manager.fanout import describe_attribute
from ding.envs.env_manager.ledger import Retry
from ding.envs.env_manager.no_workers import NoWorkers
from ding.envs.env_manager.settings import seed_env
from ding.envs.probe import class_declared_spaces
from ding.envs.values.spaces import EnvSpaces
from ding.envs.values.timestep import BaseEnvTimestep
from ding.errors import EnvManagerError, EnvSpecError, WorkerTimeoutError

__all__ = ["InProcessEngine"]
R = TypeVar("R")


class InProcessEngine(NoWorkers):
    """The envs of a manager as objects of this process (see the module docstring)."""

    def __init__(self, parts: EngineParts) -> None:
        self._env_fns = parts.env_fns
        self._settings = parts.settings
        self._ledger = parts.ledger
        self._setup = parts.setup
        self.envs: list[Any] = []
        """The built envs, by env id (closed ones stay after ``close``: DI-engine's tests inspect them)."""
        self._threads: dict[int, EnvThread] = {}
        """Per-env threads of envs whose calls have a timeout."""
        self._stuck: set[int] = set()
        """Envs whose call overran its timeout: abandoned, rebuilt before use."""
        self._launching = False

    # ----- lifecycle -----------------------------------------------------------------------------
    def probe_spaces(self) -> EnvSpaces | None:
        return None  # read from one env built here

    def launch(
        self, spaces: EnvSpaces | None, declared: bool, params: Mapping[int, dict[str, Any]]
    ) -> tuple[EnvSpaces | None, bool]:
        self._stuck = set()
        self.envs = [build_env(fn, env_id) for env_id, fn in enumerate(self._env_fns)]
        if not declared:  # factories of classes that declare their spaces count as declared
            found = [class_declared_spaces(env) for env in self.envs]
            same = found[0] is not None and all(s == found[0] for s in found)
            if same and spaces in (None, found[0]):
                declared, spaces = True, found[0]
        if declared:
            for env_id, env in enumerate(self.envs):
                built = EnvSpaces(env.observation_space, env.action_space, env.reward_space)
                if built != spaces:
                    raise EnvSpecError(f"env {env_id} has spaces {built}, but the batch declares {spaces}")
        self.apply_seeds()
        if self._setup.replay_dirs is not None:
            self.apply_replay()
        self._launching = True
        try:
            self.reset(params)
        finally:
            self._launching = False
        return spaces, declared

    def close(self) -> None:
        """Close every env; the closed envs stay in :attr:`envs`."""
        for thread in self._threads.values():
            thread.stop()
        self._threads = {}
        errors = []
        for env_id, env in enumerate(self.envs):
            if env_id in self._stuck:
                continue  # its thread may still be inside it
            try:
                env.close()
            except Exception as exc:  # close every env before reporting
                errors.append(exc)
        if errors:
            raise EnvManagerError(f"{len(errors)} env(s) failed to close; first: {errors[0]!r}") from errors[0]

    def _renew(self, env_id: int) -> None:
        """Build env ``env_id`` anew; an env stuck in an overrun call is abandoned with its thread, not closed."""
        thread = self._threads.pop(env_id, None)
        if thread is not None:
            thread.stop()
        if env_id in self._stuck:
            self._stuck.discard(env_id)
        else:
            with contextlib.suppress(Exception):  # a broken env may fail to close; it is replaced either way
                self.envs[env_id].close()
        self.envs[env_id] = build_env(self._env_fns[env_id], env_id)
        self.apply_seeds([env_id])
        if self._setup.replay_dirs is not None:
            self.apply_replay([env_id])

    def _recover(self, env_id: int, error: EnvManagerError) -> bool:
        """Spend a retry on ``env_id`` and renew it if so configured (or stuck); False when past its budget."""
        retry = self._ledger.recover(env_id, error)
        if retry is None:
            return False
        if retry is Retry.RENEW or env_id in self._stuck:
            self._renew(env_id)
        return True

    # ----- env calls -----------------------------------------------------------------------------
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

    def reset(self, params: Mapping[int, dict[str, Any]]) -> None:
        for env_id, kwargs in params.items():
            self._reset_one(env_id, kwargs)
            if self._launching and self._ledger.failing:
                return  # the launch fails: the other envs need no reset

    def _reset_one(self, env_id: int, kwargs: Mapping[str, Any]) -> None:
        ledger = self._ledger
        timeout = self._settings.reset_wait()
        while True:
            if env_id in self._stuck:
                self._renew(env_id)
            ledger.resetting([env_id])
            env = self.envs[env_id]
            error: EnvManagerError
            try:
                obs = self._env_call(env_id, functools.partial(env.reset, **kwargs), timeout, "reset")
            except WorkerTimeoutError as err:
                error = err
            except Exception as exc:  # env code may raise anything; it is reported with its traceback
                error = Failure.capture(env_id, "reset", exc).error()
            else:
                ledger.started(env_id, obs)
                return
            if not self._recover(env_id, error):
                return
            self._settings.wait_before_retry()

    def step(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        timesteps: dict[int, BaseEnvTimestep] = {}
        envs = self.envs
        timeout = self._settings.step_timeout
        if timeout is None and not self._threads:  # the common case: a plain loop
            for env_id, action in actions.items():
                try:
                    timesteps[env_id] = envs[env_id].step(action)
                except Exception as exc:  # see _reset_one
                    timesteps[env_id] = self._failed_step(env_id, Failure.capture(env_id, "step", exc).error())
        else:
            for env_id, action in actions.items():
                try:
                    timesteps[env_id] = self._env_call(
                        env_id, functools.partial(envs[env_id].step, action), timeout, "step"
                    )
                except WorkerTimeoutError as err:
                    timesteps[env_id] = self._failed_step(env_id, err)
                except Exception as exc:  # see _reset_one
                    timesteps[env_id] = self._failed_step(env_id, Failure.capture(env_id, "step", exc).error())
        for env_id in self._ledger.account(timesteps):
            self.reset({env_id: {}})
        return timesteps

    def _failed_step(self, env_id: int, error: EnvManagerError) -> BaseEnvTimestep:
        timestep = self._ledger.abnormal(env_id, error)
        self._recover(env_id, error)
        return timestep

    def step_batch(self, actions: Any) -> BatchTimestep:
        self._ledger.require_all_ready(actions)
        ids = list(range(len(self.envs)))
        timesteps = self.step(self._ledger.accept_action_rows(ids, actions))
        return stack_timesteps(timesteps, ids, self._ledger.ready_view)

    def apply_seeds(self, env_ids: Sequence[int] | None = None) -> None:
        seeds = self._setup.seeds
        for env_id in env_ids if env_ids is not None else range(len(self.envs)):
            if env_id in seeds:
                seed_env(self.envs[env_id], seeds[env_id], self._setup.dynamic_seed)

    def apply_replay(self, env_ids: Sequence[int] | None = None) -> None:
        dirs = self._setup.replay_dirs
        assert dirs is not None
        for env_id in env_ids if env_ids is not None else range(len(self.envs)):
            self.envs[env_id].enable_save_replay(dirs[env_id])

    def check_replay(self) -> None:
        """Envs of this process can record."""

    def describe(self, name: str) -> dict[int, tuple[Any, ...]]:
        return {env_id: describe_attribute(env, name) for env_id, env in enumerate(self.envs)}

    def call(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], env_ids: Sequence[int] | None
    ) -> dict[int, Any]:
        ids = range(len(self.envs)) if env_ids is None else env_ids
        return {env_id: getattr(self.envs[env_id], name)(*args, **kwargs) for env_id in ids}

    # ----- send / recv: send records, recv steps --------------------------------------------------
    def worker_key(self, env_id: int) -> int:
        return env_id

    def dispatch(self, actions: Mapping[int, Any]) -> None:
        """Nothing to start: :meth:`receive` steps the envs."""

    def receive(
        self, pending: Mapping[int, Any], wanted: int, timeout: float | None, *, as_batch: bool = False
    ) -> dict[int, BaseEnvTimestep]:
        """Step the first ``wanted`` envs sent (in send order)."""
        return self.step(dict(list(pending.items())[:wanted]))

    # ----- observations and monitoring ------------------------------------------------------------
    def ready_obs_batch(self, env_ids: list[int]) -> Any:
        return stack_obs([self._ledger.obs(i) for i in env_ids])

    def adopt_obs(self, env_id: int, obs: Any) -> Any:
        return obs

    @property
    def in_flight_env_ids(self) -> Sequence[int]:
        return ()
