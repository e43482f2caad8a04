"""The channel protocol, driven directly: every channel starts, answers, fails, restarts and closes alike.

The batch core relies on exactly these behaviours (``ding/envs/env_manager/core/channel.py``); each channel
implementation runs the same checks with real workers and real envs.
"""

from __future__ import annotations

import os
import pickle
import signal
import time
from collections.abc import Callable, Iterator
from functools import partial

import cloudpickle
import pytest

from ding.envs.env_manager.channels.in_caller import InCallerChannel
from ding.envs.env_manager.channels.pipe import LocalProcesses, PipeChannel
from ding.envs.env_manager.channels.zmq.channel import ZmqChannel
from ding.envs.env_manager.channels.zmq.placement import LocalAndRemoteWorkers
from ding.envs.env_manager.core.channel import Channel, WorkerSetup
from ding.envs.env_manager.core.commands import Command, CommandKind
from ding.envs.env_manager.core.failure import Failure, FailureKind
from ding.envs.values.spaces import EnvSpaces
from tests.envs.env_manager.fault_envs import FaultyEnv

GROUPS = [[0, 1], [2, 3]]


def zmq_channel(endpoint: str) -> Channel:
    """Local zmq workers over ``endpoint``, with a short heartbeat so the hub's liveness runs too."""
    placement = LocalAndRemoteWorkers(endpoint, "fork", len(GROUPS), 0, wait_timeout=60.0, start_timeout=60.0)
    return ZmqChannel(placement, heartbeat_interval=0.1, heartbeat_timeout=1.0)


CHANNELS: dict[str, Callable[[], Channel]] = {
    "pipe": lambda: PipeChannel(LocalProcesses("fork")),
    "pipe-without-doorbells": lambda: PipeChannel(LocalProcesses("fork"), doorbells=False),
    "in-caller": lambda: InCallerChannel(PipeChannel(LocalProcesses("fork"))),
    "zmq-ipc": partial(zmq_channel, "ipc"),
    "zmq-tcp": partial(zmq_channel, "tcp"),
}


def setup_of(w: int, env_cfg: dict[str, object] | None = None) -> WorkerSetup:
    fns = [partial(FaultyEnv, cfg=env_cfg or {}) for _ in GROUPS[w]]
    return WorkerSetup(w, GROUPS[w], cloudpickle.dumps(fns), None, 0.0)


def ask(channel: Channel, w: int, command: Command) -> object:
    assert channel.send(w, pickle.dumps(command)) is None
    reply = channel.receive([w], 10.0)[w]
    assert isinstance(reply, bytes), reply
    return pickle.loads(reply)


@pytest.fixture(params=sorted(CHANNELS))
def channel(request: pytest.FixtureRequest) -> Iterator[Channel]:
    made = CHANNELS[request.param]()
    made.open(len(GROUPS))
    yield made
    made.close()


def start_all(channel: Channel, env_cfg: dict[str, object] | None = None) -> dict[int, object]:
    for w in range(len(GROUPS)):
        channel.start(setup_of(w, env_cfg))
    replies = channel.receive(range(len(GROUPS)), 10.0)
    return {w: pickle.loads(reply) if isinstance(reply, bytes) else reply for w, reply in replies.items()}


def test_the_first_answer_is_the_built_envs_spaces(channel: Channel) -> None:
    startups = start_all(channel)
    expected = EnvSpaces(*FaultyEnv.raw_spaces({}))
    assert startups == {w: dict.fromkeys(group, expected) for w, group in enumerate(GROUPS)}


def test_a_failing_constructor_is_the_startup_failure(channel: Channel) -> None:
    channel.start(WorkerSetup(1, [2, 3], cloudpickle.dumps([partial(FaultyEnv, cfg={"nope": 1})] * 2), None, 0.0))
    failure = pickle.loads(channel.receive([1], 10.0)[1])  # type: ignore[arg-type]
    assert isinstance(failure, Failure) and failure.kind is FailureKind.ENV and failure.operation == "build"
    assert "nope" in failure.message and "Traceback" in failure.traceback_text


def test_answers_come_back_in_order_per_worker(channel: Channel) -> None:
    start_all(channel)
    for w in range(len(GROUPS)):
        channel.send(w, pickle.dumps(Command(CommandKind.GETATTR, "instance")))
        channel.send(w, pickle.dumps(Command(CommandKind.CALL, ("raw_spaces", ({},), {}, GROUPS[w]))))
    first = channel.receive(range(len(GROUPS)), 10.0)
    second = channel.receive(range(len(GROUPS)), 10.0)
    for w in range(len(GROUPS)):
        assert set(pickle.loads(first[w])) == set(GROUPS[w])  # type: ignore[arg-type]
        assert all(isinstance(v, EnvSpaces) for v in pickle.loads(second[w]).values())  # type: ignore[arg-type]


def test_poll_reports_answered_workers_and_times_out_on_silent_ones(channel: Channel) -> None:
    start_all(channel)
    assert channel.poll([0, 1], 0.05) == []  # nothing asked, nothing answered
    channel.send(1, pickle.dumps(Command(CommandKind.DECLARED)))
    deadline = time.monotonic() + 10.0
    answered: list[int] = []
    while 1 not in answered and time.monotonic() < deadline:
        answered = channel.poll([0, 1], 1.0)
    assert answered == [1]
    assert pickle.loads(channel.receive([1], 1.0)[1]) == {2: True, 3: True}  # type: ignore[arg-type]


def test_a_killed_worker_is_a_died_failure_and_a_restart_serves_again(channel: Channel) -> None:
    start_all(channel)
    victim = channel.pids()[1]
    assert victim is not None
    os.kill(victim, signal.SIGKILL)
    fault = channel.send(1, pickle.dumps(Command(CommandKind.DECLARED)))
    reply = fault or channel.receive([1], 10.0)[1]
    assert isinstance(reply, Failure) and reply.kind is FailureKind.DIED and "died" in reply.message
    channel.stop(1)
    channel.start(setup_of(1))
    assert isinstance(pickle.loads(channel.receive([1], 10.0)[1]), dict)  # type: ignore[arg-type]
    assert channel.pids()[1] not in (None, victim)
    assert ask(channel, 1, Command(CommandKind.DECLARED)) == {2: True, 3: True}


def test_a_silent_worker_is_a_timeout_failure(channel: Channel) -> None:
    start_all(channel, {"fault": "hang", "at_step": 1})
    channel.send(1, pickle.dumps(Command(CommandKind.CALL, ("step", (0,), {}, [2]))))  # env 2's first step hangs
    reply = channel.receive([1], 0.2)[1]
    assert isinstance(reply, Failure) and reply.kind is FailureKind.TIMEOUT and "within 0.2 s" in reply.message
    channel.stop(1)  # a hung worker is killed
    channel.start(setup_of(1))
    assert isinstance(pickle.loads(channel.receive([1], 10.0)[1]), dict)  # type: ignore[arg-type]


def test_close_stops_every_worker(channel: Channel) -> None:
    start_all(channel)
    pids = [pid for pid in channel.pids() if pid is not None]
    assert pids
    channel.close()
    assert channel.pids() == [None] * len(GROUPS)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
