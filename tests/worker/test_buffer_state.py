"""Replay buffers saved in real checkpoint files (``torch.load(weights_only=True)``) and restored exactly."""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np
import pytest
import torch

from ding.policy.nstep import NStepRule
from ding.utils.checkpoint_files import CheckpointError
from ding.worker import NaiveReplayBuffer
from ding.worker.buffer_state import ARRAY_KEY, decode, decode_samples, encode, encode_samples
from ding.worker.checkpoint import save_checkpoint
from ding.worker.frame_buffer import FrameStackReplayBuffer
from ding.worker.learner import load_replay_buffer
from tests.worker.test_frame_buffer import Episodes, space


def through_file(value: Any, tmp_path: pathlib.Path) -> Any:
    """``value`` written by the learner's checkpoint writer and read back as checkpoints are read."""
    path = save_checkpoint({"value": value}, tmp_path / "state.pth.tar")
    return torch.load(path, map_location="cpu", weights_only=True)["value"]


def assert_identical(left: Any, right: Any) -> None:
    assert type(left) is type(right), (left, right)
    if isinstance(left, np.ndarray | np.generic):
        assert left.dtype == right.dtype and np.shape(left) == np.shape(right)
        assert np.asarray(left).tobytes() == np.asarray(right).tobytes()
    elif isinstance(left, dict):
        assert list(left) == list(right)
        for key in left:
            assert_identical(left[key], right[key])
    elif isinstance(left, list | tuple):
        assert len(left) == len(right)
        for a, b in zip(left, right, strict=True):
            assert_identical(a, b)
    else:
        assert left == right


VALUES = [
    np.arange(12, dtype=np.uint8).reshape(3, 4),
    np.arange(6, dtype=np.float16).reshape(2, 3).T,  # not C-contiguous
    np.array(3.5, np.float64),  # 0-d
    np.array([True, False]),
    np.array([-1, 2**40], np.int64),
    np.array([1, 2], np.uint16),
    np.float32(0.25),
    np.int64(-7),
    np.bool_(True),
    {"nested": [np.zeros((2, 1), np.float32), (1, "a", None, 2.5, 2**80)]},
]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__ + str(getattr(v, "dtype", "")))
def test_values_come_back_with_their_dtype_shape_and_bytes(value: Any, tmp_path: pathlib.Path) -> None:
    assert_identical(decode(through_file(encode(value), tmp_path)), value)


def test_read_only_arrays_are_stored_and_encoding_refuses_what_it_cannot_store(tmp_path: pathlib.Path) -> None:
    frozen = np.arange(4, dtype=np.int32)
    frozen.setflags(write=False)
    assert_identical(decode(through_file(encode(frozen), tmp_path)), frozen)
    with pytest.raises(TypeError, match=r"cannot store an object array in a checkpoint \(dtype object"):
        encode(np.array([{}, None], dtype=object))
    with pytest.raises(TypeError, match=r"cannot store a set in a checkpoint"):
        encode({1, 2})
    with pytest.raises(ValueError, match=rf"reserved key '{ARRAY_KEY}'"):
        encode({ARRAY_KEY: 1})


def test_samples_are_stored_column_by_column(tmp_path: pathlib.Path) -> None:
    rng = np.random.default_rng(0)
    samples = [
        {
            "obs": rng.random(4, dtype=np.float32),
            "action": np.int64(i % 2),
            "reward": float(rng.normal()),
            "next_obs": rng.random(4, dtype=np.float32),
            "done": i % 3 == 0,
            "discount": 0.97,
            "step": i,
            "mixed": [1, 2.0, "x"][i % 3],  # not one type: stored item by item
        }
        for i in range(30)
    ]
    state = through_file(encode_samples(samples), tmp_path)
    tensors = [column for column in state["columns"].values() if column["kind"] != "items"]
    assert len(tensors) == 7  # one stacked tensor per column but "mixed"
    assert_identical(decode_samples(state), samples)
    ragged = [{"obs": np.zeros(2)}, {"obs": np.zeros(3)}, {"other": 1}]
    assert_identical(decode_samples(through_file(encode_samples(ragged), tmp_path)), ragged)
    assert decode_samples(encode_samples([])) == []


