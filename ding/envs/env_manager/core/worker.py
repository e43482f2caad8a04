"""The loop a subprocess worker runs: it owns a few envs and steps them as one batch per wake-up.

Messages from the manager, on any channel (a pipe here; zmq and Ray calls carry the same bytes):

- ``STEP`` and the step's number (:mod:`.sequence`): step every owned env whose ``control[i, CONTROL_STEP]``
  is set, with its action from shared memory; results go to shared memory. The reply is ``OK`` and the step's
  number or, when some env has a non-empty info dict or raised, an encoded :class:`StepReply` naming the step
  (only then is anything encoded). With a ``pickled`` layout (envs with probed spaces, no shared memory)
  observations and rewards travel in the :class:`StepReply` instead. Answers are encoded with the worker's
  :mod:`.codec`: pickled for the trainer's own processes and threads, data only for zmq peers.
- ``RAW_STEP`` and raw rows (private buffers, :mod:`.rows`): the same step, with this group's control
  and action rows in the message and its result rows after the reply's head.
- A pickled :class:`~ding.envs.env_manager.core.commands.Command` for everything else (reset, seed,
  replay, attribute reads, method calls, close).

Env exceptions are caught per env and reported with their traceback; the worker itself only
stops on ``close``, on a broken pipe, or when the parent dies (it asks the kernel to kill it then).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import pickle
import signal
import sys
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, ClassVar

from ding.envs.env_manager.core.codec import ACCEPTED, TRUSTED, Codec, NotDataError
from ding.envs.env_manager.core.commands import Command, CommandKind
from ding.envs.env_manager.core.doorbell import DoorbellRef, WorkerBell, step_of
from ding.envs.env_manager.core.failure import Failure, FailureKind
from ding.envs.env_manager.core.frames import recv_frame, send_frame
from ding.envs.env_manager.core.replies import StepReply
from ding.envs.env_manager.core.rows import pack_reply, unpack_request
from ding.envs.env_manager.core.sequence import (
    HEADER,
    RAW_STEP,
    STEP,
    is_step,
    message_seq,
    ok_reply,
    step_message,
)
from ding.envs.env_manager.core.shm import (
    CONTROL_RESET_ON_DONE,
    CONTROL_STEP,
    FLAG_DONE,
    FLAG_RESET,
    FLAG_TERMINATED,
    FLAG_TRUNCATED,
    BufferLayout,
    SharedBuffers,
)
from ding.envs.env_manager.core.spin import SpinBudget, readable
from ding.envs.env_manager.env_fn import build_env
from ding.envs.env_manager.fanout import describe_attribute
from ding.envs.env_manager.settings import seed_env
from ding.envs.probe import class_declared_spaces, read_spaces
from ding.envs.values.spaces import EnvSpaces
from ding.errors import UnknownNameError

_PR_SET_PDEATHSIG = 1
logger = logging.getLogger("ding.env_worker")


def _write_flags(row: Any, timestep: Any) -> None:
    """An env's end flags after a step (its reset flag cleared: a reset on done sets it again)."""
    row[FLAG_DONE] = timestep.done
    row[FLAG_TERMINATED] = timestep.terminated
    row[FLAG_TRUNCATED] = timestep.truncated
    row[FLAG_RESET] = False


