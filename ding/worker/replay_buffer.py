"""``NaiveReplayBuffer``: a fixed-size FIFO of samples with uniform, seeded sampling."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ding.errors import ConfigError


class NaiveReplayBuffer:
    """Keeps the latest ``replay_buffer_size`` samples; ``sample`` draws a batch uniformly.

    A batch holds distinct stored samples (drawn without replacement). While fewer than the batch
    size are stored, ``sample`` returns None, so training waits for enough data. Sampling uses its
    own generator seeded by ``seed``, so a run is reproducible.

    Example:
        >>> buffer = NaiveReplayBuffer(3, seed=0)
        >>> buffer.push([{'x': i} for i in range(5)])
        >>> len(buffer), buffer.pushed_count, sorted(s['x'] for s in buffer.sample(3))
        (3, 5, [2, 3, 4])
        >>> NaiveReplayBuffer(10).sample(1) is None
        True
    """

    def __init__(self, replay_buffer_size: int, seed: int | None = 0) -> None:
        if not isinstance(replay_buffer_size, int) or isinstance(replay_buffer_size, bool) or replay_buffer_size < 1:
            raise ConfigError(
                f"policy.other.replay_buffer.replay_buffer_size must be an int >= 1, got {replay_buffer_size!r}"
            )
        self._capacity = replay_buffer_size
        self._data: list[Any] = []
        self._head = 0  # where the next sample goes once the buffer is full
        self._pushed = 0
        self._rng = np.random.default_rng(seed)

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def pushed_count(self) -> int:
        """Samples pushed since creation (evicted ones included)."""
        return self._pushed

    def __len__(self) -> int:
        return len(self._data)

    def push(self, data: Mapping[str, Any] | Iterable[Any]) -> None:
        """Store one sample (a dict) or each sample of a list; the oldest are evicted when full."""
        items = [data] if isinstance(data, Mapping) else list(data)
        for item in items:
            if len(self._data) < self._capacity:
                self._data.append(item)
            else:
                self._data[self._head] = item
                self._head = (self._head + 1) % self._capacity
            self._pushed += 1

    def sample(self, size: int) -> list[Any] | None:
        """``size`` distinct stored samples drawn uniformly, or None while fewer are stored."""
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise ValueError(f"sample size must be an int >= 1, got {size!r}")
        if size > self._capacity:
            raise ValueError(f"sample size {size} exceeds the buffer's capacity {self._capacity}")
        if len(self._data) < size:
            return None
        indices = self._rng.choice(len(self._data), size=size, replace=False)
        return [self._data[i] for i in indices]

    def clear(self) -> None:
        self._data.clear()
        self._head = 0
