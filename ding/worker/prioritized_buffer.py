"""Prioritized replay (DI-engine's ``policy.priority``): the naive and the frame-sharing buffers with priorities.

Both draw as :mod:`ding.worker.priority` describes and add DI-engine's keys to each drawn sample:
``replay_buffer_idx`` (the slot), ``replay_unique_id`` (the push number) and ``IS`` (the importance-sampling
weight). :meth:`update` takes the learner's new priorities for a drawn batch, as DI-engine's
``AdvancedReplayBuffer.update`` does (a sample evicted since it was drawn is skipped); :func:`prioritized_learn_mode`
makes a policy's learn mode hand them over after each update.

Example:
    >>> buffer = PrioritizedReplayBuffer(4, PriorityRule(alpha=1.0, beta=1.0, anneal_step=0), seed=0)
    >>> buffer.push([{'x': i} for i in range(4)])
    >>> batch = buffer.sample(2)
    >>> sorted(batch[0]), batch[0]['IS']
    (['IS', 'replay_buffer_idx', 'replay_unique_id', 'x'], 1.0)
    >>> buffer.update({'replay_buffer_idx': [0], 'replay_unique_id': [0], 'priority': [9.0]})
    >>> round(buffer.priorities([0, 1]).tolist()[0], 5), buffer.priorities([0, 1]).tolist()[1]
    (9.00001, 1.0)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.values.spaces import EnvSpaces
from ding.policy.base import LearnMode
from ding.policy.nstep import NStepRule
from ding.worker.buffer_state import array_to_tensor
from ding.worker.frame_buffer import FrameStackReplayBuffer, unbatch
from ding.worker.interrupt import critical_section
from ding.worker.naive_replay import NaiveReplayBuffer, check_sample_size, check_state_kind
from ding.worker.priority import (
    REPLAY_ID,
    REPLAY_INDEX,
    Priorities,
    PriorityRule,
    batch_ids,
    drawn_keys,
)

PRIORITY_KEY = "priority"
"""The learner's statistic that holds a batch's new priorities, one per sample (DI-engine's)."""


class _PriorityUpdates:
    """:meth:`update` and :meth:`priorities` of both prioritized buffers, over their slots' push numbers."""

    _priorities: Priorities

    def _slot_numbers(self, indices: np.ndarray) -> np.ndarray:
        """The push numbers of the drawable samples in slots ``indices`` (-1 for a slot holding none)."""
        raise NotImplementedError

    def priorities(self, indices: Sequence[int] | np.ndarray) -> np.ndarray:
        """The priorities of slots ``indices`` (0 for a slot that cannot be drawn)."""
        return self._priorities.priority(np.asarray(indices, np.int64))

    def update(self, info: Mapping[str, Any]) -> None:
        """New priorities: ``info`` holds ``replay_buffer_idx``, ``replay_unique_id`` and ``priority`` lists (one
        entry per drawn sample, DI-engine's form); a sample no longer stored (evicted since it was drawn) is skipped."""
        if PRIORITY_KEY not in info:
            return
        indices = np.asarray(info[REPLAY_INDEX], np.int64).reshape(-1)
        numbers = np.asarray(info[REPLAY_ID], np.int64).reshape(-1)
        values = np.asarray(info[PRIORITY_KEY], np.float64).reshape(-1)
        if not len(indices) == len(numbers) == len(values):
            raise ValueError(
                f"a priority update needs one slot, id and priority per sample, got {len(indices)}, {len(numbers)} "
                f"and {len(values)}"
            )
        with critical_section():
            stored = self._slot_numbers(indices) == numbers
            self._priorities.update(indices[stored], values[stored])


class PrioritizedReplayBuffer(_PriorityUpdates, NaiveReplayBuffer):
    """:class:`~ding.worker.naive_replay.NaiveReplayBuffer` whose batches are drawn by priority (see the module
    docstring)."""

    def __init__(self, replay_buffer_size: int, rule: PriorityRule, seed: int | None = 0) -> None:
        super().__init__(replay_buffer_size, seed=seed)
        self._rule = rule
        self._priorities = Priorities(replay_buffer_size, rule)
        self._numbers = np.full(replay_buffer_size, -1, np.int64)

    @classmethod
    def transition_nbytes(cls, env_spaces: EnvSpaces) -> int:
        """A naive buffer's bytes per sample, plus its priority, trees and push number."""
        return super().transition_nbytes(env_spaces) + Priorities.slot_nbytes() + 8

    def push(self, data: Mapping[str, Any] | Iterable[Any]) -> None:
        items = [data] if isinstance(data, Mapping) else list(data)
        with critical_section():
            slots = []
            for item in items:
                slots.append(len(self._data) if len(self._data) < self._capacity else self._head)
                self._numbers[slots[-1]] = self._pushed
                super().push(item)
            self._priorities.add(np.array(slots, np.int64))

    def _slot_numbers(self, indices: np.ndarray) -> np.ndarray:
        return self._numbers[indices]

    def sample(self, size: int) -> list[dict[str, Any]] | None:
        """``size`` samples drawn by priority (repeats possible), each with the drawn keys; None while fewer than
        ``size`` are stored."""
        check_sample_size(size, self._capacity)
        if len(self._data) < size:
            return None
        indices = self._priorities.draw(size, self._rng)
        weights = self._priorities.weights(indices)
        self._priorities.anneal()
        keys = drawn_keys(indices, self._numbers[indices], weights)
        return [{**self._data[index], **extra} for index, extra in zip(indices.tolist(), keys, strict=True)]

    def clear(self) -> None:
        super().clear()
        self._priorities.clear()
        self._numbers.fill(-1)

    def state_dict(self) -> dict[str, Any]:
        """:class:`~ding.worker.naive_replay.NaiveReplayBuffer`'s state, with the priorities and push numbers."""
        state = super().state_dict()
        priorities = self._priorities.state_dict()
        return {
            **state,
            "kind": PRIORITIZED_STATE,
            "numbers": array_to_tensor(self._numbers),
            **{key: array_to_tensor(v) if isinstance(v, np.ndarray) else v for key, v in priorities.items()},
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore :meth:`state_dict`'s state into a buffer of the same capacity."""
        check_state_kind(state, PRIORITIZED_STATE)
        if int(state["capacity"]) != self._capacity:
            raise ValueError(
                f"the checkpoint's prioritized replay buffer holds {state['capacity']} slots, this run's "
                f"{self._capacity} (policy.other.replay_buffer.replay_buffer_size)"
            )
        super().load_state_dict({**state, "kind": "naive"})
        self._numbers = state["numbers"].numpy().copy()
        priorities = {**state, "priority": state["priority"].numpy()}
        self._priorities.load_state_dict(priorities, np.arange(len(self._data)))


PRIORITIZED_STATE = "prioritized"
PRIORITIZED_FRAME_STACK_STATE = "prioritized_frame_stack"


class PrioritizedFrameStackReplayBuffer(_PriorityUpdates, FrameStackReplayBuffer):
    """:class:`~ding.worker.frame_buffer.FrameStackReplayBuffer` whose batches are drawn by priority: a transition
    gets the highest priority seen when its n-step window completes (it becomes drawable) and loses it when a frame
    it uses is evicted."""

    def __init__(
        self,
        replay_buffer_size: int,
        observation_space: spaces.Space[Any],
        nstep_rule: NStepRule,
        rule: PriorityRule,
        seed: int | None = 0,
    ) -> None:
        self._priorities = Priorities(replay_buffer_size, rule)
        super().__init__(replay_buffer_size, observation_space, nstep_rule, seed=seed)

    @classmethod
    def transition_nbytes(cls, env_spaces: EnvSpaces) -> int:
        """The frame-sharing buffer's bytes per slot, plus its priority and trees."""
        return super().transition_nbytes(env_spaces) + Priorities.slot_nbytes()

    def clear(self) -> None:
        super().clear()
        self._priorities.clear()

    def _on_ready(self, index: int) -> None:
        self._priorities.add(np.array([index], np.int64))

    def _on_unready(self, index: int) -> None:
        self._priorities.remove(np.array([index], np.int64))

    def _slot_numbers(self, indices: np.ndarray) -> np.ndarray:
        numbers = self._arrays["number"][indices].copy()
        numbers[self._arrays["ready_pos"][indices] < 0] = -1
        return numbers

    def sample_batch(self, size: int) -> dict[str, np.ndarray] | None:
        """``size`` samples drawn by priority (repeats possible) as arrays, with the drawn keys as arrays too."""
        check_sample_size(size, self._capacity)
        if self._ready_count < size:
            return None
        indices = self._priorities.draw(size, self._rng)
        weights = self._priorities.weights(indices)
        self._priorities.anneal()
        batch = self._rebuild(indices)
        keys = drawn_keys(indices, self._arrays["number"][indices], weights)
        return {**batch, **{key: np.array([row[key] for row in keys]) for key in keys[0]}}

    def sample(self, size: int) -> list[dict[str, Any]] | None:
        batch = self.sample_batch(size)
        if batch is None:
            return None
        samples = unbatch(batch)
        extra = [key for key in batch if key not in samples[0]]
        for row, sample in enumerate(samples):
            sample.update({key: batch[key][row].item() for key in extra})
        return samples

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        priorities = self._priorities.state_dict()
        return {
            **state,
            "kind": PRIORITIZED_FRAME_STACK_STATE,
            **{key: array_to_tensor(v) if isinstance(v, np.ndarray) else v for key, v in priorities.items()},
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        check_state_kind(state, PRIORITIZED_FRAME_STACK_STATE)
        super().load_state_dict({**state, "kind": "frame_stack"})
        drawable = self._arrays["ready_list"][: self._ready_count]
        self._priorities.load_state_dict({**state, "priority": state["priority"].numpy()}, drawable)


@dataclasses.dataclass(frozen=True)
class _PriorityHandover:
    """A learn mode's forward that passes the batch's new priorities (the statistic ``priority``) to the buffer."""

    forward: Any
    buffer: _PriorityUpdates

    def __call__(self, batch: list[dict[str, Any]]) -> dict[str, float]:
        stats = dict(self.forward(batch))
        if PRIORITY_KEY not in stats:
            raise ValueError(
                "the replay buffer is prioritized (policy.priority=True), but the policy's update returned no "
                f"'{PRIORITY_KEY}' statistic (one new priority per sample)"
            )
        indices, numbers = batch_ids(batch)
        self.buffer.update({REPLAY_INDEX: indices, REPLAY_ID: numbers, PRIORITY_KEY: stats.pop(PRIORITY_KEY)})
        return stats


def prioritized_learn_mode(mode: LearnMode, buffer: Any) -> LearnMode:
    """``mode`` whose forward hands each batch's new priorities to ``buffer`` (unchanged for another buffer)."""
    if not isinstance(buffer, _PriorityUpdates):
        return mode
    return dataclasses.replace(mode, forward=_PriorityHandover(mode.forward, buffer))
