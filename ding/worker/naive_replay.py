"""``NaiveReplayBuffer``: a fixed-size FIFO of samples with uniform, seeded sampling.

Every replay buffer can be saved in a checkpoint: ``state_dict()`` gives its contents, counters and sampling
generator as tensors and plain values (what ``torch.load(weights_only=True)`` reads back), and
``load_state_dict(state)`` restores them, so a resumed run samples from the same buffer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import numpy as np

from ding.envs.values.spaces import EnvSpaces, space_nbytes
from ding.errors import ConfigError
from ding.worker.buffer_state import decode_samples, encode_samples
from ding.worker.interrupt import critical_section

SAMPLE_OVERHEAD_NBYTES = 512
"""Bytes a stored sample costs besides its observation data: the dict, two ndarray headers, the Python scalars
(measured with ``tracemalloc``: about 475 bytes per n-step DQN sample of CartPole on CPython 3.11)."""


class ReplayBuffer(Protocol):
    """What the serial pipeline asks of a replay buffer."""

    @property
    def capacity(self) -> int:
        """The most transitions (samples) it keeps."""

    @property
    def pushed_count(self) -> int:
        """Items pushed since creation (evicted ones included)."""

    def __len__(self) -> int:
        """Items stored now."""

    def push(self, data: Any) -> None:
        """Store what the collector returned (one item or a list)."""

    def sample(self, size: int) -> list[dict[str, Any]] | None:
        """``size`` distinct samples drawn uniformly, or None while fewer can be drawn."""

    def clear(self) -> None:
        """Forget everything stored."""

    def state_dict(self) -> dict[str, Any]:
        """Contents, counters and sampling generator, as checkpoint state."""

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`state_dict` gave (``ValueError`` for a state of another kind of buffer)."""


def check_capacity(replay_buffer_size: Any, low: int = 1) -> None:
    """Raise :class:`ConfigError` unless ``replay_buffer_size`` is an int ``>= low``."""
    if not isinstance(replay_buffer_size, int) or isinstance(replay_buffer_size, bool) or replay_buffer_size < low:
        raise ConfigError(
            f"policy.other.replay_buffer.replay_buffer_size must be an int >= {low}, got {replay_buffer_size!r}"
        )


def check_sample_size(size: Any, capacity: int) -> None:
    """Raise ``ValueError`` unless ``size`` is an int from 1 to ``capacity``."""
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise ValueError(f"sample size must be an int >= 1, got {size!r}")
    if size > capacity:
        raise ValueError(f"sample size {size} exceeds the buffer's capacity {capacity}")


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
        check_capacity(replay_buffer_size)
        self._capacity = replay_buffer_size
        self._data: list[Any] = []
        self._head = 0  # where the next sample goes once the buffer is full
        self._pushed = 0
        self._rng = np.random.default_rng(seed)

    @classmethod
    def transition_nbytes(cls, env_spaces: EnvSpaces) -> int:
        """Bytes one stored sample takes for an env's spaces: its ``obs`` and ``next_obs``, action and overhead."""
        return 2 * space_nbytes(env_spaces.observation) + space_nbytes(env_spaces.action) + SAMPLE_OVERHEAD_NBYTES

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
        with critical_section():  # a stop signal waits: a checkpoint never holds half a push
            for item in items:
                if len(self._data) < self._capacity:
                    self._data.append(item)
                else:
                    self._data[self._head] = item
                    self._head = (self._head + 1) % self._capacity
                self._pushed += 1

    def sample(self, size: int) -> list[Any] | None:
        """``size`` distinct stored samples drawn uniformly, or None while fewer are stored."""
        check_sample_size(size, self._capacity)
        if len(self._data) < size:
            return None
        indices = self._rng.choice(len(self._data), size=size, replace=False)
        return [self._data[i] for i in indices]

    def clear(self) -> None:
        self._data.clear()
        self._head = 0

    def state_dict(self) -> dict[str, Any]:
        """The stored samples (column by column), the counters and the sampling generator's state.

        >>> buffer = NaiveReplayBuffer(2, seed=0)
        >>> buffer.push([{'x': np.float32(i)} for i in range(3)])
        >>> restored = NaiveReplayBuffer(2, seed=1)
        >>> restored.load_state_dict(buffer.state_dict())
        >>> len(restored), restored.pushed_count, restored.sample(2) == buffer.sample(2)
        (2, 3, True)
        """
        return {
            "kind": NAIVE_STATE,
            "capacity": self._capacity,
            "head": self._head,
            "pushed": self._pushed,
            "samples": encode_samples(self._data),
            "rng": self._rng.bit_generator.state,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore :meth:`state_dict`'s state; with another capacity the newest samples that fit are kept."""
        check_state_kind(state, NAIVE_STATE)
        data = decode_samples(state["samples"])
        head = int(state["head"])
        if int(state["capacity"]) != self._capacity:
            data = (data[head:] + data[:head])[-self._capacity :]  # oldest first, the newest that fit
            head = 0
        self._data = data
        self._head = head % self._capacity
        self._pushed = int(state["pushed"])
        self._rng.bit_generator.state = dict(state["rng"])


NAIVE_STATE = "naive"
SAVE_KEY = "save_in_checkpoint"


def save_in_checkpoint(policy_cfg: Mapping[str, Any]) -> bool:
    """``policy.other.replay_buffer.save_in_checkpoint``: whether resume checkpoints hold the replay buffer.

    >>> save_in_checkpoint({'other': {'replay_buffer': {'save_in_checkpoint': True}}}), save_in_checkpoint({})
    (True, False)
    """
    section = (policy_cfg.get("other") or {}).get("replay_buffer") or {}
    value = section.get(SAVE_KEY, False)
    if not isinstance(value, bool):
        raise ConfigError(f"policy.other.replay_buffer.{SAVE_KEY} must be True or False, got {value!r}")
    return value


def check_state_kind(state: Any, kind: str) -> None:
    """Raise ``ValueError`` unless ``state`` is a replay-buffer state of ``kind``."""
    found = state.get("kind") if isinstance(state, Mapping) else None
    if found != kind:
        raise ValueError(
            f"the checkpoint holds a {found!r} replay buffer state, but this run's buffer is {kind!r} "
            "(the replay buffer kind follows the env's spec and policy.other.replay_buffer.share_frames)"
        )
