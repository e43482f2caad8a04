"""Prioritized sampling for the replay buffers: sum and min trees over slots, DI-engine's priority rule and its keys.

A slot holding a drawable sample has a priority ``p`` (new samples get the highest priority seen so far, 1 at first)
and is drawn with probability ``p^alpha / sum_j p_j^alpha``. A batch of ``size`` is drawn as DI-engine's
``AdvancedReplayBuffer`` draws it: ``[0, total)`` is cut into ``size`` equal strata and one point is drawn uniformly
in each, so a batch may hold a sample twice. Each drawn sample's importance-sampling weight is
``(N * P(i))^-beta / max_j (N * P(j))^-beta = (min_j p_j^alpha / p_i^alpha)^beta``; ``beta`` then moves towards 1 by
``(1 - beta_0) / anneal_step`` per batch (no annealing with ``anneal_step=0``). A learner's update sets a sample's
priority to ``|td error| + 1e-5`` (so none is 0) and raises the highest priority seen to the new value.

The keys (``policy.other.replay_buffer``, DI-engine's names and defaults, declared in
:data:`~ding.config.policy_sections.PRIORITY_KEYS`): ``alpha`` 0.6, ``beta`` 0.4, ``anneal_step`` 100000;
``policy.priority`` turns prioritized replay on and ``policy.priority_IS_weight`` weighs each sample's loss by its
importance-sampling weight.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ding.config.policy_sections import PRIORITY_KEYS
from ding.errors import ConfigError
from ding.policy.replay_batch import IS_WEIGHT, REPLAY_ID, REPLAY_INDEX
from ding.utils.accepts import check_values, plain_defaults

PRIORITY_EPS = 1e-5
"""Added to every updated priority, as DI-engine does, so that no sample's probability is 0."""


@dataclasses.dataclass(frozen=True)
class PriorityRule:
    """``alpha``, ``beta`` and ``anneal_step`` of prioritized replay (see the module docstring)."""

    alpha: float = 0.6
    beta: float = 0.4
    anneal_step: int = 100000

    @classmethod
    def of(cls, replay_buffer_cfg: Mapping[str, Any]) -> PriorityRule:
        """The rule of a merged ``policy.other.replay_buffer`` section (held to what :data:`PRIORITY_KEYS` accept)."""
        values = {**plain_defaults(PRIORITY_KEYS), **{k: v for k, v in replay_buffer_cfg.items() if k in PRIORITY_KEYS}}
        check_values(PRIORITY_KEYS, values, "policy.other.replay_buffer")
        return cls(float(values["alpha"]), float(values["beta"]), int(values["anneal_step"]))


class SegmentTree:
    """A complete binary tree over ``capacity`` leaves whose nodes hold the sum (or min) of their leaves; leaves are
    set in batches and each batch's ancestors are recomputed from their children (no drift from repeated updates).

    Example:
        >>> tree = SegmentTree(5, 'sum')
        >>> tree.set(np.array([0, 3]), np.array([1.0, 3.0]))
        >>> tree.total, tree.find(np.array([0.5, 1.0, 3.9])).tolist()
        (4.0, [0, 3, 3])
    """

    def __init__(self, capacity: int, op: str) -> None:
        if op not in ("sum", "min"):
            raise ValueError(f"op must be 'sum' or 'min', got {op!r}")
        self._size = 1 << max(0, int(np.ceil(np.log2(max(capacity, 1)))))
        self._depth = int(np.log2(self._size))
        self._neutral = 0.0 if op == "sum" else np.inf
        self._combine = np.add if op == "sum" else np.minimum
        self._nodes = np.full(2 * self._size, self._neutral)

    @property
    def nbytes(self) -> int:
        return int(self._nodes.nbytes)

    @property
    def total(self) -> float:
        """The root: the sum (or min) of every leaf."""
        return float(self._nodes[1])

    def leaves(self, indices: np.ndarray) -> np.ndarray:
        return self._nodes[self._size + indices]

    def set(self, indices: np.ndarray, values: np.ndarray) -> None:
        """Set leaves ``indices`` to ``values`` and recompute their ancestors."""
        nodes = np.asarray(indices, np.int64) + self._size
        self._nodes[nodes] = values
        for _ in range(self._depth):
            nodes = np.unique(nodes >> 1)
            self._nodes[nodes] = self._combine(self._nodes[2 * nodes], self._nodes[2 * nodes + 1])

    def reset(self, indices: np.ndarray) -> None:
        """Leaves ``indices`` back to the neutral value (0 for a sum, infinity for a min)."""
        self.set(indices, np.full(len(indices), self._neutral))

    def find(self, mass: np.ndarray) -> np.ndarray:
        """For each prefix mass, the leaf where the running sum of leaves passes it (a sum tree only); never a leaf of
        weight 0 while the total is positive, whatever the float rounding."""
        nodes = np.ones(len(mass), np.int64)
        mass = np.asarray(mass, np.float64).copy()
        for _ in range(self._depth):
            left = self._nodes[2 * nodes]
            right = self._nodes[2 * nodes + 1]
            go_right = ((mass >= left) & (right > 0)) | (left <= 0)
            mass -= np.where(go_right, left, 0.0)
            nodes = 2 * nodes + go_right
        return nodes - self._size