def _not_data(env_id: int, what: str, err: NotDataError) -> Failure:
    """The failure of an env whose step produced something its manager may not receive (a data-only peer)."""
    message = f"{what} holds {err.what}, which cannot travel to this manager: a zmq worker sends data only ({ACCEPTED})"
    return Failure(FailureKind.ENV, message, env_id, "step", type(err).__name__)


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies, so no worker outlives its manager."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def single_thread_numerics() -> None:
    """One thread for the numeric libraries of this worker process (OpenMP, MKL, OpenBLAS, torch): workers run side
    by side, and each one's thread pool would compete with the others' for the cores."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"
    torch = sys.modules.get("torch")
    if torch is not None:
        with contextlib.suppress(Exception):
            torch.set_num_threads(1)


class Worker:
    """State of one worker process: its envs, their ids and the shared buffers."""

    def __init__(self, env_ids: list[int], env_fns: list[Callable[[], Any]], codec: Codec = TRUSTED) -> None:
        """``codec``: how the answers are encoded; :data:`~.codec.DATA_ONLY` for peers that may send data only."""
        self.env_ids = env_ids
        self.codec = codec
        self.env_fns = dict(zip(env_ids, env_fns, strict=True))
        self.envs: dict[int, Any] = {}
        self.buffers: SharedBuffers | None = None
        self.seeds: dict[int, tuple[int, bool | None]] = {}
        self.replay: dict[int, str] = {}
        self.pickled_actions: dict[int, Any] = {}
        self.rows = slice(min(env_ids), max(env_ids) + 1)
        self.rows_in_reply = False
        self.started = False
        """Whether :meth:`start` built every env (else its reply was a failure)."""
        """Private buffers: step and reset replies carry this worker's result rows (raw, after the head)."""

    # ----- env construction ----------------------------------------------------------------------
    def build(self, env_id: int) -> None:
        env = build_env(self.env_fns[env_id], env_id)
        if env_id in self.seeds:
            seed_env(env, *self.seeds[env_id])
        if env_id in self.replay:
            env.enable_save_replay(self.replay[env_id])
        self.envs[env_id] = env

    def spaces(self, _: Any = None) -> dict[int, EnvSpaces]:
        return {i: read_spaces(e) for i, e in self.envs.items()}

    # ----- hot path ------------------------------------------------------------------------------
    def step(self, seq: int = 0) -> bytes:
        """Step the envs ``control`` marks; the reply answers step number ``seq`` (:mod:`.sequence`)."""
        buffers = self.buffers
        assert buffers is not None
        if buffers.layout.pickled:
            return self.step_pickled(seq)
        control, flags, reward, actions = buffers.control, buffers.flags, buffers.reward, buffers.action
        reply: StepReply | None = None
        for env_id in self.env_ids:
            if not control[env_id, CONTROL_STEP]:
                continue
            env = self.envs[env_id]
            try:
                # a copy: envs and wrappers may keep the action past this step
                action = actions[env_id].copy() if actions is not None else self.pickled_actions[env_id]
                timestep = env.step(action)
            except Exception as exc:  # env code may raise anything: it travels to the parent with its traceback
                reply = reply or StepReply()
                reply.failures[env_id] = Failure.capture(env_id, "step", exc)
                continue
            reward[env_id] = timestep.reward
            _write_flags(flags[env_id], timestep)
            if timestep.info:
                reply = reply or StepReply()
                reply.infos[env_id] = timestep.info
            if not timestep.done:
                buffers.write_obs(buffers.ready, env_id, timestep.obs)
                continue
            buffers.write_obs(buffers.final, env_id, timestep.obs)
            if control[env_id, CONTROL_RESET_ON_DONE]:
                try:
                    buffers.write_obs(buffers.ready, env_id, env.reset())
                except Exception as exc:  # see above
                    reply = reply or StepReply()
                    reply.failures[env_id] = Failure.capture(env_id, "reset", exc)
                    continue
                flags[env_id, FLAG_RESET] = True
        if reply is None:
            return ok_reply(seq)
        reply.seq = seq
        return self.encode_reply(reply)

    def step_pickled(self, seq: int) -> bytes:
        """:meth:`step` for a pickled layout: observations and rewards go into the reply as the envs return them."""
        buffers = self.buffers
        assert buffers is not None
        control, flags = buffers.control, buffers.flags
        steps: dict[int, tuple[Any, Any]] = {}
        ready: dict[int, Any] = {}
        reply = StepReply(steps=steps, ready=ready, seq=seq)
        for env_id in self.env_ids:
            if not control[env_id, CONTROL_STEP]:
                continue
            env = self.envs[env_id]
            try:
                timestep = env.step(self.pickled_actions[env_id])
            except Exception as exc:  # see step()
                reply.failures[env_id] = Failure.capture(env_id, "step", exc)
                continue
            steps[env_id] = (timestep.obs, timestep.reward)
            _write_flags(flags[env_id], timestep)
            if timestep.info:
                reply.infos[env_id] = timestep.info
            if timestep.done and control[env_id, CONTROL_RESET_ON_DONE]:
                try:
                    ready[env_id] = env.reset()
                except Exception as exc:  # see step()
                    reply.failures[env_id] = Failure.capture(env_id, "reset", exc)
                    continue
                flags[env_id, FLAG_RESET] = True
        return self.encode_reply(reply)

    def encode_reply(self, reply: StepReply) -> bytes:
        """``reply`` in the codec; an env whose info or observation is not data gets a failure naming it instead."""
        try:
            return self.codec.dumps(reply)
        except NotDataError:
            pass
        for env_id in sorted({*reply.infos, *(reply.steps or {}), *(reply.ready or {})}):
            parts = [(f"info[{key!r}]", value) for key, value in reply.infos.get(env_id, {}).items()]
            if reply.steps is not None and env_id in reply.steps:
                parts += [("observation", reply.steps[env_id][0]), ("reward", reply.steps[env_id][1])]
            if reply.ready is not None and env_id in reply.ready:
                parts.append(("first observation", reply.ready[env_id]))
            for what, value in parts:
                try:
                    self.codec.dumps(value)
                except NotDataError as err:
                    reply.failures[env_id] = _not_data(env_id, what, err)
                    for kept in (reply.infos, reply.steps, reply.ready):
                        if kept is not None:
                            kept.pop(env_id, None)
                    break
        return self.codec.dumps(reply)

    def start(self, layout: BufferLayout | None) -> bytes:
        """Build the envs (and attach the buffers when the layout is known): the pickled startup reply.

        That is ``{env_id: EnvSpaces}``, or the :class:`Failure` of the first env that could not be built.
        """
        startup: Any
        try:
            for env_id in self.env_ids:
                self.build(env_id)
            if layout is not None:
                self.attach(layout)
            startup = self.spaces()
        except Exception as exc:  # a constructor failed: report it instead of the spaces
            startup = Failure.capture(self.env_ids[0], "build", exc)
        self.started = not isinstance(startup, Failure)
        try:
            return self.codec.dumps(startup)
        except NotDataError as err:  # a space of a kind that cannot travel to this manager
            self.started = False
            return self.codec.dumps(Failure.capture(self.env_ids[0], "build", err))

    def respond(self, message: bytes) -> bytes | None:
        """The reply to any message from the manager; None for ``close`` (the worker stops)."""
        if is_step(message):
            return self.answer_step(message)
        command: Command = pickle.loads(message)
        if command.kind is CommandKind.CLOSE:
            return None
        return self.answer(command)

    def answer_step(self, message: bytes) -> bytes:
        """The reply to a step message: ``STEP``, or ``RAW_STEP`` with rows (private buffers, :mod:`.rows`)."""
        buffers = self.buffers
        kind = message[:1]
        if kind == STEP and len(message) == HEADER and buffers is not None and not self.rows_in_reply:
            return self.step(message_seq(message))
        if kind != RAW_STEP or len(message) < HEADER or buffers is None or not self.rows_in_reply:
            raise ValueError(f"not a step message for this worker: {message[:16]!r}")
        unpack_request(message, buffers, self.rows)
        return pack_reply(self.step(message_seq(message)), buffers, self.rows)

    def answer(self, command: Command) -> bytes:
        """The reply to a control command: its pickled result, or the failure it raised.

        With private buffers a reset's result rows follow as raw bytes, as a step's do.
        """
        try:
            result: Any = self.handle(command)
        except Exception as exc:  # a method call or seed failed: report it, keep serving
            result = Failure.capture(self.env_ids[0], command.name, exc)
        try:
            reply = self.codec.dumps(result)
        except NotDataError as err:  # a method's result or an attribute that cannot travel to this manager
            reply = self.codec.dumps(Failure.capture(self.env_ids[0], command.name, err))
        if command.kind is CommandKind.RESET and self.rows_in_reply and isinstance(result, StepReply):
            assert self.buffers is not None
            return pack_reply(reply, self.buffers, self.rows)
        return reply

    # ----- control commands ----------------------------------------------------------------------
    def reset(self, params: dict[int, dict[str, Any]]) -> StepReply:
        assert self.buffers is not None
        pickled = self.buffers.layout.pickled
        ready: dict[int, Any] = {}
        reply = StepReply(ready=ready) if pickled else StepReply()
        for env_id, kwargs in params.items():
            try:
                obs = self.envs[env_id].reset(**kwargs)
            except Exception as exc:  # see step()
                reply.failures[env_id] = Failure.capture(env_id, "reset", exc)
                continue
            if pickled:
                ready[env_id] = obs
            else:
                self.buffers.write_obs(self.buffers.ready, env_id, obs)
            self.buffers.flags[env_id] = False
        return reply

    def handle(self, command: Command) -> Any:
        """Carry out a control command (not ``close``, which ends the serving loop) and return its answer."""
        handler = self._handlers.get(command.kind)
        if handler is None:
            known = ", ".join(kind.value for kind in self._handlers)
            raise UnknownNameError(f"a worker does not handle command {command.name!r} here; it handles: {known}")
        return getattr(self, handler)(command.payload)

    def attach(self, layout: BufferLayout) -> None:
        if self.buffers is not None:
            self.buffers.close()
        self.buffers = SharedBuffers(layout, create=False)
        self.rows_in_reply = not self.buffers.layout.shared

    def declared(self, _: Any = None) -> dict[int, bool]:
        return {i: class_declared_spaces(e) is not None for i, e in self.envs.items()}

    def take_actions(self, actions: dict[int, Any]) -> None:
        self.pickled_actions = actions

    def seed(self, seeds: dict[int, tuple[int, bool | None]]) -> None:
        for env_id, (seed, dynamic) in seeds.items():
            self.seeds[env_id] = (seed, dynamic)
            seed_env(self.envs[env_id], seed, dynamic)

    def save_replay(self, paths: dict[int, str]) -> None:
        for env_id, path in paths.items():
            self.replay[env_id] = path
            self.envs[env_id].enable_save_replay(path)

    def renew(self, env_ids: list[int]) -> StepReply:
        failures = {}
        for env_id in env_ids:
            try:
                self.envs[env_id].close()
            except Exception:  # a broken env may fail to close; it is rebuilt either way
                logger.debug("env %d raised while closing for renewal", env_id, exc_info=True)
            try:
                self.build(env_id)
            except Exception as exc:  # reported like any env failure
                failures[env_id] = Failure.capture(env_id, "renew", exc)
        return StepReply(failures=failures)

    def describe(self, name: str) -> dict[int, tuple[Any, ...]]:
        described = {env_id: describe_attribute(self.envs[env_id], name) for env_id in self.env_ids}
        self.codec.dumps(described)  # an attribute that cannot travel fails here, as the command's failure
        return described

    def call(self, request: tuple[str, tuple[Any, ...], dict[str, Any], list[int] | None]) -> dict[int, Any]:
        method, args, kwargs, env_ids = request
        ids = self.env_ids if env_ids is None else [i for i in env_ids if i in self.envs]
        return {env_id: getattr(self.envs[env_id], method)(*args, **kwargs) for env_id in ids}

    _handlers: ClassVar[dict[CommandKind, str]] = {
        CommandKind.ATTACH: "attach",
        CommandKind.SPACES: "spaces",
        CommandKind.DECLARED: "declared",
        CommandKind.RESET: "reset",
        CommandKind.ACTIONS: "take_actions",
        CommandKind.SEED: "seed",
        CommandKind.REPLAY: "save_replay",
        CommandKind.RENEW: "renew",
        CommandKind.GETATTR: "describe",
        CommandKind.CALL: "call",
    }
    """The method serving each command but ``close`` (the serving loop's own)."""

    def close(self) -> None:
        for env in self.envs.values():
            with contextlib.suppress(Exception):
                env.close()
        if self.buffers is not None:
            self.buffers.close()


