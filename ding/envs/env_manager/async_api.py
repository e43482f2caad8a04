"""The asynchronous API every manager shares: ``async_reset``, ``send``, ``recv``, ``step_async``, ``step_wait``.

``send`` hands actions to envs and returns without waiting; ``recv`` returns, as arrays, the first
envs whose results are in (at least ``batch_size`` of them), so a trainer works while envs step.
Each env sent is received exactly once; faults, retries and automatic resets are those of ``step``.
This module holds the API's rules; a manager supplies three hooks:

- ``_worker_key(env_id)``: what runs the env (envs sharing a key step together, one step at a time);
- ``_async_dispatch(actions)``: start stepping the envs (checked actions by env id), without waiting;
- ``_async_receive(pending, wanted, timeout)``: timesteps of at least ``wanted`` envs of ``pending``
  (env id -> action, in send order), or fewer when ``timeout`` passes (at least one; none raises
  :class:`~ding.errors.WorkerTimeoutError`);
- optionally ``_async_receive_batch(pending, wanted, timeout)``: the same, or (when no env failed) the
  envs' :class:`~ding.envs.env_manager.batch.BatchTimestep` with their episodes already accounted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ding.envs.env_manager.batch import BatchTimestep
from ding.envs.values.timestep import BaseEnvTimestep
from ding.errors import ConfigError, EnvManagerError, ManagerStateError

if TYPE_CHECKING:
    from ding.envs.env_manager.manager_api import ManagerAPI


@dataclasses.dataclass
class SendRecvState:
    """What the asynchronous API has in flight."""

    sent: dict[int, Any] = dataclasses.field(default_factory=dict)
    """Env id -> action of envs sent and not received yet, in send order."""
    first: list[int] = dataclasses.field(default_factory=list)
    """Envs reset by ``async_reset`` whose first observation ``recv`` has not returned yet."""
    last: list[int] | None = None
    """Envs the last ``recv`` returned (None: none since launch or reset; ``send`` then means every ready env)."""

    def in_flight(self) -> list[int]:
        return sorted([*self.sent, *self.first])

    def clear(self) -> None:
        self.sent.clear()
        self.first.clear()
        self.last = None


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


def check_idle(manager: ManagerAPI, operation: str) -> None:
    """Refuse ``operation`` (a synchronous call) while envs are in flight from ``send`` or ``async_reset``."""
    in_flight = manager._send_recv.in_flight()
    if in_flight:
        raise ManagerStateError(
            f"{operation}() cannot run while envs {in_flight} are in flight from send()/async_reset(); "
            "recv() their results first"
        )


def async_reset(manager: ManagerAPI, reset_param: Mapping[int, Mapping[str, Any] | None] | None) -> None:
    """Launch (when closed) or reset the envs; the next ``recv`` calls return their first observations."""
    if manager.closed:
        manager.launch(reset_param)
    else:
        check_idle(manager, "async_reset")
        manager.reset(reset_param)
    state = manager._send_recv
    state.clear()
    state.first.extend(manager.ready_obs_id)


def _by_env(manager: ManagerAPI, actions: Any, env_ids: Any) -> tuple[list[Any], Any]:
    """``send``'s env ids and actions: a mapping's keys and itself, or ``env_ids`` and the rows of an array."""
    state = manager._send_recv
    if isinstance(actions, Mapping):
        if env_ids is not None:
            raise ValueError("send() takes env_ids with an array of actions; a mapping names its envs itself")
        return list(actions), actions
    if env_ids is None:
        ids = state.last if state.last is not None else manager.ready_obs_id
    else:
        ids = [int(i) for i in np.asarray(env_ids).reshape(-1)]
    if len(ids) != len(set(ids)):
        raise ValueError(f"send() got env ids {ids}, with repeats; each env takes one action")
    rows = actions if isinstance(actions, (np.ndarray, Sequence)) else np.asarray(actions)
    if len(rows) != len(ids):
        raise ValueError(
            f"send() got {len(rows)} actions for envs {ids}; the actions' leading axis must match the env ids"
        )
    return ids, rows


def send(manager: ManagerAPI, actions: Any, env_ids: Any = None) -> None:
    """Check the actions and start stepping their envs; returns without waiting for results."""
    manager._check_launched()
    state = manager._send_recv
    chosen, rows = _by_env(manager, actions, env_ids)
    if not chosen:
        raise ValueError(f"send() got no actions; envs that take actions: {manager.ready_obs_id}")
    flying = state.in_flight()
    in_flight = sorted(i for i in chosen if i in flying)
    if in_flight:
        raise EnvManagerError(
            f"send() got envs {in_flight}, which are in flight; recv() them first. Envs that take actions: "
            f"{manager.ready_obs_id}"
        )
    busy_keys = {manager._worker_key(i) for i in state.sent}
    blocked = sorted(i for i in chosen if isinstance(i, int) and manager._worker_key(i) in busy_keys)
    if blocked:
        raise EnvManagerError(
            f"send() got envs {blocked}, whose worker is stepping other envs in flight; recv() those first. "
            f"Envs that take actions: {manager.ready_obs_id}"
        )
    # an array is checked as one where the manager can
    mapping = isinstance(rows, Mapping)
    checked = manager._check_actions(rows) if mapping else manager._check_action_rows(chosen, rows)
    manager._async_dispatch(checked)
    state.sent.update(checked)


def recv(manager: ManagerAPI, batch_size: int | None, timeout: float | None) -> BatchTimestep:
    """The results of at least ``batch_size`` envs in flight (fewer when ``timeout`` passes), as arrays."""
    manager._check_launched()
    check_batch_size(batch_size)
    state = manager._send_recv
    pending = len(state.sent) + len(state.first)
    if not pending:
        raise EnvManagerError(
            f"recv() has nothing to receive: no env is in flight; send() actions first (envs that take actions: "
            f"{manager.ready_obs_id})"
        )
    size = batch_size if batch_size is not None else manager._batch_size
    wanted = pending if size is None else min(int(size), pending)
    firsts: list[int] = []
    keys: set[int] = set()
    for env_id in state.first:  # first observations, whole workers at a time (as their steps come)
        if len(firsts) < wanted or manager._worker_key(env_id) in keys:
            firsts.append(env_id)
            keys.add(manager._worker_key(env_id))
    state.first = [i for i in state.first if manager._worker_key(i) not in keys]
    zero = manager._zero_reward()
    timesteps = {
        env_id: BaseEnvTimestep(manager._ready_obs[env_id], zero.copy(), False, {}, terminated=False, truncated=False)
        for env_id in firsts
    }
    if not timesteps and state.sent:
        received = manager._async_receive_batch(state.sent, wanted, timeout)
        if isinstance(received, BatchTimestep):  # the common case: no per-env timestep objects
            ids = received.env_ids.tolist()
            for env_id in ids:
                del state.sent[env_id]
            state.last = ids
            manager._raise_fatal()
            return received
        timesteps = _account(manager, received)
    elif len(timesteps) < wanted and state.sent:
        timesteps.update(_account(manager, manager._async_receive(state.sent, wanted - len(timesteps), timeout)))
    ids = sorted(timesteps)
    state.last = ids
    batch = manager._batch_from(timesteps, ids)
    manager._raise_fatal()
    return batch


def _account(manager: ManagerAPI, stepped: dict[int, BaseEnvTimestep]) -> dict[int, BaseEnvTimestep]:
    """Take received envs out of flight and account their steps as ``step`` does; returns ``stepped``."""
    sent, ready, failures = manager._send_recv.sent, manager._ready_obs, manager._failures
    for env_id, timestep in stepped.items():
        del sent[env_id]
        if failures and env_id in failures and not timestep.info.get("abnormal", False):
            del failures[env_id]
        if timestep.done:
            manager._after_step(env_id, timestep)
        else:
            ready[env_id] = timestep.obs
    return stepped


def step_async(manager: ManagerAPI, actions: Any) -> None:
    """``send`` to every env waiting for an action (an array's rows in env id order)."""
    if isinstance(actions, Mapping):
        send(manager, actions)
    else:
        send(manager, actions, manager.ready_obs_id)


def step_wait(manager: ManagerAPI, timeout: float | None) -> BatchTimestep:
    """``recv`` of every env in flight."""
    state = manager._send_recv
    return recv(manager, max(1, len(state.sent) + len(state.first)), timeout)
