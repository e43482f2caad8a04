"""``BatchCore``: the engine of every worker-based manager, over any channel; here is a step's path, out and back.

The core owns everything but the transport: the envs' groups (``envs_per_worker`` per worker,
:mod:`.groups`), the step buffers laid out from the declared spaces, dispatch and gathering, partial batches and
send / recv (:mod:`.in_flight`), retries, restarts of dead or hung workers and renewal of broken envs
(:mod:`.workers`), and the exactly-once accounting of steps in the manager's ledger. It talks to workers only
through a :class:`~ding.envs.env_manager.core.channel.Channel` (:mod:`.link`); a manager type is the core plus the
channel (and placement) it makes (:func:`worker_engine`).

A step's path. Out: actions are checked (once per batch for ``step_batch``), written to the action buffer in one
copy with the step and reset-on-done flags, and each worker gets one message (the step's number with shared memory,
and its raw rows otherwise; :mod:`.sequence`). Back: each worker answers once for its envs, naming the step it
answers; a reply to any other step is dropped and counted; results are read from the buffers (one copy per array for
a whole batch), infos and failures come in the reply only when there are any, and each env's step is accounted
exactly once in the ledger.

The parent detects every fault itself: a dead worker through its channel (at once), a hung one through
``step_timeout`` / ``reset_timeout``. A dead or hung worker is stopped and started afresh; the episodes it was
running end with abnormal timesteps and its envs restart, while every other env keeps its steps.

Envs whose spaces are not declared by their constructors are probed in a child process before launch (the parent
never builds one); their actions travel pickled, and without shared memory so do their observations and rewards.
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

import numpy as np

from ding.envs.env_manager.batch import BatchTimestep, stack_obs, stack_timesteps
from ding.envs.env_manager.core.batch_read import read_rows
from ding.envs.env_manager.core.channel import Channel, Reply
from ding.envs.env_manager.core.commands import Command, CommandKind
from ding.envs.env_manager.core.failure import Failure
from ding.envs.env_manager.core.groups import EnvGroups
from ding.envs.env_manager.core.in_flight import InFlight
from ding.envs.env_manager.core.link import WorkerLink
from ding.envs.env_manager.core.replies import StepReply
from ding.envs.env_manager.core.rows import pack_request
from ding.envs.env_manager.core.sequence import step_message
from ding.envs.env_manager.core.shm import CONTROL_RESET_ON_DONE, CONTROL_STEP, FLAG_RESET, SharedBuffers, build_tree
from ding.envs.env_manager.core.spin import QUICK_REPLY
from ding.envs.env_manager.core.workers import Workers
from ding.envs.env_manager.engine import Engine, EngineFactory, EngineParts
from ding.envs.env_manager.ledger import NOT_RESET
from ding.envs.env_manager.settings import MANAGER_CONFIG, ManagerSettings
from ding.envs.probe import probe_spaces
from ding.envs.values.spaces import EnvSpaces
from ding.envs.values.timestep import BaseEnvTimestep
from ding.errors import EnvManagerError
from ding.utils.accepts import redeclare

WORKER_CONFIG: dict[str, Any] = redeclare(
    MANAGER_CONFIG,
    {
        "shared_memory": True,
        "context": "fork",
        "step_timeout": 60.0,
        "reset_timeout": 60.0,
        "connect_timeout": 60.0,
        "start_serially": False,  # start one worker after the previous one has built its envs (simulators that
        # cannot start concurrently); otherwise every worker starts at once
    },
)
"""The declared config of every worker-based manager type: the base keys with the workers' defaults."""

ChannelFactory = Callable[[ManagerSettings, EnvGroups], Channel]
"""How a manager type makes its channel (with its placement) from its settings and env groups."""


def worker_engine(make_channel: ChannelFactory, *, probe_in_caller: bool = False) -> EngineFactory:
    """The engine of a worker-based manager type: the batch core over the channel ``make_channel`` makes.

    ``probe_in_caller``: spaces of envs that do not declare them are read from one env built in this process
    (workers that are threads of it), else in a child process.
    """

    def make(parts: EngineParts) -> BatchCore:
        return BatchCore(parts, make_channel, probe_in_caller=probe_in_caller)

    return make


def core_of(engine: Engine) -> BatchCore:
    """The batch core a worker-based manager runs on (its channel, its groups)."""
    if not isinstance(engine, BatchCore):
        raise TypeError(f"a worker-based manager runs on the batch core, not on {type(engine).__name__}")
    return engine


