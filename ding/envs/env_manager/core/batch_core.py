"""``BatchCore``: the env manager that runs its envs in workers, over any channel.

The core owns everything but the transport: the envs' groups (``envs_per_worker`` per worker), the step buffers
laid out from the declared spaces, the per-env state machine of :class:`~ding.envs.env_manager.BaseEnvManager`,
retries, restarts of dead or hung workers, renewal of broken envs, and the exactly-once accounting of steps. It
talks to workers only through a :class:`~ding.envs.env_manager.core.channel.Channel`; a manager type is the core
plus the channel (and placement) it makes in :meth:`BatchCore._make_channel`.

The parent detects every fault itself: a dead worker through its channel (at once), a hung one through
``step_timeout`` / ``reset_timeout``. A dead or hung worker is stopped and started afresh; the episodes it was
running end with abnormal timesteps and its envs restart, while every other env keeps its steps.

Envs whose spaces are not declared by their constructors are probed in a child process before launch (the parent
never builds one); their actions travel pickled, and without shared memory so do their observations and rewards.
"""

from __future__ import annotations

import pickle
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import cloudpickle
from gymnasium.spaces.utils import is_space_dtype_shape_equiv

from ding.envs.env_manager.base_manager import BaseEnvManager
from ding.envs.env_manager.core.channel import Channel, Reply, WorkerSetup
from ding.envs.env_manager.core.codec import RefusedDataError
from ding.envs.env_manager.core.commands import Command, CommandKind
from ding.envs.env_manager.core.failure import Failure
from ding.envs.env_manager.core.in_flight import InFlight
from ding.envs.env_manager.core.replies import StepReply
from ding.envs.env_manager.core.results import Results
from ding.envs.env_manager.core.shm import BufferLayout, SharedBuffers
from ding.envs.env_manager.core.spin import SPIN_LIMIT, SpinBudget
from ding.envs.env_manager.settings import reset_wait
from ding.envs.env_manager.state import EnvState
from ding.envs.probe import probe_spaces
from ding.envs.spaces import EnvSpaces
from ding.errors import EnvSpecError
from ding.utils.accepts import redeclare

_ANSWERS: dict[CommandKind, type | tuple[type, ...]] = {
    CommandKind.ATTACH: type(None),
    CommandKind.SPACES: dict,
    CommandKind.DECLARED: dict,
    CommandKind.RESET: StepReply,
    CommandKind.ACTIONS: type(None),
    CommandKind.SEED: type(None),
    CommandKind.REPLAY: type(None),
    CommandKind.RENEW: StepReply,
    CommandKind.GETATTR: dict,
    CommandKind.CALL: dict,
}
"""The type of a worker's answer to each control command (``close`` gets none)."""


def _free(buffers: list[SharedBuffers]) -> None:
    for shared in buffers:
        shared.close()
    buffers.clear()


