"""The Ray channels on their own, driven through the channel protocol as the batch core drives them.

The protocol checks every channel passes (``test_channels.py``) run here against transport ``"ray"``
(:class:`RayCallChannel`) and transport ``"shm"`` (the pipe channel with :class:`RayActorsOnNode`), marked slow
(each starts actors; the conformance suite covers both transports by default); the test at the
end covers what is particular to Ray calls: a stopped worker is started again on the actor Ray restarts, and an
actor Ray does not bring back fails its startup. The managers built on these channels are tested in
``test_ray_manager.py`` and ``test_ray_faults.py``.
"""

from __future__ import annotations

import os
import pickle
import re
import signal
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ding.envs.env_manager.channels.pipe import PipeChannel
from ding.envs.env_manager.channels.ray.actor_pipe import RayActorsOnNode
from ding.envs.env_manager.channels.ray.call_channel import RayCallChannel
from ding.envs.env_manager.channels.ray.cluster import Connection
from ding.envs.env_manager.core.channel import Channel
from ding.envs.env_manager.core.commands import Command, CommandKind
from ding.envs.env_manager.core.failure import Failure, FailureKind
from tests.envs.env_manager.envs import pid_alive
from tests.envs.env_manager.test_channels import (  # noqa: F401 (the protocol checks, run against the Ray channels)
    ask,
    setup_of,
    start_all,
    test_a_failing_constructor_is_the_startup_failure,
    test_a_killed_worker_is_a_died_failure_and_a_restart_serves_again,
    test_a_silent_worker_is_a_timeout_failure,
    test_answers_come_back_in_order_per_worker,
    test_close_stops_every_worker,
    test_poll_reports_answered_workers_and_times_out_on_silent_ones,
    test_the_first_answer_is_the_built_envs_spaces,
)

pytest.importorskip("ray")
pytestmark = pytest.mark.usefixtures("ray_cluster")


def actor_cfg(max_restarts: int = -1) -> dict[str, Any]:
    return {"resources_per_worker": {}, "num_cpus_per_worker": None, "max_restarts": max_restarts}


CHANNELS: dict[str, Callable[[], Channel]] = {
    "ray-call": lambda: RayCallChannel(Connection(None, {}), actor_cfg()),
    "ray-shm": lambda: PipeChannel(RayActorsOnNode(Connection(None, {}), actor_cfg(), 30.0)),
}


@pytest.fixture(params=[pytest.param(name, marks=pytest.mark.slow) for name in sorted(CHANNELS)])
def channel(request: pytest.FixtureRequest) -> Iterator[Channel]:
    made = CHANNELS[request.param]()
    made.open(2)
    yield made
    made.close()


@pytest.mark.parametrize("max_restarts", [-1, 0])
def test_a_stopped_call_worker_starts_again_on_the_actor_ray_restarts(max_restarts: int) -> None:
    channel = RayCallChannel(Connection(None, {}), actor_cfg(max_restarts))
    channel.open(2)
    try:
        start_all(channel)
        victim, actor = channel.pids()[1], channel.actors[1].actor  # type: ignore[union-attr]
        assert victim is not None
        os.kill(victim, signal.SIGKILL)
        assert channel.send(1, pickle.dumps(Command(CommandKind.DECLARED))) is None
        failure = channel.receive([1], 30.0)[1]
        assert isinstance(failure, Failure) and failure.kind is FailureKind.DIED
        assert re.match(rf"actor 1 \(pid {victim}, envs \[2, 3\]\) died", failure.message)
        channel.stop(1)
        channel.start(setup_of(1))
        startup = channel.receive([1], 30.0)[1]
        if max_restarts == 0:
            assert isinstance(startup, Failure) and startup.kind is FailureKind.DIED
            assert startup.message.endswith("; Ray did not bring the actor back (max_restarts=0)")
        else:  # the same actor, restarted by Ray: its startup was retried until it was back
            assert isinstance(pickle.loads(startup), dict)  # type: ignore[arg-type]
            assert channel.actors[1].actor is actor and channel.pids()[1] not in (None, victim)  # type: ignore
            assert ask(channel, 1, Command(CommandKind.DECLARED)) == {2: True, 3: True}
        assert ask(channel, 0, Command(CommandKind.DECLARED)) == {0: True, 1: True}  # the other actor served on
    finally:
        pids = channel.pids()
        channel.close()
    assert channel.pids() == [None, None] and not any(pid_alive(pid) for pid in pids)
