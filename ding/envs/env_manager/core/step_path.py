"""A step's path through the batch core: actions into the step buffers, one message per worker, rows back out.

Out: actions are checked (once per batch for ``step_batch``), written to the action buffer in one copy with the
step and reset-on-done flags, and each worker gets one message (the step's number with shared memory, and its raw
rows otherwise; :mod:`.sequence`). Back: each worker answers once for its envs, naming the step it answers; a reply
to any other step is dropped and counted (:attr:`late_results`); results are read from the buffers (one copy per
array for a whole batch), infos and failures come in the reply only when there are any, and each env's episode is
accounted exactly once (:meth:`BaseEnvManager._after_step`).
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

import numpy as np

from ding.envs.env_manager import async_api
from ding.envs.env_manager.base_manager import BaseEnvManager
from ding.envs.env_manager.batch import BatchTimestep, ObsBatch
from ding.envs.env_manager.core.batch_read import read_rows
from ding.envs.env_manager.core.channel import Channel, Reply
from ding.envs.env_manager.core.codec import RefusedDataError
from ding.envs.env_manager.core.commands import Command, CommandKind
from ding.envs.env_manager.core.failure import Failure
from ding.envs.env_manager.core.replies import StepReply
from ding.envs.env_manager.core.results import Results
from ding.envs.env_manager.core.rows import MalformedMessage, pack_request
from ding.envs.env_manager.core.sequence import ok_reply, step_message
from ding.envs.env_manager.core.shm import (
    CONTROL_RESET_ON_DONE,
    CONTROL_STEP,
    FLAG_RESET,
    BufferLayout,
    SharedBuffers,
    build_tree,
)
from ding.envs.env_manager.core.spin import SpinBudget
from ding.envs.env_manager.state import EnvState
from ding.envs.values.conversion import within_bounds
from ding.envs.values.timestep import BaseEnvTimestep
from ding.errors import EnvManagerError

logger = logging.getLogger("ding.env_manager")


class StepPath(BaseEnvManager):
    """The step path of :class:`~ding.envs.env_manager.core.batch_core.BatchCore` (see the module docstring)."""

    _groups: list[list[int]]
    _worker_of: dict[int, int]
    _group_rows: list[slice]
    _layout: BufferLayout | None
    _buffers: SharedBuffers | None
    _results: Results | None
    _spin: SpinBudget
    _channel: Channel | None
    _restart_worker: Callable[[int], None]
    _refused_replies: int

    def _init_step_numbers(self) -> None:
        self._step_seq = 0
        """The number of the last step dispatched (:mod:`.sequence`)."""
        self._sent_seq = [-1] * len(self._groups)
        """Per worker: the number of the step it was last sent (-1: none)."""
        self._expect_ok = [b""] * len(self._groups)
        """Per worker: its reply to that step when it has nothing but rows to say."""
        self._late_results = 0
        """Replies the core dropped because they answered another step than the one their worker was sent."""

    @property
    def late_results(self) -> int:
        """Results that arrived after their step was given up on (dropped, never delivered): those the channel
        dropped (a hung thread or a replaced zmq worker answering at last) and those the core did."""
        return self._late_results + (self._channel.late_replies if self._channel is not None else 0)

    def _number_step(self, workers: Sequence[int]) -> int:
        """A new step number, recorded as the one ``workers`` are about to be sent."""
        self._step_seq = seq = self._step_seq + 1
        ok = ok_reply(seq)
        for w in workers:
            self._sent_seq[w] = seq
            self._expect_ok[w] = ok
        return seq

    # ----- messages --------------------------------------------------------------------------------
    @property
    def channel(self) -> Channel:
        if self._channel is None:
            raise EnvManagerError(f"{type(self).__name__} has no channel before launch()")
        return self._channel

    def _send(self, w: int, message: bytes) -> Failure | None:
        return self.channel.send(w, message)

    def _collect(self, workers: Sequence[int], timeout: float | None, spin: bool = False) -> dict[int, Reply]:
        """One reply from each worker; a dead or silent worker yields a :class:`Failure`."""
        if not workers:
            return {}
        return self.channel.receive(workers, timeout, self._spin if spin else None)

    def _decode(self, w: int, reply: Reply | StepReply, step: bool = True) -> StepReply | Failure:
        """A worker's step (or with ``step=False`` reset) reply as a value (see :meth:`Results.decode`).

        A failure stays one. A reply that does not decode is refused, and a step reply that answers another step
        than the one the worker was last sent is dropped as late: either becomes the failure of a broken worker,
        which is replaced.
        """
        if not isinstance(reply, bytes):
            return reply
        if step and reply == self._expect_ok[w]:  # the common case: the step sent, and nothing but rows to say
            return StepReply(seq=self._sent_seq[w])
        assert self._results is not None
        try:
            result = self._results.decode(reply, self._group_rows[w], self.channel.codec)
        except (RefusedDataError, MalformedMessage) as err:
            return self._refuse(w, err)
        if step and result.seq != self._sent_seq[w]:
            self._late_results += 1
            message = (
                f"the worker of envs {self._groups[w]} answered step {result.seq} when it was last sent step "
                f"{self._sent_seq[w]}: a late result, dropped"
            )
            logger.warning("%s; the worker is replaced", message)
            return Failure.broken(message)
        return result

    def _refuse(self, w: int, err: Exception) -> Failure:
        """Count and log a reply of worker ``w`` that did not decode; its failure replaces the worker."""
        self._refused_replies += 1
        message = f"refused the reply of the worker of envs {self._groups[w]}: {err}"
        logger.warning("%s; the worker is dropped and its envs restart", message)
        return Failure.broken(message)

    def _obs_of(self, env_id: int, final: bool = False) -> Any:
        assert self._results is not None
        return self._results.obs_of(env_id, final)

    def _set_ready_obs(self, env_id: int, obs: Any) -> None:
        """Write ``obs`` into env ``env_id``'s ready row (whole-batch reads use the rows), then read it as usual."""
        if self._buffers is None or self._layout is None or self._layout.pickled:
            super()._set_ready_obs(env_id, obs)
            return
        self._buffers.write_obs(self._buffers.ready, env_id, obs)
        self._ready_obs[env_id] = self._obs_of(env_id)

    # ----- whole batches -------------------------------------------------------------------------
    def ready_obs_batch(self) -> ObsBatch:
        """Ready observations stacked by env id: a view of shared memory when every env is ready.

        The view stays valid until the next ``step`` or ``reset``; copy it to keep it longer.
        """
        ids = self.ready_obs_id
        if not ids:
            raise EnvManagerError(f"no env is ready; env states: {self._state_summary()}")
        assert self._buffers is not None and self._layout is not None
        if self._layout.pickled:
            return super().ready_obs_batch()
        index: Any = slice(None) if len(ids) == self._env_num else np.asarray(ids)
        by_path = dict(zip(self._layout.obs_paths, self._buffers.ready, strict=True))
        return ObsBatch(np.asarray(ids), build_tree(self.observation_space, lambda p: by_path[p][index]))

    def step_batch(self, actions: Any) -> BatchTimestep:
        """Step every env at once: actions go to shared memory in one copy, one wake-up per worker."""
        self._check_launched()
        async_api.check_idle(self, "step_batch")
        buffers = self._buffers
        assert buffers is not None
        if buffers.action is None:
            return super().step_batch(actions)
        self._require_all_ready()
        checked = self._check_batch_actions(actions)
        buffers.action[...] = checked
        control = buffers.control
        control[:, CONTROL_STEP] = 1
        control[:, CONTROL_RESET_ON_DONE] = self._reset_on_done_mask()
        faults: dict[int, Reply] = {}
        workers = range(len(self._groups))
        seq = self._number_step(workers)
        shared = step_message(seq) if buffers.layout.shared else None
        for w in workers:
            fault = self._send(w, shared or self._step_message(w, seq))
            if fault is not None:
                faults[w] = fault
        sent = [w for w in workers if w not in faults]
        replies = {**faults, **self._collect(sent, self._step_timeout, spin=True)}
        infos = self._infos_without_failures(replies)
        if infos is None:  # rare: the per-env path handles faults
            timesteps = self._gather(dict(enumerate(checked)), replies)
            for env_id, timestep in timesteps.items():
                if env_id in self._failures and not timestep.info.get("abnormal", False):
                    del self._failures[env_id]
                self._after_step(env_id, timestep)
            self._raise_fatal()
            return self._batch_from(timesteps)
        return self._batch_of(list(range(self._env_num)), infos)

    def _infos_without_failures(self, replies: MutableMapping[int, Any]) -> dict[int, dict[str, Any]] | None:
        """The step infos of every env in ``replies``, or None when a worker faulted or an env failed.

        Each reply is decoded once: ``replies`` keeps the decoded values for :meth:`_gather`.
        """
        infos: dict[int, dict[str, Any]] = {}
        expect_ok = self._expect_ok
        for w, reply in replies.items():
            if reply == expect_ok[w]:
                continue
            result = replies[w] = self._decode(w, reply)
            if isinstance(result, Failure) or result.failures:
                return None
            infos.update(result.infos)
        return infos

    def _batch_of(self, env_ids: list[int], infos: Mapping[int, dict[str, Any]]) -> BatchTimestep:
        """The batch of envs that all stepped without a failure, read from the buffers with one copy per array.

        Their episodes are accounted as ``step`` does; only envs whose episode ended get a timestep object.
        """
        layout, results = self._layout, self._results
        assert self._buffers is not None and layout is not None and results is not None
        rows = read_rows(self._buffers, self.observation_space, env_ids, copy=self._copy_on_get)
        ready, failures = self._ready_obs, self._failures
        final_obs = {}
        for j in np.flatnonzero(rows.done).tolist():
            env_id = env_ids[j]
            timestep = results.timestep(env_id, infos.get(env_id, {}))
            final_obs[env_id] = timestep.obs
            failures.pop(env_id, None)
            self._after_step(env_id, timestep)
            if env_id not in ready:  # no new episode: the row shows the episode's last observation
                rows.set_row(j, timestep.obs, layout.obs_paths)
            elif not rows.reset[j]:  # reset here, after the step: the row shows the new first observation
                rows.set_row(j, ready[env_id], layout.obs_paths)
        for j in np.flatnonzero(~rows.done).tolist():
            env_id = env_ids[j]
            ready[env_id] = rows.row(j)
            if failures:
                failures.pop(env_id, None)
        return BatchTimestep(
            obs=rows.obs,
            reward=rows.reward,
            done=rows.done,
            terminated=rows.terminated,
            truncated=rows.truncated,
            info=[infos.get(i, {}) for i in env_ids],
            final_obs=final_obs,
            env_ids=np.asarray(env_ids, dtype=np.int64),
        )

    def _check_batch_actions(self, actions: Any) -> np.ndarray:
        space = self.action_space
        arr = np.asarray(actions)
        assert self._buffers is not None and self._buffers.action is not None
        expected = self._buffers.action.shape
        if arr.shape != expected:
            if arr.size != int(np.prod(expected)):
                raise ValueError(f"step_batch() actions have shape {arr.shape}; expected {expected} for {space}")
            arr = arr.reshape(expected)
        if np.dtype(space.dtype).kind in "iu" and arr.dtype.kind not in "iub":
            raise TypeError(f"step_batch() actions have dtype {arr.dtype}; {space} takes integers")
        if within_bounds(space, arr):
            return arr
        checked = self._check_action_rows(list(range(self._env_num)), arr)  # names the env and value, or clips
        return np.stack([np.asarray(checked[i]) for i in range(self._env_num)]).reshape(expected)

    def _reset_on_done_mask(self) -> np.ndarray:
        if not self._auto_reset:
            return np.zeros(self._env_num, dtype=np.int64)
        counts = np.fromiter(self._env_episode_count.values(), dtype=np.float64, count=self._env_num)
        return (counts + 1 < self._episode_num).astype(np.int64)

    def _dispatch_step(self, actions: Mapping[int, Any]) -> tuple[list[int], dict[int, Failure]]:
        """Write actions and step flags to the step buffers and wake the workers involved."""
        buffers = self._buffers
        assert buffers is not None
        control = buffers.control
        worker_of = self._worker_of
        workers = sorted({worker_of[env_id] for env_id in actions})
        for w in workers:
            control[self._group_rows[w], CONTROL_STEP] = 0
        ids = np.fromiter(actions, dtype=np.intp, count=len(actions))
        if buffers.action is not None:  # one write of every action
            buffers.action[ids] = np.asarray(list(actions.values()), dtype=buffers.action.dtype).reshape(
                (len(ids), *buffers.action.shape[1:])
            )
        control[ids, CONTROL_STEP] = 1
        control[ids, CONTROL_RESET_ON_DONE] = self._reset_on_done_mask()[ids]
        seq = self._number_step(workers)
        shared = step_message(seq) if buffers.layout.shared else None
        faults: dict[int, Failure] = {}
        for w in workers:
            if buffers.action is None:
                mine = {i: a for i, a in actions.items() if worker_of[i] == w}
                fault = self._send(w, pickle.dumps(Command(CommandKind.ACTIONS, mine)))
                reply = fault or self._collect([w], self._step_timeout)[w]
                if isinstance(reply, Failure):
                    faults[w] = reply
                    continue
            fault = self._send(w, shared or self._step_message(w, seq))
            if fault is not None:
                faults[w] = fault
        return [w for w in workers if w not in faults], faults

    def _step_message(self, w: int, seq: int) -> bytes:
        """The wake-up with the step's number, and with private buffers this worker's control and action rows."""
        buffers = self._buffers
        assert buffers is not None
        if buffers.layout.shared:
            return step_message(seq)
        return pack_request(buffers, self._group_rows[w], seq)

    def _step_envs(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        sent, faults = self._dispatch_step(actions)
        replies: dict[int, Reply] = {**faults, **self._collect(sent, self._step_timeout, spin=True)}
        return self._gather(actions, replies)

    def _gather(
        self, actions: Mapping[int, Any], replies: Mapping[int, Reply | StepReply]
    ) -> dict[int, BaseEnvTimestep]:
        """The timesteps of the stepped envs from their workers' replies; failures end episodes abnormally."""
        results = self._results
        assert results is not None
        timesteps: dict[int, BaseEnvTimestep] = {}
        for w, reply in sorted(replies.items()):
            stepped = [env_id for env_id in self._groups[w] if env_id in actions]
            result = self._decode(w, reply)
            if isinstance(result, Failure):
                timesteps.update(self._worker_fault(w, result, stepped))
                continue
            if not result.failures and self._copy_on_get:
                timesteps.update(results.timesteps(stepped, result.infos))
                continue
            for env_id in stepped:
                failure = result.failures.get(env_id)
                if failure is not None and failure.operation == "step":
                    timesteps[env_id] = self._abnormal(env_id, failure.error())
                    continue
                timesteps[env_id] = results.timestep(env_id, result.infos.get(env_id, {}))
                if failure is not None:  # the step finished its episode but the automatic reset failed
                    self._recover(env_id, failure.error())
        return timesteps

    def _worker_fault(self, w: int, fault: Failure, stepped: list[int]) -> dict[int, BaseEnvTimestep]:
        """Restart a dead or hung worker; its stepped envs' episodes end abnormally."""
        error = fault.error()
        timesteps = {env_id: self._abnormal(env_id, error, renew=False) for env_id in stepped}
        self._restart_worker(w)
        for env_id in self._groups[w]:
            if env_id not in stepped and env_id in self._ready_obs:
                self._ready_obs.pop(env_id)
                self._reset_envs({env_id: {}})
        return timesteps

    def _after_step(self, env_id: int, timestep: BaseEnvTimestep) -> None:
        buffers = self._buffers
        assert buffers is not None
        if timestep.done and not timestep.info.get("abnormal", False) and buffers.flags[env_id, FLAG_RESET]:
            self._env_episode_count[env_id] += 1
            self._ready_obs[env_id] = self._obs_of(env_id)
            self._env_states[env_id] = EnvState.RUN
            return
        super()._after_step(env_id, timestep)
