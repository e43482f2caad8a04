"""Worker commands are one closed enum: unknown ones fail by name, and every kind has its handler."""

from __future__ import annotations

import pickle

import cloudpickle
import pytest

from ding.envs.env_manager.core.commands import Command, CommandKind
from ding.envs.env_manager.core.failure import Failure
from ding.envs.env_manager.core.shm import BufferLayout, SharedBuffers
from ding.envs.env_manager.core.worker import Worker
from ding.errors import UnknownNameError
from tests.envs.env_manager.envs import DictObsEnv


def test_an_unknown_command_names_itself_and_the_known_ones() -> None:
    with pytest.raises(UnknownNameError, match=r"unknown worker command 'resett'; known: actions, .*reset.*'reset'\?"):
        CommandKind.of("resett")
    with pytest.raises(UnknownNameError, match="unknown worker command 'bogus'"):
        Command("bogus")  # type: ignore[arg-type]
    assert Command("reset", {0: {}}) == Command(CommandKind.RESET, {0: {}})  # type: ignore[arg-type]
    assert pickle.loads(pickle.dumps(Command(CommandKind.CALL, 1))).kind is CommandKind.CALL


def test_every_kind_but_close_has_a_handler_and_close_is_the_loops_own() -> None:
    buffers = SharedBuffers(BufferLayout.plan(DictObsEnv.spaces_from_config({}), 2, shared=False), create=True)
    worker = Worker([0, 1], cloudpickle.loads(cloudpickle.dumps([DictObsEnv, DictObsEnv])))
    try:
        for env_id in (0, 1):
            worker.build(env_id)
        worker.handle(Command(CommandKind.ATTACH, buffers.layout))
        assert set(worker.handle(Command(CommandKind.SPACES))) == {0, 1}
        assert worker.handle(Command(CommandKind.DECLARED)) == {0: True, 1: True}
        reply = worker.handle(Command(CommandKind.RESET, {1: {}}))
        assert not reply.failures and buffers.flags[1].tolist() == [0, 0, 0, 0]
        assert worker.handle(Command(CommandKind.CALL, ("scaled", (1.5,), {"factor": 4.0}, [1]))) == {1: 6.0}
        renewed = worker.handle(Command(CommandKind.RENEW, [0]))
        assert renewed.failures == {} and isinstance(worker.envs[0], DictObsEnv)
        with pytest.raises(UnknownNameError, match="does not handle command 'close' here; it handles: attach, "):
            worker.handle(Command(CommandKind.CLOSE))
        missing = [kind for kind in CommandKind if kind is not CommandKind.CLOSE and kind not in Worker._handlers]
        assert missing == []
        assert all(callable(getattr(worker, name)) for name in Worker._handlers.values())
    finally:
        worker.close()
        buffers.close()


def test_a_failing_command_travels_as_a_failure_named_by_its_kind() -> None:
    failure = Failure.capture(0, Command(CommandKind.SEED).name, RuntimeError("boom"))
    assert failure.operation == "seed" and "RuntimeError: boom" in failure.traceback_text
