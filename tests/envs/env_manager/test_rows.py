"""The row codec: step rows as raw bytes between a manager's private buffers and a worker's env group."""

from __future__ import annotations

import pickle

import cloudpickle
import numpy as np
import pytest

from ding.envs.env_manager.channels.zmq.worker import build_group, handle_request
from ding.envs.env_manager.core.commands import Command, CommandKind
from ding.envs.env_manager.core.rows import (
    RAW_REPLY,
    MalformedMessage,
    pack_reply,
    pack_request,
    unpack_reply,
    unpack_request,
)
from ding.envs.env_manager.core.sequence import ok_reply
from ding.envs.env_manager.core.shm import CONTROL_RESET_ON_DONE, CONTROL_STEP, BufferLayout, SharedBuffers
from ding.envs.env_manager.core.worker import StepReply, Worker
from tests.envs.env_manager.envs import DictObsEnv


def private_buffers(env_num: int = 4) -> SharedBuffers:
    return SharedBuffers(BufferLayout.plan(DictObsEnv.spaces_from_config({}), env_num, shared=False), create=True)


def test_request_and_reply_rows_round_trip_into_the_other_sides_arrays() -> None:
    sender, receiver = private_buffers(), private_buffers()
    rows = slice(2, 4)
    sender.control[rows] = [[1, 0], [1, 1]]
    assert sender.action is not None
    sender.action[rows] = [2, 1]
    unpack_request(pack_request(sender, rows, 1), receiver, rows)
    assert receiver.control.tolist() == [[0, 0], [0, 0], [1, 0], [1, 1]]
    assert receiver.action is not None and receiver.action.tolist() == [0, 0, 2, 1]
    for i, array in enumerate([*sender.ready, *sender.final, sender.reward, sender.flags]):
        array[rows] = np.arange(array[rows].size).reshape(array[rows].shape) % 2 + i
    head = pickle.dumps(StepReply(infos={3: {"x": 1}}))
    assert unpack_reply(pack_reply(head, sender, rows), receiver, rows) == head
    for got, sent in zip(receiver.ready + receiver.final, sender.ready + sender.final, strict=True):
        assert np.array_equal(got[rows], sent[rows]) and not got[:2].any()
    assert np.array_equal(receiver.reward, sender.reward) and np.array_equal(receiver.flags, sender.flags)


@pytest.mark.parametrize("cut", [1, 5])
def test_rows_of_the_wrong_length_are_rejected(cut: int) -> None:
    buffers = private_buffers()
    request = pack_request(buffers, slice(0, 2), 1)
    with pytest.raises(MalformedMessage, match=r"expected \d+ bytes of step rows"):
        unpack_request(request[:-cut], private_buffers(), slice(0, 2))
    with pytest.raises(MalformedMessage, match=r"expected \d+ bytes of step rows"):
        unpack_request(request + b"x", private_buffers(), slice(0, 2))
    reply = pack_reply(b"k", buffers, slice(0, 2))
    with pytest.raises(MalformedMessage, match=r"expected \d+ bytes of step rows"):
        unpack_reply(reply[:-cut], private_buffers(), slice(0, 2))
    with pytest.raises(MalformedMessage, match="head of 99999 bytes exceeds"):
        unpack_reply(RAW_REPLY + (99999).to_bytes(4, "big") + b"k", buffers, slice(0, 2))
    with pytest.raises(MalformedMessage, match="shorter than its 5-byte header"):
        unpack_reply(RAW_REPLY + b"\0", buffers, slice(0, 2))


def test_a_group_with_private_buffers_steps_and_resets_with_raw_rows() -> None:
    manager_side = private_buffers()
    payload = pickle.dumps(([2, 3], cloudpickle.dumps([DictObsEnv, DictObsEnv]), manager_side.layout))
    group, startup = build_group(payload)
    assert isinstance(group, Worker) and group.rows_in_reply and isinstance(pickle.loads(startup), dict)
    try:
        rows = slice(2, 4)
        reply = handle_request(group, pickle.dumps(Command(CommandKind.RESET, {2: {}, 3: {}})))
        assert reply[:1] == RAW_REPLY
        assert unpack_reply(reply, manager_side, rows)[:1] == b"\x80"  # the pickled StepReply of the reset
        assert manager_side.ready[0][rows].any()  # the reset observations came with it
        manager_side.control[rows, CONTROL_STEP] = 1
        manager_side.control[rows, CONTROL_RESET_ON_DONE] = 1
        assert manager_side.action is not None
        manager_side.action[rows] = [1, 2]
        before = [array[rows].copy() for array in manager_side.ready]
        reply = handle_request(group, pack_request(manager_side, rows, 5))
        head = unpack_reply(reply, manager_side, rows)
        result = StepReply(seq=5) if head == ok_reply(5) else pickle.loads(head)
        assert result.seq == 5  # the reply answers the step it was sent
        assert not result.failures and not hasattr(result, "rows")  # rows travel raw, never pickled
        assert any(not np.array_equal(a[rows], b) for a, b in zip(manager_side.ready, before, strict=True))
        assert manager_side.reward[rows].tolist() == group.buffers.reward[rows].tolist()  # type: ignore[union-attr]
        assert not group.buffers.layout.shared  # type: ignore[union-attr]
    finally:
        group.close()


def test_the_pipe_channel_sends_private_rows_raw_and_steps_with_them() -> None:
    from ding.envs.env_manager.core.batch_core import core_of
    from ding.envs.env_manager.core.rows import RAW_STEP
    from ding.envs.env_manager.subprocess_manager import SyncSubprocessEnvManager

    fns = [DictObsEnv] * 4
    with SyncSubprocessEnvManager(fns, {"envs_per_worker": 2, "shared_memory": False}) as manager:
        manager.seed(3)
        manager.launch()
        assert core_of(manager.engine).step_message(1, 1)[:1] == RAW_STEP
        batch = manager.step_batch(np.ones(4, dtype=np.int64))
        assert batch.env_ids.tolist() == [0, 1, 2, 3] and np.asarray(batch.reward).shape[0] == 4
        assert not np.array_equal(batch.obs["image"][0], np.zeros_like(batch.obs["image"][0]))


def test_a_worker_refuses_a_step_message_it_cannot_read() -> None:
    worker = Worker([0], [DictObsEnv])
    with pytest.raises(ValueError, match="not a step message for this worker"):
        worker.answer_step(b"Rxyz")
