"""The asynchronous API of every manager: ``async_reset``, ``send``, ``recv``, ``step_async``, ``step_wait``.

``send`` hands actions to envs and returns without waiting; ``recv`` returns, as arrays, the first envs whose
results are in (at least ``batch_size`` of them), so a trainer works while envs step. Each env sent is received
exactly once; faults, retries and automatic resets are those of ``step``. :class:`SendRecv` holds what is in
flight and the API's rules; the manager's engine starts the steps (``dispatch``) and gathers their results
(``receive``), accounting them in the ledger as ``step`` does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ding.envs.env_manager.batch import BatchTimestep, stack_timesteps
from ding.envs.env_manager.engine import Engine
from ding.envs.env_manager.ledger import EnvLedger
from ding.envs.env_manager.settings import ManagerSettings
from ding.envs.values.timestep import BaseEnvTimestep
from ding.errors import ConfigError, EnvManagerError, ManagerStateError


def check_batch_size(value: Any, key: str = "batch_size") -> None:
    """``batch_size`` is None (every env in flight) or an int >= 1.

    >>> check_batch_size(4)
    >>> check_batch_size(0)
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: batch_size must be an int >= 1 or None (every env in flight), got 0
    """
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1):
        raise ConfigError(f"{key} must be an int >= 1 or None (every env in flight), got {value!r}")


class SendRecv:
    """What ``send`` and ``async_reset`` put in flight, and the rules of ``send`` and ``recv`` (see the module)."""

    def __init__(self, ledger: EnvLedger, engine: Engine, settings: ManagerSettings) -> None:
        self._ledger, self._engine, self._settings = ledger, engine, settings
        self._sent: dict[int, Any] = {}
        """Env id -> action of envs sent and not received yet, in send order."""
        self._first: list[int] = []
        """Envs reset by ``async_reset`` whose first observation ``recv`` has not returned yet."""
        self._last: list[int] | None = None
        """Envs the last ``recv`` returned (None: none since launch or reset; ``send`` then means every ready env)."""
        self._workers_shared: bool | None = None
        """Whether a worker steps more than one env (found at the first ``send`` after launch)."""

    def in_flight(self) -> list[int]:
        return sorted([*self._sent, *self._first])

    def clear(self) -> None:
        """Forget what is in flight (the manager closed, or reset its envs)."""
        self._ledger.back([*self._sent, *self._first])
        self._sent.clear()
        self._first.clear()
        self._last = None
        self._workers_shared = None

    def check_idle(self, operation: str) -> None:
        """Refuse ``operation`` (a synchronous call) while envs are in flight from ``send`` or ``async_reset``."""
        if self._sent or self._first:
            raise ManagerStateError(
                f"{operation}() cannot run while envs {self.in_flight()} are in flight from send()/async_reset(); "
                "recv() their results first"
            )

    def expect_first(self) -> None:
        """After ``async_reset``: the next ``recv`` calls return the first observations of every ready env."""
        self.clear()
        self._first.extend(self._ledger.ready_ids())
        self._ledger.away(self._first)

    # ----- send --------------------------------------------------------------------------------------
    def send(self, actions: Any, env_ids: Any = None) -> None:
        """Check the actions and start stepping their envs; returns without waiting for results."""
        ledger = self._ledger
        chosen, rows = self._by_env(actions, env_ids)
        if not chosen:
            raise ValueError(f"send() got no actions; envs that take actions: {ledger.ready_ids()}")
        sent, flying = self._sent, self._first
        if not sent.keys().isdisjoint(chosen) or (flying and not set(flying).isdisjoint(chosen)):
            in_flight = sorted(i for i in chosen if i in sent or i in flying)
            raise EnvManagerError(
                f"send() got envs {in_flight}, which are in flight; recv() them first. Envs that take actions: "
                f"{ledger.ready_ids()}"
            )
        if sent and self._shares_workers():  # else an env's worker is busy only with the env itself, checked above
            worker_key = self._engine.worker_key
            busy_keys = set(map(worker_key, sent))
            blocked = sorted(i for i in chosen if isinstance(i, int) and worker_key(i) in busy_keys)
            if blocked:
                raise EnvManagerError(
                    f"send() got envs {blocked}, whose worker is stepping other envs in flight; recv() those first. "
                    f"Envs that take actions: {ledger.ready_ids()}"
                )
        # an array is checked as one where the ledger can
        checked = ledger.accept_actions(rows) if isinstance(rows, Mapping) else ledger.accept_action_rows(chosen, rows)
        self._engine.dispatch(checked)
        self._sent.update(checked)
        ledger.away(checked)

    def _shares_workers(self) -> bool:
        """Whether some worker steps more than one env, so that ``send`` must refuse an env whose worker is busy."""
        if self._workers_shared is None:
            env_num, worker_key = self._ledger.env_num, self._engine.worker_key
            self._workers_shared = len({worker_key(env_id) for env_id in range(env_num)}) < env_num
        return self._workers_shared

    def _by_env(self, actions: Any, env_ids: Any) -> tuple[list[Any], Any]:
        """``send``'s env ids and actions: a mapping's keys and itself, or ``env_ids`` and the rows of an array."""
        if isinstance(actions, Mapping):
            if env_ids is not None:
                raise ValueError("send() takes env_ids with an array of actions; a mapping names its envs itself")
            return list(actions), actions
        if env_ids is None:
            ids = self._last if self._last is not None else self._ledger.ready_ids()
        else:
            given = np.asarray(env_ids).reshape(-1)
            ids = given.tolist() if given.dtype.kind in "iu" else [int(i) for i in given]
        if len(ids) != len(set(ids)):
            raise ValueError(f"send() got env ids {ids}, with repeats; each env takes one action")
        rows = actions if isinstance(actions, (np.ndarray, Sequence)) else np.asarray(actions)
        if len(rows) != len(ids):
            raise ValueError(
                f"send() got {len(rows)} actions for envs {ids}; the actions' leading axis must match the env ids"
            )
        return ids, rows

    def step_async(self, actions: Any) -> None:
        """``send`` to every env waiting for an action (an array's rows in env id order)."""
        if isinstance(actions, Mapping):
            self.send(actions)
        else:
            self.send(actions, self._ledger.ready_ids())

    # ----- recv --------------------------------------------------------------------------------------
    def recv(self, batch_size: int | None, timeout: float | None) -> BatchTimestep:
        """The results of at least ``batch_size`` envs in flight (fewer when ``timeout`` passes), as arrays."""
        check_batch_size(batch_size)
        ledger = self._ledger
        pending = len(self._sent) + len(self._first)
        if not pending:
            raise EnvManagerError(
                f"recv() has nothing to receive: no env is in flight; send() actions first (envs that take actions: "
                f"{ledger.ready_ids()})"
            )
        size = batch_size if batch_size is not None else self._settings.batch_size
        wanted = pending if size is None else min(int(size), pending)
        timesteps = self._first_observations(wanted) if self._first else {}
        if not timesteps and self._sent:
            received = self._engine.receive(self._sent, wanted, timeout, as_batch=True)
            if isinstance(received, BatchTimestep):  # the common case: no per-env timestep objects
                ids = received.env_ids.tolist()
                self._taken(ids)
                ledger.raise_fatal()
                return received
            timesteps = received
            self._taken(list(received))
        elif len(timesteps) < wanted and self._sent:
            received = self._engine.receive(self._sent, wanted - len(timesteps), timeout)
            assert not isinstance(received, BatchTimestep)
            self._taken(list(received))
            timesteps.update(received)
        ids = sorted(timesteps)
        self._last = ids
        batch = stack_timesteps(timesteps, ids, ledger.ready_view)
        ledger.raise_fatal()
        return batch

    def _first_observations(self, wanted: int) -> dict[int, BaseEnvTimestep]:
        """Up to ``wanted`` first observations of ``async_reset``, whole workers at a time (as their steps come)."""
        ledger, worker_key = self._ledger, self._engine.worker_key
        firsts: list[int] = []
        keys: set[int] = set()
        for env_id in self._first:
            if len(firsts) < wanted or worker_key(env_id) in keys:
                firsts.append(env_id)
                keys.add(worker_key(env_id))
        self._first = [i for i in self._first if worker_key(i) not in keys]
        ledger.back(firsts)
        zero = ledger.zero_reward()
        return {
            env_id: BaseEnvTimestep(ledger.obs(env_id), zero.copy(), False, {}, terminated=False, truncated=False)
            for env_id in firsts
        }

    def _taken(self, env_ids: list[int]) -> None:
        """The received envs leave flight; the next ``send`` without env ids means them."""
        for env_id in env_ids:
            del self._sent[env_id]
        self._ledger.back(env_ids)
        self._last = env_ids

    def step_wait(self, timeout: float | None) -> BatchTimestep:
        """``recv`` of every env in flight."""
        return self.recv(max(1, len(self._sent) + len(self._first)), timeout)