class Priorities:
    """The priorities of a buffer's slots and how batches are drawn from them (see the module docstring).

    A slot is drawable once :meth:`add` gave it the highest priority seen so far, until :meth:`remove`.

    Example:
        >>> priorities = Priorities(4, PriorityRule(alpha=1.0, beta=1.0, anneal_step=0))
        >>> priorities.add(np.arange(3))
        >>> priorities.update(np.array([0, 1]), np.array([3.0, 1.0]))
        >>> priorities.max_priority, priorities.weights(np.array([0, 1, 2])).round(3).tolist()  # min p / p
        (3.0, [0.333, 1.0, 1.0])
    """

    def __init__(self, capacity: int, rule: PriorityRule) -> None:
        if not 0.0 <= rule.alpha <= 1.0 or not 0.0 <= rule.beta <= 1.0 or rule.anneal_step < 0:
            raise ConfigError(f"prioritized replay needs alpha and beta in [0, 1] and anneal_step >= 0, got {rule}")
        self._capacity = capacity
        self._rule = rule
        self._sum = SegmentTree(capacity, "sum")
        self._min = SegmentTree(capacity, "min")
        self._priority = np.zeros(capacity)
        self.clear()

    @property
    def beta(self) -> float:
        """The current importance-sampling exponent (annealed towards 1 per batch)."""
        return self._beta

    @property
    def max_priority(self) -> float:
        """The priority a new sample gets: the highest given so far (1 at first)."""
        return self._max_priority

    @property
    def nbytes(self) -> int:
        return self._sum.nbytes + self._min.nbytes + int(self._priority.nbytes)

    @staticmethod
    def slot_nbytes() -> int:
        """Bytes per slot: a leaf and an inner node in each tree (up to twice the slots with rounding) and the
        priority itself."""
        return 2 * 2 * 2 * 8 + 8

    def clear(self) -> None:
        self._sum.reset(np.arange(self._capacity))
        self._min.reset(np.arange(self._capacity))
        self._priority.fill(0.0)
        self._max_priority = 1.0
        self._beta = self._rule.beta

    def priority(self, indices: np.ndarray) -> np.ndarray:
        """The priorities of slots ``indices``."""
        return self._priority[indices]

    def add(self, indices: np.ndarray) -> None:
        """Make slots drawable with the highest priority seen so far."""
        self._set(indices, np.full(len(indices), self._max_priority))

    def remove(self, indices: np.ndarray) -> None:
        """Make slots undrawable."""
        self._priority[indices] = 0.0
        self._sum.reset(indices)
        self._min.reset(indices)

    def update(self, indices: np.ndarray, priorities: np.ndarray) -> None:
        """New priorities (non-negative ``|td error|``) for drawable slots: each stored plus :data:`PRIORITY_EPS`."""
        values = np.asarray(priorities, np.float64)
        if values.shape != np.shape(indices) or not np.all(np.isfinite(values)) or np.any(values < 0):
            raise ValueError(
                f"priorities must be finite numbers >= 0, one per sample ({len(indices)}); got {values.tolist()}"
            )
        if len(values):
            self._max_priority = max(self._max_priority, float(values.max()))
        self._set(indices, values + PRIORITY_EPS)

    def _set(self, indices: np.ndarray, priorities: np.ndarray) -> None:
        self._priority[indices] = priorities
        weights = priorities**self._rule.alpha
        self._sum.set(indices, weights)
        self._min.set(indices, weights)

    def draw(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` slots, one from each of ``size`` equal strata of the total weight (repeats possible)."""
        total = self._sum.total
        if total <= 0:
            raise ValueError("no drawable slot")
        mass = (np.arange(size) + rng.random(size)) / size * total
        return self._sum.find(mass)

    def weights(self, indices: np.ndarray) -> np.ndarray:
        """Importance-sampling weights of drawn slots with the current ``beta`` (the largest possible weight is 1)."""
        return np.asarray((self._min.total / self._sum.leaves(indices)) ** self._beta, np.float64)

    def anneal(self) -> None:
        """After a batch: ``beta`` one step closer to 1."""
        if self._rule.anneal_step:
            self._beta = min(1.0, self._beta + (1.0 - self._rule.beta) / self._rule.anneal_step)

    def state_dict(self) -> dict[str, Any]:
        """The priorities (an array), the highest seen and the current ``beta``."""
        return {"priority": self._priority.copy(), "max_priority": self._max_priority, "beta": self._beta}

    def load_state_dict(self, state: Mapping[str, Any], drawable: np.ndarray) -> None:
        """Restore :meth:`state_dict`'s state for the slots ``drawable`` (every other slot undrawable)."""
        priority = np.asarray(state["priority"], np.float64)
        if priority.shape != (self._capacity,):
            raise ValueError(
                f"the checkpoint's priorities are {priority.shape}, this buffer has {self._capacity} slots"
            )
        self.clear()
        self._set(drawable, priority[drawable])
        self._max_priority = float(state["max_priority"])
        self._beta = float(state["beta"])


def priority_rule_of(policy_cfg: Mapping[str, Any]) -> PriorityRule | None:
    """The priority rule of a merged policy config, or None when ``policy.priority`` is not True.

    >>> priority_rule_of({'priority': True, 'other': {'replay_buffer': {'alpha': 0.5}}})
    PriorityRule(alpha=0.5, beta=0.4, anneal_step=100000)
    >>> priority_rule_of({'priority': False}) is None
    True
    """
    if policy_cfg.get("priority") is not True:
        return None
    return PriorityRule.of((policy_cfg.get("other") or {}).get("replay_buffer") or {})


def drawn_keys(indices: np.ndarray, numbers: np.ndarray, weights: np.ndarray) -> list[dict[str, Any]]:
    """Per drawn sample, the keys a prioritized buffer adds to it (slot, push number, IS weight)."""
    return [
        {REPLAY_INDEX: int(index), REPLAY_ID: int(number), IS_WEIGHT: float(weight)}
        for index, number, weight in zip(indices.tolist(), numbers.tolist(), weights.tolist(), strict=True)
    ]


def batch_ids(batch: Sequence[Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """The slots and push numbers of a drawn batch (``ValueError`` for samples a prioritized buffer did not draw)."""
    try:
        return (
            np.array([sample[REPLAY_INDEX] for sample in batch], np.int64),
            np.array([sample[REPLAY_ID] for sample in batch], np.int64),
        )
    except KeyError as err:
        raise ValueError(
            f"a sample of the batch lacks {err.args[0]!r}: it was not drawn by a prioritized buffer"
        ) from err
