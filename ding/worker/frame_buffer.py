"""``FrameStackReplayBuffer``: a replay buffer for frame-stack observations that stores each frame once.

Observations stacked by ``frame_stack`` (``(n, *frame)``, oldest first) repeat each frame ``n`` times over
consecutive steps, and a transition's ``obs`` and ``next_obs`` share ``n - 1`` of them. This buffer receives
each env's transitions in order (as :func:`~ding.worker.transitions.transition_collect_mode` gives them) and
keeps, in one ring of ``replay_buffer_size`` slots, one slot per transition (the frame it adds, its action,
reward and end flags, the ids of the ``n + 1`` frames its stacks are made of, and a link to the next
transition of its episode) plus one slot per episode for the frame its reset repeats. Sampling rebuilds
``obs`` and ``next_obs`` with one fancy index each, and the n-step fields with the policy's
:class:`~ding.policy.nstep.NStepRule`: the samples are bit for bit those :func:`~ding.policy.nstep.nstep_samples`
makes of the same transitions.

Eviction is FIFO by slot. A transition may be drawn once its n-step window is complete (``nstep`` transitions,
or fewer cut by its episode's end) and while every frame it refers to is stored; an episode the collector cut
(an abnormal step) leaves its last transitions without a window, so they are never drawn, as the collector
discards them. Pushed observations are checked to be frame stacks (the reset one filled with one frame, each
next one the previous shifted by one frame): anything else raises rather than being stored wrongly.

``state_dict`` / ``load_state_dict`` save and restore the ring, its counters and the sampling generator (as
checkpoint state: tensors and plain values). Episodes under way are not part of the state: a restored buffer
starts every env afresh, as the resumed run's envs do, and the last transitions of those episodes (whose n-step
windows never complete) are never drawn, as for an episode the collector cut.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.values.spaces import EnvSpaces
from ding.policy.nstep import NStepRule
from ding.worker.buffer_state import array_to_tensor
from ding.worker.interrupt import critical_section
from ding.worker.naive_replay import check_capacity, check_sample_size, check_state_kind
from ding.worker.transitions import ENV_ID, EPISODE_END, EPISODE_START

FieldLayout = dict[str, tuple[tuple[int, ...], np.dtype[Any]]]
SWITCH_OFF = "set policy.other.replay_buffer.share_frames=False to store whole observations"
FRAME_STACK_STATE = "frame_stack"
_COUNTERS = ("slots", "pushed", "stored", "ready_count")


def slot_layout(observation: spaces.Space[Any], action_shape: tuple[int, ...], action_dtype: Any) -> FieldLayout:
    """Shape (per slot) and dtype of every array of the buffer: what one slot costs, in one place.

    >>> layout = slot_layout(spaces.Box(0, 255, (4, 84, 84), np.uint8), (), np.int64)
    >>> layout['frame'], layout['stack'][0], sum(int(np.prod(s)) * d.itemsize for s, d in layout.values())
    (((84, 84), dtype('uint8')), (5,), 7146)
    """
    if not isinstance(observation, spaces.Box) or len(observation.shape) < 2:
        raise TypeError(
            f"the frame-sharing replay buffer needs a frame-stack observation, a Box of shape (n_frames, *frame); "
            f"got {observation}; {SWITCH_OFF}"
        )
    n_frames, frame = observation.shape[0], tuple(observation.shape[1:])
    i64 = np.dtype(np.int64)
    return {
        "frame": (frame, np.dtype(observation.dtype)),  # the frame this slot adds
        "stack": ((n_frames + 1,), i64),  # slot ids of obs's frames and the added one
        "succ": ((), i64),  # slot id of the episode's next transition (or of its first, from a reset slot)
        "number": ((), i64),  # the transition's push number; -1 for a reset slot
        "action": (action_shape, np.dtype(action_dtype)),
        "reward": ((), np.dtype(np.float64)),
        "done": ((), np.dtype(np.bool_)),
        "end": ((), np.dtype(np.bool_)),
        "ready_pos": ((), i64),  # where the slot sits in the list of drawable slots (-1: not drawable)
        "ready_list": ((), i64),
    }


def layout_nbytes(layout: FieldLayout) -> int:
    return sum(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize for shape, dtype in layout.values())


@dataclasses.dataclass
class _Episode:
    """One env's episode under way: the slot ids of its current stack, its last slot and its open windows."""

    stack: list[int]
    last: int
    next_obs: np.ndarray
    pending: collections.deque[int] = dataclasses.field(default_factory=collections.deque)


