"""The batch core's workers: started with their env groups, restarted after a fault, and given control commands.

:class:`Workers` owns the step buffers (laid out from the envs' spaces before any worker starts, or after the first
worker reports them when they were probed) and everything but the step: launch (each worker builds its group and
reports the built spaces, checked against the declared ones), restarts of dead or hung workers, resets with their
retries and renewals, seeds, video recording, attribute reads and method calls. Control commands wait for no step:
one sent while its worker steps envs is refused. A worker that fails a control command, or that cannot be
restarted, closes the manager: its envs have no way left to run.
"""

from __future__ import annotations

import pickle
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import cloudpickle
from gymnasium.spaces.utils import is_space_dtype_shape_equiv

from ding.envs.env_manager.core.channel import Channel, Reply, WorkerSetup
from ding.envs.env_manager.core.codec import RefusedDataError
from ding.envs.env_manager.core.commands import Command, CommandKind
from ding.envs.env_manager.core.failure import Failure
from ding.envs.env_manager.core.groups import EnvGroups
from ding.envs.env_manager.core.in_flight import InFlight
from ding.envs.env_manager.core.link import WorkerLink
from ding.envs.env_manager.core.replies import StepReply
from ding.envs.env_manager.core.results import Results
from ding.envs.env_manager.core.shm import BufferLayout, SharedBuffers
from ding.envs.env_manager.engine import EngineParts
from ding.envs.env_manager.ledger import Retry
from ding.envs.env_state import state_key
from ding.envs.values.spaces import EnvSpaces
from ding.errors import EnvManagerError, EnvSpecError

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