class BatchCore(InFlight):
    """Envs in workers reached through a channel; see the module docstring and ``_make_channel``."""

    config: ClassVar[dict[str, Any]] = redeclare(
        BaseEnvManager.config,
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

    def __init__(self, env_fn: Sequence[Any], cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(env_fn, cfg)
        per_worker = int(self._cfg.envs_per_worker)
        self._groups = [list(range(s, min(s + per_worker, self._env_num))) for s in range(0, self._env_num, per_worker)]
        self._worker_of = {env_id: w for w, group in enumerate(self._groups) for env_id in group}
        self._group_rows = [slice(group[0], group[-1] + 1) for group in self._groups]
        """Each env group's rows in the step buffers."""
        self._blobs = [cloudpickle.dumps([self._env_fns[i] for i in group]) for group in self._groups]
        self._layout: BufferLayout | None = None
        self._buffers: SharedBuffers | None = None
        self._results: Results | None = None
        self._owned_buffers: list[SharedBuffers] = []
        self._spin = SpinBudget(SPIN_LIMIT)
        self._channel: Channel | None = None
        self._refused_replies = 0
        """Replies refused because they did not decode (a data-only peer that sent something else)."""
        self._init_step_numbers()
        self._init_in_flight()
        # If the manager is dropped or the interpreter exits without close(), still free its shared memory.
        weakref.finalize(self, _free, self._owned_buffers)

    def _make_channel(self) -> Channel:
        """The channel (with its placement) this manager type reaches its workers through; built at each launch."""
        raise NotImplementedError(f"{type(self).__name__} does not say which channel it uses")

    @property
    def worker_pids(self) -> list[int | None]:
        """Process ids of the workers (for monitoring and fault-injection tests)."""
        if self._channel is None:
            return [None] * len(self._groups)
        return self._channel.pids()

    @property
    def shared_memory_names(self) -> list[str]:
        return [spec.name for spec in self._buffers.all_specs()] if self._buffers is not None else []

    def _probe_spaces(self) -> EnvSpaces:
        """Build env 0 in a child process (started as the workers are) to read its spaces."""
        return probe_spaces(self._env_fns[0], context=self._cfg.context or "fork")

    def _launch_timeout(self) -> float | None:
        """Seconds a worker may take to start and build its envs: ``connect_timeout``, else ``reset_timeout``."""
        return self._connect_timeout if self._connect_timeout is not None else self._reset_timeout

    def _setup(self, w: int) -> WorkerSetup:
        return WorkerSetup(w, self._groups[w], self._blobs[w], self._layout, self._spin.limit)

    # ----- worker lifecycle ----------------------------------------------------------------------
    def _create_envs(self) -> None:
        try:
            if self._spaces is not None:
                self._allocate(self._spaces)
            if self._channel is None:
                self._channel = self._make_channel()
                channel = self._channel
                weakref.finalize(self, channel.close)
            self._channel.open(len(self._groups))
            startups = self._start_workers(self._channel)
            if not self._spaces_declared and self._classes_declare(startups):
                self._spaces_declared = True  # built by factories, but of classes that declare these spaces
                self._spaces = startups[0][self._groups[0][0]]
                self._free_buffers()
            if self._buffers is None:  # adopt what the first env was built with
                self._spaces = self._spaces or startups[0][self._groups[0][0]]
                self._allocate(self._spaces)
                for w in range(len(self._groups)):
                    self._request(w, Command(CommandKind.ATTACH, self._layout))
            for startup in startups:
                self._check_startup(startup)
        except BaseException:
            self.close()
            raise
        if self._seeds:
            self._apply_seeds()
        if self._replay_dirs is not None:
            self._apply_replay()

    def _start_workers(self, channel: Channel) -> list[dict[int, EnvSpaces]]:
        """Start every group's worker (all at once, or each after the previous one started); their startups."""
        groups = range(len(self._groups))
        if self._cfg.start_serially:
            startups = []
            for w in groups:
                channel.start(self._setup(w))
                startups.append(self._await_startup(w))
            return startups
        for w in groups:
            channel.start(self._setup(w))
        return [self._await_startup(w) for w in groups]

    def _classes_declare(self, startups: Sequence[dict[int, EnvSpaces]]) -> bool:
        """Whether every probed env's class declares its spaces, equal to the built ones and to each other's.

        Such envs (built by a factory function rather than a class) are then treated as declared.
        """
        built = [spaces for startup in startups for spaces in startup.values()]
        if any(spaces != built[0] for spaces in built) or (self._spaces is not None and self._spaces != built[0]):
            return False
        return all(all(self._request(w, Command(CommandKind.DECLARED)).values()) for w in range(len(self._groups)))

    def _allocate(self, env_spaces: EnvSpaces) -> None:
        shared = bool(self._cfg.shared_memory)
        self._layout = BufferLayout.plan(env_spaces, self._env_num, shared=shared, declared=self._spaces_declared)
        self._buffers = SharedBuffers(self._layout, create=True)
        self._owned_buffers.append(self._buffers)
        self._results = Results(self._buffers, env_spaces.observation, self._copy_on_get)

    def _await_startup(self, w: int) -> dict[int, EnvSpaces]:
        """Worker ``w``'s startup: the spaces of the envs it built; a failure to start or build raises."""
        result = self._collect([w], self._launch_timeout())[w]
        if isinstance(result, Failure):
            raise result.error()
        startup = self._answer(w, result, dict)
        if isinstance(startup, Failure):
            raise startup.error()
        if sorted(startup) != self._groups[w] or not all(isinstance(s, EnvSpaces) for s in startup.values()):
            raise self._refuse(
                w, RefusedDataError(f"a startup that is not the spaces of envs {self._groups[w]}")
            ).error()
        return startup

    def _answer(self, w: int, reply: bytes, expected: type | tuple[type, ...]) -> Any:
        """Worker ``w``'s answer to a control command: its value (of type ``expected``), or the failure it reports.

        An answer that does not decode as ``expected`` is refused, as a step reply is (:meth:`_refuse`).
        """
        try:
            value = self.channel.codec.loads(reply)
        except RefusedDataError as err:
            return self._refuse(w, err)
        if not isinstance(value, (Failure, expected)):
            return self._refuse(w, RefusedDataError(f"refused an answer that is a {type(value).__name__}"))
        return value

    def _check_startup(self, startup: dict[int, EnvSpaces]) -> None:
        assert self._spaces is not None and self._layout is not None
        for env_id, built in sorted(startup.items()):
            if self._spaces_declared:
                if built != self._spaces:
                    raise EnvSpecError(
                        f"env {env_id} was built with spaces {built}, but the batch declares {self._spaces}"
                    )
            elif not self._layout.pickled:  # probed spaces: only the shapes and dtypes shared memory holds must agree
                for name in ("observation", "reward"):
                    mine, first = getattr(built, name), getattr(self._spaces, name)
                    if mine != first and not is_space_dtype_shape_equiv(mine, first):
                        raise EnvSpecError(
                            f"env {env_id} was built with {name} space {mine}, but env 0 has {first}; one "
                            "shared-memory layout needs their shapes and dtypes equal (shared_memory=False lets each "
                            "env differ)"
                        )

    def close(self) -> None:
        self._clear_in_flight()  # the workers stop with the manager: no step is in flight any more
        super().close()

    def _restart_worker(self, w: int) -> None:
        """Stop worker ``w`` and start a fresh one with the same envs, seeds and replay settings."""
        channel = self.channel
        channel.stop(w)
        channel.start(self._setup(w))
        try:
            self._check_startup(self._await_startup(w))
        except BaseException:
            self.close()
            raise
        ids = self._groups[w]
        if any(i in self._seeds for i in ids):
            self._apply_seeds(ids)
        if self._replay_dirs is not None:
            self._apply_replay(ids)

    def _close_envs(self) -> None:
        try:
            if self._channel is not None:
                self._channel.close()
        finally:
            self._free_buffers()

    def _free_buffers(self) -> None:
        """Unmap this batch's shared memory and remove its segments (views callers kept stay readable)."""
        self._buffers, self._results = None, None
        _free(self._owned_buffers)

    # ----- messaging -----------------------------------------------------------------------------
    def _request(self, w: int, command: Command, timeout: float | None = None) -> Any:
        """Send a control command and return the worker's answer; faults raise (control paths are not retried)."""
        self._check_no_step_in_flight(w, command.name)
        fault = self._send(w, pickle.dumps(command, protocol=pickle.HIGHEST_PROTOCOL))
        reply = fault or self._collect([w], timeout or reset_wait(self._reset_timeout, self._connect_timeout))[w]
        result = reply if isinstance(reply, Failure) else self._answer(w, reply, _ANSWERS[command.kind])
        if isinstance(result, Failure):
            if result.of_worker:
                self.close()
            raise result.error()
        return result

    # ----- control commands ----------------------------------------------------------------------
    def _reset_envs(self, params: Mapping[int, dict[str, Any]]) -> None:
        self._drain_partial([i for i in params])
        pending = dict(params)
        timeout = reset_wait(self._reset_timeout, self._connect_timeout)
        while pending:
            workers = sorted({self._worker_of[env_id] for env_id in pending})
            for env_id in pending:
                self._env_states[env_id] = EnvState.RESET
            faults: dict[int, Reply] = {}
            sent = []
            for w in workers:
                mine = {i: kw for i, kw in pending.items() if self._worker_of[i] == w}
                fault = self._send(w, pickle.dumps(Command(CommandKind.RESET, mine), protocol=pickle.HIGHEST_PROTOCOL))
                if fault is not None:
                    faults[w] = fault
                else:
                    sent.append(w)
            replies = {**faults, **self._collect(sent, timeout)}
            retry: dict[int, dict[str, Any]] = {}
            for w, reply in sorted(replies.items()):
                mine = {i: kw for i, kw in pending.items() if self._worker_of[i] == w}
                result = self._decode(w, reply, step=False)
                if isinstance(result, Failure):
                    error = result.error()
                    retry.update({i: kw for i, kw in mine.items() if self._spend_retry(i, error)})
                    self._restart_worker(w)
                    for env_id in self._groups[w]:  # the restart rebuilt the group's other envs too
                        if env_id not in mine and self._ready_obs.pop(env_id, None) is not None:
                            retry[env_id] = {}
                    continue
                for env_id, kwargs in mine.items():
                    if env_id in result.failures:
                        if self._recover(env_id, result.failures[env_id].error()):
                            retry[env_id] = kwargs
                        continue
                    self._ready_obs[env_id] = self._obs_of(env_id)
                    self._env_states[env_id] = EnvState.RUN
            pending = retry
            if pending:
                self._wait_before_retry()

    def _apply_seeds(self, env_ids: Sequence[int] | None = None) -> None:
        ids = [i for i in (env_ids if env_ids is not None else range(self._env_num)) if i in self._seeds]
        for w in sorted({self._worker_of[i] for i in ids}):
            mine = {i: (self._seeds[i], self._dynamic_seed) for i in ids if self._worker_of[i] == w}
            self._request(w, Command(CommandKind.SEED, mine))

    def _apply_replay(self, env_ids: Sequence[int] | None = None) -> None:
        assert self._replay_dirs is not None
        ids = list(env_ids if env_ids is not None else range(self._env_num))
        for w in sorted({self._worker_of[i] for i in ids}):
            mine = {i: self._replay_dirs[i] for i in ids if self._worker_of[i] == w}
            self._request(w, Command(CommandKind.REPLAY, mine))

    def _renew_env(self, env_id: int) -> None:
        result: StepReply = self._request(self._worker_of[env_id], Command(CommandKind.RENEW, [env_id]))
        if result.failures:
            failure = next(iter(result.failures.values()))
            self.close()
            raise failure.error()

    def _describe_all(self, name: str) -> dict[int, tuple[Any, ...]]:
        described: dict[int, tuple[Any, ...]] = {}
        for w in range(len(self._groups)):
            described.update(self._request(w, Command(CommandKind.GETATTR, name)))
        return described

    def _call_envs(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], env_ids: Sequence[int] | None
    ) -> dict[int, Any]:
        ids = list(range(self._env_num) if env_ids is None else env_ids)
        results: dict[int, Any] = {}
        for w in sorted({self._worker_of[i] for i in ids}):
            mine = [i for i in ids if self._worker_of[i] == w]
            results.update(self._request(w, Command(CommandKind.CALL, (name, args, kwargs, mine))))
        return results