class FrameStackReplayBuffer:
    """Keeps the latest ``replay_buffer_size`` slots of frames; ``sample`` rebuilds n-step samples uniformly.

    ``observation_space`` is the env's stacked observation space; ``nstep_rule`` the policy's n-step rule.
    ``push`` takes transitions tagged as :mod:`ding.worker.transitions` describes; ``sample`` returns
    ``size`` distinct drawable samples (dicts, as :class:`~ding.worker.naive_replay.NaiveReplayBuffer` holds them), or
    None while fewer are drawable; ``sample_batch`` returns them as stacked arrays.

    Example:
        >>> space = spaces.Box(0, 255, (2, 1), np.uint8)
        >>> buffer = FrameStackReplayBuffer(8, space, NStepRule(nstep=2, gamma=0.5), seed=0)
        >>> def step(t, start=False, end=False):  # frames 0, 1, 2, ...: obs [[t-1], [t]], next_obs [[t], [t+1]]
        ...     obs = np.array([[max(t - 1, 0)], [t]], np.uint8)
        ...     return {'env_id': 0, 'episode_start': start, 'episode_end': end, 'obs': obs, 'action': t,
        ...             'reward': 1.0, 'next_obs': np.array([[t], [t + 1]], np.uint8), 'done': end}
        >>> buffer.push([step(0, start=True), step(1), step(2, end=True)])
        >>> len(buffer), buffer.sample_count
        (3, 3)
        >>> batch = buffer.gather([0, 1, 2])
        >>> batch['next_obs'][:, :, 0].tolist(), batch['reward'].tolist(), batch['discount'].tolist()
        ([[1, 2], [2, 3], [2, 3]], [1.5, 1.5, 1.0], [0.25, 0.25, 0.5])
    """

    def __init__(
        self,
        replay_buffer_size: int,
        observation_space: spaces.Space[Any],
        nstep_rule: NStepRule,
        seed: int | None = 0,
    ) -> None:
        check_capacity(replay_buffer_size, low=2)
        self._layout = slot_layout(observation_space, (), np.int64)
        self._capacity = replay_buffer_size
        self._n_frames = int(observation_space.shape[0])  # type: ignore[index]
        self._stack_shape = tuple(observation_space.shape or ())
        self._rule = nstep_rule
        self._gamma_powers = np.array([nstep_rule.gamma**k for k in range(nstep_rule.nstep + 1)])
        self._rng = np.random.default_rng(seed)
        self._arrays: dict[str, np.ndarray] = {}
        for name, (shape, dtype) in self._layout.items():
            if name != "action":  # allocated at the first push, from the policy's actions
                self._arrays[name] = np.empty((replay_buffer_size, *shape), dtype)
        self.clear()

    @classmethod
    def transition_nbytes(cls, env_spaces: EnvSpaces) -> int:
        """Bytes one slot takes (a stored transition, or an episode's reset frame) for an env's spaces."""
        action = env_spaces.action
        shape = tuple(action.shape or ()) if isinstance(action, spaces.Box) else ()
        dtype = action.dtype if isinstance(action, spaces.Box) else np.int64
        return layout_nbytes(slot_layout(env_spaces.observation, shape, dtype))

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def pushed_count(self) -> int:
        """Transitions pushed since creation (evicted ones included)."""
        return self._pushed

    @property
    def sample_count(self) -> int:
        """Transitions that may be drawn now."""
        return self._ready_count

    @property
    def nbytes(self) -> int:
        """Bytes of every array the buffer holds (the frames are committed as they are written)."""
        return sum(array.nbytes for array in self._arrays.values())

    def __len__(self) -> int:
        """Transitions stored (drawable or not)."""
        return self._stored

    def clear(self) -> None:
        self._arrays["ready_pos"].fill(-1)
        self._arrays["succ"].fill(-1)
        self._arrays["number"].fill(-1)
        self._slots = 0  # slots written since creation; slot id s lives at index s % capacity
        self._pushed = 0
        self._stored = 0
        self._ready_count = 0
        self._episodes: dict[Hashable, _Episode] = {}

    # ----- checkpoint state ----------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """The ring's arrays (as tensors), its counters and the sampling generator's state.

        >>> space = spaces.Box(0, 255, (2, 1), np.uint8)
        >>> buffer = FrameStackReplayBuffer(8, space, NStepRule(nstep=1, gamma=0.5), seed=0)
        >>> obs, next_obs = np.zeros((2, 1), np.uint8), np.array([[0], [1]], np.uint8)
        >>> buffer.push({'env_id': 0, 'episode_start': True, 'episode_end': True, 'obs': obs, 'action': 1,
        ...              'reward': 1.0, 'next_obs': next_obs, 'done': True})
        >>> restored = FrameStackReplayBuffer(8, space, NStepRule(nstep=1, gamma=0.5), seed=1)
        >>> restored.load_state_dict(buffer.state_dict())
        >>> len(restored), restored.sample(1)[0]['next_obs'].tolist() == next_obs.tolist()
        (1, True)
        """
        return {
            "kind": FRAME_STACK_STATE,
            "capacity": self._capacity,
            "stack_shape": list(self._stack_shape),
            "frame_dtype": self._layout["frame"][1].str,
            "nstep": self._rule.nstep,
            "arrays": {name: array_to_tensor(array) for name, array in self._arrays.items()},
            "counters": {name: int(getattr(self, f"_{name}")) for name in _COUNTERS},
            "rng": self._rng.bit_generator.state,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore :meth:`state_dict`'s state into a buffer of the same capacity, frames and n-step rule."""
        check_state_kind(state, FRAME_STACK_STATE)
        saved = (int(state["capacity"]), tuple(state["stack_shape"]), np.dtype(state["frame_dtype"]).name)
        here = (self._capacity, self._stack_shape, self._layout["frame"][1].name)
        if saved != here or int(state["nstep"]) != self._rule.nstep:
            raise ValueError(
                f"the checkpoint's frame_stack replay buffer (capacity, stack shape, frame dtype) {saved}, nstep "
                f"{state['nstep']} does not fit this run's {here}, nstep {self._rule.nstep}"
            )
        arrays = {name: tensor.numpy().copy() for name, tensor in state["arrays"].items()}
        missing = sorted(set(self._arrays) - set(arrays))
        if missing:
            raise ValueError(f"the checkpoint's frame_stack replay buffer state lacks the arrays {missing}")
        for name, array in arrays.items():
            expected = self._layout[name]
            if name != "action" and (array.shape[1:], array.dtype) != expected:
                raise ValueError(
                    f"the checkpoint's frame_stack replay buffer array {name!r} is {array.shape} "
                    f"{array.dtype}, expected rows of {expected[0]} {expected[1]}"
                )
        if "action" in arrays:
            self._layout["action"] = (tuple(arrays["action"].shape[1:]), arrays["action"].dtype)
        self._arrays = arrays
        for name in _COUNTERS:
            setattr(self, f"_{name}", int(state["counters"][name]))
        self._episodes = {}
        self._rng.bit_generator.state = dict(state["rng"])

    # ----- pushing -------------------------------------------------------------------------------------------
    def push(self, data: Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> None:
        """Store one tagged transition or each of a list, in order; the oldest slots are evicted when full."""
        items = [data] if isinstance(data, Mapping) else data
        with critical_section():  # a stop signal waits: a checkpoint never holds half a push
            for transition in items:
                self._push_one(transition)

    def _push_one(self, transition: Mapping[str, Any]) -> None:
        env_id = transition[ENV_ID]
        obs = self._checked(transition["obs"], env_id, "obs")
        next_obs = self._checked(transition["next_obs"], env_id, "next_obs")
        episode = self._episodes.get(env_id)
        starts = bool(transition[EPISODE_START]) or episode is None
        if starts and not _same_bits(obs, np.broadcast_to(obs[-1], obs.shape)):
            raise ValueError(
                f"env {env_id!r}: an episode's first obs must repeat its reset frame (as frame_stack fills "
                f"its stack on reset), but its {self._n_frames} frames differ; {SWITCH_OFF}"
            )
        if not starts and episode is not None and not _same_bits(obs, episode.next_obs):
            raise ValueError(
                f"env {env_id!r}: a transition's obs differs from the next_obs of the env's previous transition, "
                "though no new episode began (transitions must come in order, each env's episodes whole); "
                f"{SWITCH_OFF}"
            )
        if not _same_bits(next_obs[:-1], obs[1:]):
            raise ValueError(
                f"env {env_id!r}: next_obs is not obs shifted by one frame (frame_stack's newest frame comes last); "
                f"{SWITCH_OFF}"
            )
        if starts or episode is None:  # checked: nothing is written for a transition that is refused
            reset = self._write_slot(obs[-1], number=-1)
            episode = self._episodes[env_id] = _Episode([reset] * self._n_frames, reset, next_obs)
        slot = self._write_slot(next_obs[-1], number=self._pushed, stack=[*episode.stack, self._slots])
        self._store_fields(slot, transition)
        if episode.last >= self._tail:
            self._arrays["succ"][episode.last % self._capacity] = slot
        episode.stack = [*episode.stack[1:], slot]
        episode.last = slot
        episode.next_obs = next_obs
        episode.pending.append(slot)
        self._pushed += 1
        if transition[EPISODE_END]:
            for pending in episode.pending:
                self._make_ready(pending)
            del self._episodes[env_id]
        elif len(episode.pending) == self._rule.nstep:
            self._make_ready(episode.pending.popleft())

    def _checked(self, value: Any, env_id: Any, key: str) -> np.ndarray:
        array = np.asarray(value)
        frame_dtype = self._layout["frame"][1]
        if array.dtype != frame_dtype or array.shape != self._stack_shape:
            raise TypeError(
                f"env {env_id!r}: {key} is {array.shape} {array.dtype.name}, but the observation space is "
                f"{self._stack_shape} {frame_dtype.name}"
            )
        return array

    def _store_fields(self, slot: int, transition: Mapping[str, Any]) -> None:
        index = slot % self._capacity
        action = np.asarray(transition["action"])
        if "action" not in self._arrays:
            self._layout["action"] = (action.shape, action.dtype)
            self._arrays["action"] = np.zeros((self._capacity, *action.shape), action.dtype)
        self._arrays["action"][index] = action
        self._arrays["reward"][index] = float(transition["reward"])
        self._arrays["done"][index] = bool(transition["done"])
        self._arrays["end"][index] = bool(transition[EPISODE_END])

    @property
    def _tail(self) -> int:
        """The oldest slot id still stored."""
        return self._slots - self._capacity

    def _write_slot(self, frame: np.ndarray, number: int, stack: list[int] | None = None) -> int:
        slot = self._slots
        if slot >= self._capacity:
            self._evict(slot - self._capacity)
        index = slot % self._capacity
        self._arrays["frame"][index] = frame
        self._arrays["number"][index] = number
        self._arrays["succ"][index] = -1
        if stack is not None:
            self._arrays["stack"][index] = stack
            self._stored += 1
        self._slots += 1
        return slot

    def _evict(self, slot: int) -> None:
        """Forget slot id ``slot`` and every transition whose stacks use its frame (the next ``n_frames``)."""
        index = slot % self._capacity
        if self._arrays["number"][index] >= 0:
            self._stored -= 1
        for _ in range(self._n_frames + 1):
            if self._arrays["ready_pos"][index] >= 0:
                self._make_unready(index)
            successor = int(self._arrays["succ"][index])
            if successor < 0:
                break
            index = successor % self._capacity

    def _make_ready(self, slot: int) -> None:
        index = slot % self._capacity
        if slot < self._tail or self._arrays["stack"][index, 0] < self._tail:  # it, or a frame of its obs, is gone
            return
        self._arrays["ready_list"][self._ready_count] = index
        self._arrays["ready_pos"][index] = self._ready_count
        self._ready_count += 1
        self._on_ready(index)

    def _make_unready(self, index: int) -> None:
        ready_list, ready_pos = self._arrays["ready_list"], self._arrays["ready_pos"]
        position = int(ready_pos[index])
        moved = int(ready_list[self._ready_count - 1])
        ready_list[position] = moved
        ready_pos[moved] = position
        ready_pos[index] = -1
        self._ready_count -= 1
        self._on_unready(index)

    def _on_ready(self, index: int) -> None:
        """Slot ``index`` became drawable (a prioritized buffer gives it a priority)."""

    def _on_unready(self, index: int) -> None:
        """Slot ``index`` can no longer be drawn."""

    # ----- sampling ------------------------------------------------------------------------------------------
    def sample_batch(self, size: int) -> dict[str, np.ndarray] | None:
        """``size`` distinct drawable samples drawn uniformly, as arrays with a leading batch axis; or None."""
        check_sample_size(size, self._capacity)
        if self._ready_count < size:
            return None
        positions = self._rng.choice(self._ready_count, size=size, replace=False)
        return self._rebuild(self._arrays["ready_list"][positions])

    def sample(self, size: int) -> list[dict[str, Any]] | None:
        """``size`` distinct drawable samples drawn uniformly, each a dict of ``nstep_samples``' keys; or None."""
        batch = self.sample_batch(size)
        return None if batch is None else unbatch(batch)

    def ready_transitions(self) -> np.ndarray:
        """Push numbers (0 for the first transition pushed) of the transitions that may be drawn now, sorted."""
        ready = self._arrays["ready_list"][: self._ready_count]
        return np.sort(self._arrays["number"][ready])

    def gather(self, numbers: Iterable[int]) -> dict[str, np.ndarray]:
        """The samples of drawable transitions given by push number (see :meth:`ready_transitions`), as arrays."""
        wanted = np.asarray(list(numbers), dtype=np.int64).reshape(-1)
        ready = self._arrays["ready_list"][: self._ready_count]
        order = np.argsort(self._arrays["number"][ready])
        ready, known = ready[order], self._arrays["number"][ready[order]]
        found = np.minimum(np.searchsorted(known, wanted), max(len(known) - 1, 0))
        if len(wanted) and (not len(known) or np.any(known[found] != wanted)):
            missing = sorted(set(wanted.tolist()) - set(known.tolist()))
            raise ValueError(f"transitions {missing} are not drawable now; see ready_transitions()")
        return self._rebuild(ready[found] if len(wanted) else np.empty(0, np.int64))

    def _rebuild(self, indices: np.ndarray) -> dict[str, np.ndarray]:
        arrays, capacity = self._arrays, self._capacity
        last = indices.copy()
        length = np.ones(len(indices), np.int64)
        reward = np.zeros(len(indices))
        reward += self._gamma_powers[0] * arrays["reward"][indices]  # the sum nstep_samples makes, term by term
        for offset in range(1, self._rule.nstep):
            going_on = np.flatnonzero(~arrays["end"][last] & (arrays["succ"][last] >= 0))
            if not len(going_on):
                break
            last[going_on] = arrays["succ"][last[going_on]] % capacity
            length[going_on] += 1
            reward[going_on] += self._gamma_powers[offset] * arrays["reward"][last[going_on]]
        return {
            "obs": arrays["frame"][arrays["stack"][indices, :-1] % capacity],
            "action": arrays["action"][indices],
            "reward": reward,
            "next_obs": arrays["frame"][arrays["stack"][last, 1:] % capacity],
            "done": arrays["done"][last],
            "discount": self._gamma_powers[length],
        }


def unbatch(batch: Mapping[str, np.ndarray]) -> list[dict[str, Any]]:
    """Per-sample dicts of a batch: arrays as views, scalars as Python values (as ``nstep_samples`` gives them)."""

    def column(key: str) -> list[Any]:
        values = batch[key]
        return values.tolist() if values.ndim == 1 else list(values)

    columns = {key: column(key) for key in ("obs", "action", "reward", "next_obs", "done", "discount")}
    return [dict(zip(columns, row, strict=True)) for row in zip(*columns.values(), strict=True)]


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays hold the same bytes (so a frame rebuilt from one is bit for bit the other)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return a.tobytes() == b.tobytes()  # a copy and a memcmp: faster than an elementwise comparison
