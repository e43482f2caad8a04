"""Prioritized replay: draws in proportion to ``priority ** alpha``, importance-sampling weights and beta's annealing
by DI-engine's formula, priority updates (evicted samples skipped), and the learner's priorities reaching the buffer."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ding.policy.dqn import DQNPolicy
from ding.worker.prioritized_buffer import PrioritizedReplayBuffer, prioritized_learn_mode
from ding.worker.priority import PRIORITY_EPS, PriorityRule
from tests.policy.test_dqn import SMALL, random_batch


def buffer_with(priorities: list[float], rule: PriorityRule, seed: int = 0) -> PrioritizedReplayBuffer:
    """A full buffer whose slot ``i`` holds ``{'x': i}`` with priority ``priorities[i]`` (set by an update)."""
    buffer = PrioritizedReplayBuffer(len(priorities), rule, seed=seed)
    buffer.push([{"x": i} for i in range(len(priorities))])
    slots = list(range(len(priorities)))
    buffer.update({"replay_buffer_idx": slots, "replay_unique_id": slots, "priority": priorities})
    return buffer


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
def test_draws_are_in_proportion_to_priority_to_the_alpha(alpha: float) -> None:
    priorities = [0.5, 1.0, 2.0, 4.0, 8.0, 0.1, 3.0, 1.5]
    buffer = buffer_with(priorities, PriorityRule(alpha=alpha, beta=0.4, anneal_step=0))
    counts = np.zeros(len(priorities))
    draws = 0
    for _ in range(5000):
        batch = buffer.sample(8)
        assert batch is not None
        for sample in batch:
            counts[sample["x"]] += 1
            assert sample["replay_buffer_idx"] == sample["x"] == sample["replay_unique_id"]
        draws += len(batch)
    stored = (np.array(priorities) + PRIORITY_EPS) ** alpha
    expected = stored / stored.sum()
    # 40,000 draws: the standard error of a frequency is below 0.0025; four of them is the tolerance
    np.testing.assert_allclose(counts / draws, expected, atol=0.01)


def test_importance_sampling_weights_are_di_engines_normalized_formula() -> None:
    priorities = [0.5, 1.0, 2.0, 4.0, 8.0]
    alpha, beta = 0.6, 0.4
    buffer = buffer_with(priorities, PriorityRule(alpha=alpha, beta=beta, anneal_step=0))
    weights = (np.array(priorities) + PRIORITY_EPS) ** alpha
    probability = weights / weights.sum()
    n = len(priorities)
    expected = (n * probability) ** -beta / ((n * probability) ** -beta).max()  # w_i / max_j w_j
    batch = [sample for _ in range(40) for sample in buffer.sample(5) or []]
    assert {sample["x"] for sample in batch} == set(range(n))
    for sample in batch:
        assert sample["IS"] == pytest.approx(expected[sample["x"]], rel=1e-9)
    assert max(sample["IS"] for sample in batch) == pytest.approx(1.0)  # the least likely sample


def test_beta_rises_to_one_over_anneal_step_batches() -> None:
    priorities = [1.0, 4.0]
    buffer = buffer_with(priorities, PriorityRule(alpha=1.0, beta=0.2, anneal_step=4))
    seen = []
    for _ in range(6):
        batch = buffer.sample(2)
        assert batch is not None
        high = [s["IS"] for s in batch if s["x"] == 1]
        seen.append(high[0] if high else None)
    ratio = (1.0 + PRIORITY_EPS) / (4.0 + PRIORITY_EPS)  # min p / p of the high-priority sample
    for batch_number, weight in enumerate(seen):
        beta = min(1.0, 0.2 + 0.2 * batch_number)
        if weight is not None:
            assert weight == pytest.approx(ratio**beta)
    assert seen[-1] is not None and seen[-1] == pytest.approx(ratio)  # beta stays at 1


def test_updates_set_priorities_new_samples_get_the_highest_and_evicted_ones_are_skipped() -> None:
    buffer = PrioritizedReplayBuffer(3, PriorityRule(alpha=1.0, beta=1.0, anneal_step=0), seed=0)
    buffer.push([{"x": i} for i in range(3)])
    assert buffer.priorities([0, 1, 2]).tolist() == [1.0, 1.0, 1.0]  # the highest so far: 1 at first
    buffer.update({"replay_buffer_idx": [0, 1], "replay_unique_id": [0, 1], "priority": [5.0, 0.0]})
    assert buffer.priorities([0, 1]).tolist() == pytest.approx([5.0 + PRIORITY_EPS, PRIORITY_EPS])
    buffer.push({"x": 3})  # evicts push 0 from slot 0, and gets the highest priority seen (5)
    assert buffer.priorities([0]).tolist() == [5.0]
    buffer.update({"replay_buffer_idx": [0, 2], "replay_unique_id": [0, 2], "priority": [0.25, 2.0]})
    assert buffer.priorities([0, 2]).tolist() == pytest.approx([5.0, 2.0 + PRIORITY_EPS])  # push 0 is gone
    with pytest.raises(ValueError, match="one slot, id and priority per sample, got 2, 2 and 1"):
        buffer.update({"replay_buffer_idx": [0, 1], "replay_unique_id": [3, 1], "priority": [1.0]})
    with pytest.raises(ValueError, match="priorities must be finite numbers >= 0"):
        buffer.update({"replay_buffer_idx": [1], "replay_unique_id": [1], "priority": [-1.0]})


def test_a_state_dict_restores_priorities_and_the_draws_that_follow() -> None:
    rule = PriorityRule(alpha=0.6, beta=0.4, anneal_step=10)
    buffer = buffer_with([0.5, 1.0, 2.0, 4.0], rule)
    buffer.sample(4)  # beta moves
    restored = PrioritizedReplayBuffer(4, rule, seed=9)
    restored.load_state_dict(buffer.state_dict())
    assert restored.priorities([0, 1, 2, 3]).tolist() == buffer.priorities([0, 1, 2, 3]).tolist()
    assert restored.sample(4) == buffer.sample(4)


def test_the_learners_new_priorities_reach_the_buffer_and_weigh_the_loss() -> None:
    cfg: dict[str, Any] = {"model": dict(SMALL["model"]), "priority": True, "priority_IS_weight": True}
    policy = DQNPolicy(cfg, seed=0)
    buffer = PrioritizedReplayBuffer(64, PriorityRule(alpha=0.6, beta=0.4, anneal_step=0), seed=0)
    buffer.push(random_batch(64))
    buffer.update({"replay_buffer_idx": list(range(64)), "replay_unique_id": list(range(64)), "priority": [0.1] * 64})
    learn = policy.learn_mode
    raw_forward = learn.forward
    seen: list[dict[str, Any]] = []

    def recording(batch: list[dict[str, Any]]) -> dict[str, Any]:
        stats = raw_forward(batch)
        seen.append(dict(stats))
        return stats

    handed = prioritized_learn_mode(type(learn)(**{**vars(learn), "forward": recording}), buffer)
    batch = buffer.sample(16)
    assert batch is not None
    stats = handed.forward(batch)
    assert "priority" not in stats  # handed to the buffer, not logged
    new = seen[0]["priority"]
    slots = [sample["replay_buffer_idx"] for sample in batch]
    assert buffer.priorities(slots).tolist() == pytest.approx([p + PRIORITY_EPS for p in new])
    weights = [sample["IS"] for sample in batch]
    assert stats["total_loss"] == pytest.approx(float(np.mean(np.array(new) * np.array(weights))), rel=1e-5)