def worker_main(
    env_ids: list[int],
    env_fns_blob: bytes,
    conn: Connection,
    layout: BufferLayout | None,
    parent_pid: int,
    spin_limit: float = 0.0,
    doorbell: DoorbellRef | None = None,
) -> None:
    """Entry point of a worker process; ``spin_limit`` bounds its spin-wait for the next step (0: block);
    ``doorbell``: its steps and ``OK`` replies go through shared memory while both ends are awake (:mod:`.doorbell`)."""
    if prepare_worker_process(parent_pid):
        serve_connection(env_ids, env_fns_blob, conn, layout, spin_limit, doorbell)


def prepare_worker_process(parent_pid: int) -> bool:
    """Set up a worker process its manager started: it dies with its parent, leaves Ctrl-C to the manager and
    runs numerics on one thread. False when the manager is already gone (the worker should exit)."""
    _die_with_parent()  # the kernel's parent: the manager (fork, spawn) or the forkserver, which dies with it
    try:
        os.kill(parent_pid, 0)
    except ProcessLookupError:  # the manager died before the death signal was armed
        return False
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the manager's to handle; it closes workers
    single_thread_numerics()
    return True


def serve_connection(
    env_ids: list[int],
    env_fns_blob: bytes,
    conn: Connection,
    layout: BufferLayout | None,
    spin_limit: float,
    doorbell: DoorbellRef | None = None,
) -> None:
    """Build the envs, report their spaces on ``conn``, then answer the manager until ``close`` or a closed pipe.

    The envs are closed and ``conn`` with them when it returns.
    """
    import cloudpickle

    worker = Worker(env_ids, cloudpickle.loads(env_fns_blob))
    intake: Intake | None = None
    try:
        startup = worker.start(layout)
        conn.send_bytes(startup)
        if not worker.started:  # a constructor failed: its failure was the startup reply
            return
        budget = SpinBudget(spin_limit)
        intake = Intake(conn, WorkerBell(doorbell) if doorbell is not None else None)
        while True:
            idle_since = time.perf_counter()
            budget.spin(intake.ready)
            message = intake.next()
            if message is None:  # the pipe's copy of a step already taken from the doorbell
                continue
            if is_step(message):
                budget.observe(time.perf_counter() - idle_since)
            reply = worker.respond(message)
            if reply is None:
                break
            intake.answer(message, reply)
    except (EOFError, BrokenPipeError, ConnectionResetError, KeyboardInterrupt):
        pass
    finally:
        worker.close()
        if intake is not None:
            intake.close()
        with contextlib.suppress(Exception):
            conn.close()