def test_naive_buffer_resumes_its_contents_and_sampling(tmp_path: pathlib.Path) -> None:
    buffer = NaiveReplayBuffer(50, seed=3)
    buffer.push([{"obs": np.full(2, i, np.float32), "reward": float(i), "done": False} for i in range(70)])
    buffer.sample(8)  # the generator moved on: the restored one continues from here
    restored = NaiveReplayBuffer(50, seed=99)
    restored.load_state_dict(through_file(buffer.state_dict(), tmp_path))
    assert (len(restored), restored.pushed_count) == (50, 70)
    for _ in range(3):
        assert_identical(restored.sample(16), buffer.sample(16))
    restored.push({"obs": np.full(2, 70, np.float32), "reward": 70.0, "done": True})
    buffer.push({"obs": np.full(2, 70, np.float32), "reward": 70.0, "done": True})
    assert_identical(restored.sample(50), buffer.sample(50))  # the same sample was evicted
    smaller = NaiveReplayBuffer(10, seed=0)
    smaller.load_state_dict(buffer.state_dict())
    assert sorted(sample["reward"] for sample in smaller.sample(10)) == [float(i) for i in range(61, 71)]


def test_frame_buffer_resumes_its_ring_and_sampling(tmp_path: pathlib.Path) -> None:
    rule = NStepRule(nstep=2, gamma=0.9)
    episodes = Episodes()
    buffer = FrameStackReplayBuffer(40, space(), rule, seed=1)
    for i in range(60):  # wraps around the ring; two envs, episodes of various lengths
        buffer.push(episodes.step(env_id=i % 2, reward=float(i), done=i % 7 == 6))
    restored = FrameStackReplayBuffer(40, space(), rule, seed=5)
    restored.load_state_dict(through_file(buffer.state_dict(), tmp_path))
    assert (len(restored), restored.pushed_count, restored.sample_count) == (
        len(buffer),
        buffer.pushed_count,
        buffer.sample_count,
    )
    assert restored.ready_transitions().tolist() == buffer.ready_transitions().tolist()
    numbers = buffer.ready_transitions()
    assert_identical(dict(restored.gather(numbers)), dict(buffer.gather(numbers)))
    assert_identical(restored.sample_batch(8), buffer.sample_batch(8))
    # the resumed run's envs start new episodes: pushes go on into the restored ring
    fresh = Episodes()
    fresh.next_frame = 200
    for i in range(20):
        restored.push(fresh.step(env_id=i % 2, reward=1.0, done=i % 5 == 4))
    assert restored.pushed_count == 80 and restored.sample(8) is not None


def test_restoring_into_another_buffer_is_refused(tmp_path: pathlib.Path) -> None:
    rule = NStepRule(nstep=1, gamma=0.9)
    frames = FrameStackReplayBuffer(8, space(), rule)
    naive = NaiveReplayBuffer(8)
    with pytest.raises(
        ValueError, match=r"holds a 'naive' replay buffer state, but this run's buffer is 'frame_stack'"
    ):
        frames.load_state_dict(naive.state_dict())
    with pytest.raises(
        ValueError, match=r"\(capacity, stack shape, frame dtype\) \(8, \(3, 2, 2\), 'uint8'\), nstep 1"
    ):
        FrameStackReplayBuffer(16, space(), rule).load_state_dict(frames.state_dict())
    state = {"model": {}, "replay_buffer": frames.state_dict()}
    with pytest.raises(CheckpointError, match=r"checkpoint run\.pth\.tar: its replay buffer cannot be restored: "):
        load_replay_buffer(naive, state, "run.pth.tar")
    assert load_replay_buffer(naive, {"model": {}}, "run.pth.tar") is None
    assert load_replay_buffer(frames, state, "run.pth.tar") == 0