class BatchCore:
    """Envs in workers reached through a channel; see the module docstring."""

    def __init__(self, parts: EngineParts, make_channel: ChannelFactory, *, probe_in_caller: bool = False) -> None:
        settings = self._settings = parts.settings
        self._ledger = parts.ledger
        self._env_fns = parts.env_fns
        self._probe_in_caller = probe_in_caller
        self.groups = groups = EnvGroups.split(len(parts.env_fns), int(settings.rest.envs_per_worker))
        self._link = WorkerLink(lambda: make_channel(settings, groups), groups)
        partial = parts.partial_batches and settings.wait_num not in (None, math.inf)
        self._flight = InFlight(self._link, groups, settings, partial)
        self._workers = Workers(parts, groups, self._link, self._flight)
        self._all_env_ids = np.arange(len(parts.env_fns), dtype=np.int64)  # a whole batch's env ids (read-only)
        self._all_env_ids.flags.writeable = False
        self._all_ids = list(range(len(parts.env_fns)))  # the same as a list (never changed)

    # ----- lifecycle -----------------------------------------------------------------------------
    def probe_spaces(self) -> EnvSpaces | None:
        """Build env 0 in a child process (started as the workers are) to read its spaces."""
        if self._probe_in_caller:
            return None
        return probe_spaces(self._env_fns[0], context=self._settings.rest.context or "fork")

    def launch(
        self, spaces: EnvSpaces | None, declared: bool, params: Mapping[int, dict[str, Any]]
    ) -> tuple[EnvSpaces | None, bool]:
        built = self._workers.launch(spaces, declared)
        self.reset(params)
        return built

    def close(self) -> None:
        self._flight.clear()  # the workers stop with the manager: no step is in flight any more
        self._workers.close()

    # ----- resets and control commands -----------------------------------------------------------
    def reset(self, params: Mapping[int, dict[str, Any]]) -> None:
        self._drain_partial(list(params))
        self._workers.reset(params)

    def _drain_partial(self, env_ids: Sequence[int]) -> None:
        """Wait for in-flight steps of the workers holding ``env_ids``; their results are discarded as lost."""
        for w, actions in self._flight.take(self.groups.workers_of(env_ids)).items():
            self._ledger.back(self.groups.groups[w])
            reply = self._link.collect([w], self._settings.step_timeout)[w]
            for env_id, timestep in self._gather(actions, {w: reply}).items():
                if timestep.done:
                    self._ledger.resetting([env_id])

    def apply_seeds(self, env_ids: Sequence[int] | None = None) -> None:
        self._workers.apply_seeds(env_ids)

    def apply_replay(self, env_ids: Sequence[int] | None = None) -> None:
        self._workers.apply_replay(env_ids)

    def check_replay(self) -> None:
        """Every worker's envs can record."""

    def describe(self, name: str) -> dict[int, tuple[Any, ...]]:
        return self._workers.describe(name)

    def call(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], env_ids: Sequence[int] | None
    ) -> dict[int, Any]:
        return self._workers.call(name, args, kwargs, env_ids)

    # ----- a step, out ---------------------------------------------------------------------------
    def step(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        return self._step_partial(actions) if self._flight.partial else self._step_whole(actions)

    def _step_whole(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        """Step the envs of ``actions`` and return once every one has its result."""
        sent, faults = self._dispatch(actions)
        replies: dict[int, Reply] = {**faults, **self._link.collect(sent, self._settings.step_timeout, spin=True)}
        timesteps = self._gather(actions, replies)
        self._account(timesteps)
        return timesteps

    def _dispatch(self, actions: Mapping[int, Any]) -> tuple[list[int], dict[int, Failure]]:
        """Write actions and step flags to the step buffers and wake the workers involved."""
        buffers, link, groups = self._workers.buffers, self._link, self.groups
        assert buffers is not None
        control = buffers.control
        workers = groups.workers_of(actions)
        for w in workers:
            control[groups.rows[w], CONTROL_STEP] = 0
        ids = np.fromiter(actions, dtype=np.intp, count=len(actions))
        if buffers.action is not None:  # one write of every action
            buffers.action[ids] = np.asarray(list(actions.values()), dtype=buffers.action.dtype).reshape(
                (len(ids), *buffers.action.shape[1:])
            )
        control[ids, CONTROL_STEP] = 1
        control[ids, CONTROL_RESET_ON_DONE] = self._ledger.resets_within_step()[ids]
        seq = link.number_step(workers)
        shared = step_message(seq) if buffers.layout.shared else None
        faults: dict[int, Failure] = {}
        for w in workers:
            if buffers.action is None:
                mine = {i: a for i, a in actions.items() if groups.worker_of[i] == w}
                fault = link.send(w, pickle.dumps(Command(CommandKind.ACTIONS, mine)))
                reply = fault or link.collect([w], self._settings.step_timeout)[w]
                if isinstance(reply, Failure):
                    faults[w] = reply
                    continue
            fault = link.send(w, shared or self.step_message(w, seq))
            if fault is not None:
                faults[w] = fault
        return [w for w in workers if w not in faults], faults

    def step_message(self, w: int, seq: int) -> bytes:
        """The wake-up with the step's number, and with private buffers this worker's control and action rows."""
        buffers = self._workers.buffers
        assert buffers is not None
        if buffers.layout.shared:
            return step_message(seq)
        return pack_request(buffers, self.groups.rows[w], seq)

    # ----- a step, back --------------------------------------------------------------------------
    def _gather(
        self, actions: Mapping[int, Any], replies: Mapping[int, Reply | StepReply]
    ) -> dict[int, BaseEnvTimestep]:
        """The timesteps of the stepped envs from their workers' replies; failures end episodes abnormally."""
        results, ledger, copy = self._workers.results, self._ledger, self._settings.copy_on_get
        assert results is not None
        timesteps: dict[int, BaseEnvTimestep] = {}
        for w, reply in sorted(replies.items()):
            stepped = [env_id for env_id in self.groups.groups[w] if env_id in actions]
            result = self._link.decode(w, reply, results)
            if isinstance(result, Failure):
                timesteps.update(self._worker_fault(w, result, stepped))
                continue
            if not result.failures and copy:
                timesteps.update(results.timesteps(stepped, result.infos))
                continue
            for env_id in stepped:
                failure = result.failures.get(env_id)
                if failure is not None and failure.operation == "step":
                    error = failure.error()
                    timesteps[env_id] = ledger.abnormal(env_id, error)
                    self._workers.recover(env_id, error)
                    continue
                timesteps[env_id] = results.timestep(env_id, result.infos.get(env_id, {}))
                if failure is not None:  # the step finished its episode but the automatic reset failed
                    self._workers.recover(env_id, failure.error())
        return timesteps

    def _worker_fault(self, w: int, fault: Failure, stepped: list[int]) -> dict[int, BaseEnvTimestep]:
        """Restart a dead or hung worker; its stepped envs' episodes end abnormally."""
        ledger, error = self._ledger, fault.error()
        timesteps = {}
        for env_id in stepped:
            timesteps[env_id] = ledger.abnormal(env_id, error)
            ledger.spend_retry(env_id, error)
        self._workers.restart(w)
        for env_id in self.groups.groups[w]:
            if env_id not in stepped and ledger.drop_obs(env_id) is not None:
                self.reset({env_id: {}})
        return timesteps

    def _account(self, timesteps: Mapping[int, BaseEnvTimestep]) -> None:
        """Account the envs' steps in the ledger (an env its worker reset within the step starts its next episode
        with the observation in the buffers); reset at once those whose episode ended without one."""
        for env_id in self._ledger.account(timesteps, self._first_obs):
            self.reset({env_id: {}})

    def _first_obs(self, env_id: int) -> Any:
        workers = self._workers
        assert workers.buffers is not None
        return workers.obs_of(env_id) if workers.buffers.flags[env_id, FLAG_RESET] else NOT_RESET

    # ----- whole batches -------------------------------------------------------------------------
    def step_batch(self, actions: Any) -> BatchTimestep:
        """Step every env at once: actions go to the buffers in one copy, one wake-up per worker."""
        buffers, link = self._workers.buffers, self._link
        assert buffers is not None
        ids = self._all_ids
        if buffers.action is None:  # actions travel pickled: the per-env path
            self._ledger.require_all_ready(actions)
            timesteps = self._step_whole(self._ledger.accept_action_rows(ids, actions))
            return stack_timesteps(timesteps, ids, self._ledger.ready_view)
        self._ledger.require_all_ready()
        checked = self._check_batch_actions(actions)
        buffers.action[...] = checked
        control = buffers.control
        control[:, CONTROL_STEP] = 1
        control[:, CONTROL_RESET_ON_DONE] = self._ledger.resets_within_step()
        faults: dict[int, Reply] = {}
        workers = range(len(self.groups))
        seq = link.number_step(workers)
        shared = step_message(seq) if buffers.layout.shared else None
        for w in reversed(workers):  # group 0 last: with step_in_caller it is the caller's, stepped when received
            fault = link.send(w, shared or self.step_message(w, seq))
            if fault is not None:
                faults[w] = fault
        sent = [w for w in workers if w not in faults]
        replies = {**faults, **link.collect(sent, self._settings.step_timeout, spin=True)}
        infos = self._infos_without_failures(replies)
        if infos is None:  # rare: the per-env path handles faults
            timesteps = self._gather(dict(enumerate(checked)), replies)
            self._account(timesteps)
            return stack_timesteps(timesteps, ids, self._ledger.ready_view)
        return self._batch_of(ids, infos)

    def _check_batch_actions(self, actions: Any) -> np.ndarray:
        buffers = self._workers.buffers
        assert buffers is not None and buffers.action is not None and self._workers.spaces is not None
        space = self._workers.spaces.action
        arr = np.asarray(actions)
        expected = buffers.action.shape
        if arr.shape != expected:
            if arr.size != int(np.prod(expected)):
                raise ValueError(f"step_batch() actions have shape {arr.shape}; expected {expected} for {space}")
            arr = arr.reshape(expected)
        if np.dtype(space.dtype).kind in "iu" and arr.dtype.kind not in "iub":
            raise TypeError(f"step_batch() actions have dtype {arr.dtype}; {space} takes integers")
        if self._ledger.actions_fit(arr):
            return arr
        env_num = self._ledger.env_num
        checked = self._ledger.accept_action_rows(list(range(env_num)), arr)  # names the env and value, or clips
        return np.stack([np.asarray(checked[i]) for i in range(env_num)]).reshape(expected)

    def _infos_without_failures(self, replies: MutableMapping[int, Any]) -> dict[int, dict[str, Any]] | None:
        """The step infos of every env in ``replies``, or None when a worker faulted or an env failed.

        Each reply is decoded once: ``replies`` keeps the decoded values for :meth:`_gather`.
        """
        infos: dict[int, dict[str, Any]] = {}
        link, results = self._link, self._workers.results
        assert results is not None
        expect_ok = link.expect_ok
        for w, reply in replies.items():
            if reply == expect_ok[w]:
                continue
            result = replies[w] = link.decode(w, reply, results)
            if isinstance(result, Failure) or result.failures:
                return None
            infos.update(result.infos)
        return infos

    def _batch_of(self, env_ids: list[int], infos: Mapping[int, dict[str, Any]]) -> BatchTimestep:
        """The batch of envs that all stepped without a failure, read from the buffers with one copy per array.

        Their steps are accounted as ``step`` does; only envs whose episode ended get a timestep object.
        """
        workers, ledger = self._workers, self._ledger
        layout, results, buffers = workers.layout, workers.results, workers.buffers
        assert buffers is not None and layout is not None and results is not None
        whole = len(env_ids) == len(self._all_ids)  # every env, in order (sorted and distinct)
        copy = self._settings.copy_on_get
        rows = read_rows(buffers, results.observation_space, env_ids, copy=copy, whole=whole)
        ready = ledger.ready_view
        final_obs = {}
        ended = rows.done.nonzero()[0].tolist()
        for j in ended:
            env_id = env_ids[j]
            timestep = results.timestep(env_id, infos.get(env_id, {}))
            final_obs[env_id] = timestep.obs
            ledger.forget_failures(env_id)
            self._account({env_id: timestep})
            if env_id not in ready:  # no new episode: the row shows the episode's last observation
                rows.set_row(j, timestep.obs, layout.obs_paths)
            elif not rows.reset[j]:  # reset here, after the step: the row shows the new first observation
                rows.set_row(j, ready[env_id], layout.obs_paths)
        going = range(len(env_ids)) if not ended else (~rows.done).nonzero()[0].tolist()
        ledger.stepped(rows.rows_by_env(env_ids, going))
        return BatchTimestep(
            obs=rows.obs,
            reward=rows.reward,
            done=rows.done,
            terminated=rows.terminated,
            truncated=rows.truncated,
            info=[infos.get(i, {}) for i in env_ids],
            final_obs=final_obs,
            env_ids=self._all_env_ids if whole else np.asarray(env_ids, dtype=np.int64),
        )

    # ----- partial batches -----------------------------------------------------------------------
    def _step_partial(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        """Step ``actions`` (none: only collect) and return what is in after ``step_wait_timeout``."""
        flight, ledger, settings = self._flight, self._ledger, self._settings
        early: dict[int, Reply] = {}
        if actions:
            sent, faults = self._dispatch(actions)
            flight.started([*sent, *faults], actions)
            ledger.away([i for w in [*sent, *faults] for i in self.groups.groups[w]])
            ledger.drop_obs_of(actions)
            early = dict(faults)
        elif not flight.stepping:
            raise ValueError(f"step() got no actions and no env is in flight; ready env ids: {ledger.ready_ids()}")
        in_flight = len(flight.env_ids)
        wanted = in_flight if settings.wait_num in (None, math.inf) else int(settings.wait_num)
        timesteps = self._deliver(flight.wait_partial(early, min(wanted, in_flight), settings.step_wait_timeout))
        while flight.stepping and not ledger.ready_ids():  # nothing to act on: wait for one more result
            timesteps.update(self._deliver(flight.wait_partial({}, 1, None)))
        return timesteps

    def _deliver(self, answered: Mapping[int, tuple[dict[int, Any], Reply]]) -> dict[int, BaseEnvTimestep]:
        """Read and account the steps of the workers that answered; their envs take actions again."""
        timesteps: dict[int, BaseEnvTimestep] = {}
        for w, (actions, reply) in answered.items():
            self._ledger.back(self.groups.groups[w])
            timesteps.update(self._gather(actions, {w: reply}))
        self._account(timesteps)
        return timesteps

    # ----- send / recv ---------------------------------------------------------------------------
    def worker_key(self, env_id: int) -> int:
        return self.groups.worker_of[env_id]

    def dispatch(self, actions: Mapping[int, Any]) -> None:
        """Write the actions and wake their workers; replies are gathered by :meth:`receive`."""
        self._flight.refuse_send()
        sent, faults = self._dispatch(actions)
        self._flight.sent(sent, faults)
        self._link.handed_over(quick=self._flight.quickest_reply < QUICK_REPLY)

    def receive(
        self, pending: Mapping[int, Any], wanted: int, timeout: float | None, *, as_batch: bool = False
    ) -> BatchTimestep | dict[int, BaseEnvTimestep]:
        """Gather replies until ``wanted`` envs have theirs (a worker past ``step_timeout`` becomes a failure); with
        ``as_batch`` the received envs' batch is read from the buffers at once when no env failed."""
        by_worker, replies = self._flight.await_replies(pending, wanted, timeout)
        actions = {i: a for w in replies for i, a in by_worker[w].items()}
        layout = self._workers.layout
        assert layout is not None
        if as_batch and not layout.pickled:
            infos = self._infos_without_failures(replies)
            if infos is not None:
                return self._batch_of(sorted(actions), infos)
        timesteps = self._gather(actions, replies)
        self._account(timesteps)
        return timesteps

    # ----- observations and monitoring ------------------------------------------------------------
    def ready_obs_batch(self, env_ids: list[int]) -> Any:
        """Ready observations stacked by env id: a view of shared memory when every env is ready."""
        if self._flight.stepping:
            raise EnvManagerError("ready_obs_batch is only available when no env is in flight")
        workers = self._workers
        layout, buffers, results = workers.layout, workers.buffers, workers.results
        assert buffers is not None and layout is not None and results is not None
        if layout.pickled:
            return stack_obs([self._ledger.obs(i) for i in env_ids])
        index: Any = slice(None) if len(env_ids) == self._ledger.env_num else np.asarray(env_ids)
        by_path = dict(zip(layout.obs_paths, buffers.ready, strict=True))
        return build_tree(results.observation_space, lambda p: by_path[p][index])

    def adopt_obs(self, env_id: int, obs: Any) -> Any:
        return self._workers.adopt_obs(env_id, obs)

    @property
    def buffers(self) -> SharedBuffers | None:
        """The step buffers (None before launch and after close)."""
        return self._workers.buffers

    @property
    def in_flight_env_ids(self) -> Sequence[int]:
        return self._flight.env_ids

    @property
    def channel(self) -> Channel | None:
        return self._link.opened

    @property
    def worker_pids(self) -> list[int | None]:
        channel = self._link.opened
        return [None] * len(self.groups) if channel is None else channel.pids()

    @property
    def shared_memory_names(self) -> list[str]:
        buffers = self._workers.buffers
        return [spec.name for spec in buffers.all_specs()] if buffers is not None else []

    @property
    def late_results(self) -> int:
        return self._link.late_results

    @property
    def refused_replies(self) -> int:
        return self._link.refused_replies