class Intake:
    """A worker's messages, from its pipe and, when it has one, its doorbell (:mod:`.doorbell`).

    A step rung on the doorbell is taken from there; a copy of it on the pipe (sent while this worker was falling
    asleep) is dropped when read. An ``OK`` reply to a step rings the caller and goes on the pipe only when the caller
    is asleep; every other reply goes on the pipe.
    """

    def __init__(self, conn: Connection, bell: WorkerBell | None) -> None:
        self.conn = conn
        self.bell = bell
        self.has_message = readable(conn)
        self.taken = 0
        """The number of the last step taken, from either."""

    def ready(self) -> bool:
        """Whether a message waits (on the doorbell, or on the pipe: a message, or the pipe's end)."""
        bell = self.bell
        return (bell is not None and bell.posted() > self.taken) or self.has_message()

    def next(self) -> bytes | None:
        """The next message (blocking on the pipe when none is rung); None for a step's copy already taken."""
        bell = self.bell
        if bell is None:
            return recv_frame(self.conn)
        rung = self._rung(bell)
        if rung is not None:
            return rung
        if self.has_message():
            message = recv_frame(self.conn)
        else:
            bell.sleep()
            try:
                rung = self._rung(bell)  # rung as this worker fell asleep: the caller may not have seen it sleep
                if rung is not None:
                    return rung
                message = recv_frame(self.conn)
            finally:
                bell.wake()
        seq = step_of(message)
        if seq:
            if seq <= self.taken:
                return None
            self.taken = seq
        return message

    def _rung(self, bell: WorkerBell) -> bytes | None:
        posted = bell.posted()
        if posted <= self.taken:
            return None
        self.taken = posted
        return step_message(posted)

    def answer(self, message: bytes, reply: bytes) -> None:
        """Send ``reply`` to ``message``: an ``OK`` to a ``STEP`` on the doorbell (and on the pipe when the caller is
        asleep), anything else on the pipe."""
        if self.bell is not None:
            seq = step_of(message)
            if seq and reply == ok_reply(seq) and not self.bell.answer(seq):
                return
        send_frame(self.conn, reply)

    def close(self) -> None:
        if self.bell is not None:
            self.bell.close()
            self.bell = None