class Workers:
    """The workers of ``groups``, reached through ``link`` (see the module docstring)."""

    def __init__(self, parts: EngineParts, groups: EnvGroups, link: WorkerLink, flight: InFlight) -> None:
        self._settings, self._ledger, self._setup = parts.settings, parts.ledger, parts.setup
        self._close_manager = parts.close_manager
        self._groups, self._link, self._flight = groups, link, flight
        self._blobs = [cloudpickle.dumps([parts.env_fns[i] for i in group]) for group in groups.groups]
        self._spaces: EnvSpaces | None = None
        self._declared = False
        self.layout: BufferLayout | None = None
        """The step buffers' layout (the latest launch's)."""
        self.buffers: SharedBuffers | None = None
        """The step buffers (None before launch and after close)."""
        self.results: Results | None = None
        """Reads results out of the step buffers and the replies."""
        self._owned: list[SharedBuffers] = []
        # If the manager is dropped or the interpreter exits without close(), still free its shared memory.
        weakref.finalize(self, _free, self._owned)

    @property
    def spaces(self) -> EnvSpaces | None:
        """The envs' spaces as the latest launch built them."""
        return self._spaces

    def _worker_setup(self, w: int) -> WorkerSetup:
        return WorkerSetup(w, self._groups.groups[w], self._blobs[w], self.layout, self._link.spin.limit, state_key())

    # ----- lifecycle -----------------------------------------------------------------------------
    def launch(self, env_spaces: EnvSpaces | None, declared: bool) -> tuple[EnvSpaces, bool]:
        """Start every group's worker and attach it to the step buffers; the spaces as built (see ``Engine``)."""
        self._spaces, self._declared = env_spaces, declared
        if env_spaces is not None:
            self._allocate(env_spaces)
        startups = self._start_all(self._link.open())
        first = startups[0][self._groups.groups[0][0]]
        if not self._declared and self._classes_declare(startups):
            self._declared = True  # built by factories, but of classes that declare these spaces
            self._spaces = first
            self._free()
        if self.buffers is None:  # adopt what the first env was built with
            self._spaces = self._spaces or first
            self._allocate(self._spaces)
            for w in range(len(self._groups)):
                self.request(w, Command(CommandKind.ATTACH, self.layout))
        for startup in startups:
            self._check_startup(startup)
        if self._setup.seeds:
            self.apply_seeds()
        if self._setup.replay_dirs is not None:
            self.apply_replay()
        assert self._spaces is not None
        return self._spaces, self._declared

    def _start_all(self, channel: Channel) -> list[dict[int, EnvSpaces]]:
        """Start every group's worker (all at once, or each after the previous one started); their startups."""
        groups = range(len(self._groups))
        if self._settings.rest.start_serially:
            startups = []
            for w in groups:
                channel.start(self._worker_setup(w))
                startups.append(self._await_startup(w))
            return startups
        for w in groups:
            channel.start(self._worker_setup(w))
        return [self._await_startup(w) for w in groups]

    def _classes_declare(self, startups: Sequence[dict[int, EnvSpaces]]) -> bool:
        """Whether every probed env's class declares its spaces, equal to the built ones and to each other's.

        Such envs (built by a factory function rather than a class) are then treated as declared.
        """
        built = [spaces for startup in startups for spaces in startup.values()]
        if any(spaces != built[0] for spaces in built) or (self._spaces is not None and self._spaces != built[0]):
            return False
        return all(all(self.request(w, Command(CommandKind.DECLARED)).values()) for w in range(len(self._groups)))

    def _allocate(self, env_spaces: EnvSpaces) -> None:
        shared = bool(self._settings.rest.shared_memory)
        env_num = self._ledger.env_num
        self.layout = BufferLayout.plan(env_spaces, env_num, shared=shared, declared=self._declared)
        self.buffers = SharedBuffers(self.layout, create=True)
        self._owned.append(self.buffers)
        self.results = Results(self.buffers, env_spaces.observation, self._settings.copy_on_get)

    def _free(self) -> None:
        """Unmap this batch's shared memory and remove its segments (views callers kept stay readable)."""
        self.buffers, self.results = None, None
        _free(self._owned)

    def _await_startup(self, w: int) -> dict[int, EnvSpaces]:
        """Worker ``w``'s startup: the spaces of the envs it built; a failure to start or build raises."""
        link = self._link
        result = link.collect([w], self._settings.launch_timeout())[w]
        if isinstance(result, Failure):
            raise result.error()
        startup = link.answer(w, result, dict)
        if isinstance(startup, Failure):
            raise startup.error()
        group = self._groups.groups[w]
        if sorted(startup) != group or not all(isinstance(s, EnvSpaces) for s in startup.values()):
            raise link.refuse(w, RefusedDataError(f"a startup that is not the spaces of envs {group}")).error()
        return startup

    def _check_startup(self, startup: dict[int, EnvSpaces]) -> None:
        assert self._spaces is not None and self.layout is not None
        for env_id, built in sorted(startup.items()):
            if self._declared:
                if built != self._spaces:
                    raise EnvSpecError(
                        f"env {env_id} was built with spaces {built}, but the batch declares {self._spaces}"
                    )
            elif not self.layout.pickled:  # probed spaces: only the shapes and dtypes shared memory holds must agree
                for name in ("observation", "reward"):
                    mine, first = getattr(built, name), getattr(self._spaces, name)
                    if mine != first and not is_space_dtype_shape_equiv(mine, first):
                        raise EnvSpecError(
                            f"env {env_id} was built with {name} space {mine}, but env 0 has {first}; one "
                            "shared-memory layout needs their shapes and dtypes equal (shared_memory=False lets each "
                            "env differ)"
                        )

    def restart(self, w: int) -> None:
        """Stop worker ``w`` and start a fresh one with the same envs, seeds and replay settings."""
        channel = self._link.channel
        channel.stop(w)
        channel.start(self._worker_setup(w))
        try:
            self._check_startup(self._await_startup(w))
        except BaseException:
            self._close_manager()
            raise
        ids = self._groups.groups[w]
        if any(i in self._setup.seeds for i in ids):
            self.apply_seeds(ids)
        if self._setup.replay_dirs is not None:
            self.apply_replay(ids)

    def close(self) -> None:
        """Close the workers (the channel) and free the step buffers."""
        try:
            channel = self._link.opened
            if channel is not None:
                channel.close()
        finally:
            self._free()

    # ----- control commands ----------------------------------------------------------------------
    def request(self, w: int, command: Command, timeout: float | None = None) -> Any:
        """Send a control command and return the worker's answer; faults raise (control paths are not retried)."""
        self._flight.check_idle(w, command.name)
        link = self._link
        fault = link.send(w, pickle.dumps(command, protocol=pickle.HIGHEST_PROTOCOL))
        reply = fault or link.collect([w], timeout or self._settings.reset_wait())[w]
        result = reply if isinstance(reply, Failure) else link.answer(w, reply, _ANSWERS[command.kind])
        if isinstance(result, Failure):
            if result.of_worker:
                self._close_manager()
            raise result.error()
        return result

    def reset(self, params: Mapping[int, dict[str, Any]]) -> None:
        """Reset the envs of ``params``; a failed env spends a retry, a failed worker is restarted (see ``Engine``)."""
        ledger, link, groups = self._ledger, self._link, self._groups
        pending = dict(params)
        timeout = self._settings.reset_wait()
        while pending:
            by_worker = groups.by_worker(pending)
            ledger.resetting(pending)
            faults: dict[int, Reply] = {}
            sent = []
            for w, mine in sorted(by_worker.items()):
                fault = link.send(w, pickle.dumps(Command(CommandKind.RESET, mine), protocol=pickle.HIGHEST_PROTOCOL))
                if fault is not None:
                    faults[w] = fault
                else:
                    sent.append(w)
            replies = {**faults, **link.collect(sent, timeout)}
            retry: dict[int, dict[str, Any]] = {}
            for w, reply in sorted(replies.items()):
                mine = by_worker[w]
                assert self.results is not None
                result = link.decode(w, reply, self.results, step=False)
                if isinstance(result, Failure):
                    error = result.error()
                    retry.update({i: kw for i, kw in mine.items() if ledger.spend_retry(i, error)})
                    self.restart(w)
                    for env_id in groups.groups[w]:  # the restart rebuilt the group's other envs too
                        if env_id not in mine and ledger.drop_obs(env_id) is not None:
                            retry[env_id] = {}
                    continue
                for env_id, kwargs in mine.items():
                    if env_id in result.failures:
                        if self.recover(env_id, result.failures[env_id].error()):
                            retry[env_id] = kwargs
                        continue
                    ledger.started(env_id, self.obs_of(env_id))
            pending = retry
            if pending:
                self._settings.wait_before_retry()

    def recover(self, env_id: int, error: EnvManagerError) -> bool:
        """Spend a retry on ``env_id`` and renew it if so configured (a reset follows); False when past its budget."""
        retry = self._ledger.recover(env_id, error)
        if retry is Retry.RENEW:
            self.renew(env_id)
        return retry is not None

    def renew(self, env_id: int) -> None:
        """Build env ``env_id`` anew in its worker, with its seed and replay settings."""
        result: StepReply = self.request(self._groups.worker_of[env_id], Command(CommandKind.RENEW, [env_id]))
        if result.failures:
            failure = next(iter(result.failures.values()))
            self._close_manager()
            raise failure.error()

    def apply_seeds(self, env_ids: Sequence[int] | None = None) -> None:
        seeds, dynamic = self._setup.seeds, self._setup.dynamic_seed
        ids = [i for i in (env_ids if env_ids is not None else range(self._ledger.env_num)) if i in seeds]
        for w, mine in sorted(self._groups.by_worker({i: (seeds[i], dynamic) for i in ids}).items()):
            self.request(w, Command(CommandKind.SEED, mine))

    def apply_replay(self, env_ids: Sequence[int] | None = None) -> None:
        dirs = self._setup.replay_dirs
        assert dirs is not None
        ids = env_ids if env_ids is not None else range(self._ledger.env_num)
        for w, mine in sorted(self._groups.by_worker({i: dirs[i] for i in ids}).items()):
            self.request(w, Command(CommandKind.REPLAY, mine))

    def describe(self, name: str) -> dict[int, tuple[Any, ...]]:
        described: dict[int, tuple[Any, ...]] = {}
        for w in range(len(self._groups)):
            described.update(self.request(w, Command(CommandKind.GETATTR, name)))
        return described

    def call(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], env_ids: Sequence[int] | None
    ) -> dict[int, Any]:
        ids = list(range(self._ledger.env_num) if env_ids is None else env_ids)
        results: dict[int, Any] = {}
        for w in self._groups.workers_of(ids):
            mine = [i for i in ids if self._groups.worker_of[i] == w]
            results.update(self.request(w, Command(CommandKind.CALL, (name, args, kwargs, mine))))
        return results

    # ----- observations --------------------------------------------------------------------------
    def obs_of(self, env_id: int, final: bool = False) -> Any:
        """Env ``env_id``'s ready observation in the buffers, or with ``final`` its ended episode's last one."""
        assert self.results is not None
        return self.results.obs_of(env_id, final)

    def adopt_obs(self, env_id: int, obs: Any) -> Any:
        """Write ``obs`` into env ``env_id``'s ready row (whole-batch reads use the rows); the row as read back."""
        if self.buffers is None or self.layout is None or self.layout.pickled:
            return obs
        self.buffers.write_obs(self.buffers.ready, env_id, obs)
        return self.obs_of(env_id)
