"""NaiveReplayBuffer: FIFO eviction, uniform distinct batches, seeded sampling, bad arguments."""

from __future__ import annotations

import collections

import pytest

from ding.errors import ConfigError
from ding.worker import NaiveReplayBuffer


def test_keeps_the_latest_samples_up_to_its_size() -> None:
    buffer = NaiveReplayBuffer(4, seed=0)
    buffer.push({"x": 0})
    buffer.push([{"x": i} for i in range(1, 7)])
    assert len(buffer) == 4 and buffer.pushed_count == 7 and buffer.capacity == 4
    assert sorted(s["x"] for s in buffer.sample(4)) == [3, 4, 5, 6]


def test_sample_waits_for_a_full_batch_and_draws_distinct_samples() -> None:
    buffer = NaiveReplayBuffer(100, seed=0)
    buffer.push([{"x": i} for i in range(9)])
    assert buffer.sample(10) is None
    buffer.push({"x": 9})
    batch = buffer.sample(10)
    assert batch is not None and sorted(s["x"] for s in batch) == list(range(10))


def test_sampling_is_uniform_and_seeded() -> None:
    def draws(seed: int) -> list[int]:
        buffer = NaiveReplayBuffer(10, seed=seed)
        buffer.push([{"x": i} for i in range(10)])
        out = []
        for _ in range(2000):
            batch = buffer.sample(2)
            assert batch is not None
            out += [s["x"] for s in batch]
        return out

    first = draws(1)
    assert first == draws(1) and first != draws(2)
    counts = collections.Counter(first)
    assert set(counts) == set(range(10)) and all(300 < n < 500 for n in counts.values())


def test_clear() -> None:
    buffer = NaiveReplayBuffer(3)
    buffer.push([{"x": 1}, {"x": 2}])
    buffer.clear()
    assert len(buffer) == 0 and buffer.sample(1) is None


def test_bad_arguments() -> None:
    with pytest.raises(ConfigError, match=r"replay_buffer_size must be an int >= 1, got 0"):
        NaiveReplayBuffer(0)
    buffer = NaiveReplayBuffer(3)
    with pytest.raises(ValueError, match=r"sample size must be an int >= 1, got 0"):
        buffer.sample(0)
    with pytest.raises(ValueError, match=r"sample size 4 exceeds the buffer's capacity 3"):
        buffer.sample(4)
