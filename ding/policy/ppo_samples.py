"""PPO's training samples between epochs: advantages recomputed with the current critic, and the return scale.

DI-engine's ``recompute_adv`` recomputes every sample's advantage and return before each epoch with the critic as
it is then; ``value_norm`` has the critic predict returns divided by the running standard deviation of the returns
seen so far (:class:`ReturnScale`). Samples remember their trajectory for this: ``traj`` (an id), ``reward``,
``done``, and on a trajectory's last sample ``bootstrap_obs``, the observation to bootstrap from (None after a
real end).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ding.policy.ppo_math import gae_advantages


class ReturnScale:
    """The running standard deviation of returns (DI-engine's ``value_norm``): values are predicted divided by it.

    Example:
        >>> scale = ReturnScale()
        >>> scale.update(np.array([2.0, 4.0, 6.0, 8.0]))
        >>> round(scale.std, 3)
        2.236
    """

    def __init__(self) -> None:
        self.count = 1e-4
        self.mean = 0.0
        self.var = 1.0

    @property
    def std(self) -> float:
        return math.sqrt(self.var + 1e-8)

    def update(self, returns: np.ndarray) -> None:
        """Merge a batch of returns into the running mean and variance (the parallel form of Welford's rule)."""
        batch = np.asarray(returns, dtype=np.float64).reshape(-1)
        if batch.size == 0:
            return
        count = batch.size
        delta = float(batch.mean()) - self.mean
        total = self.count + count
        self.mean += delta * count / total
        self.var = (self.var * self.count + float(batch.var()) * count + delta**2 * self.count * count / total) / total
        self.count = total

    def state_dict(self) -> dict[str, float]:
        return {"count": self.count, "mean": self.mean, "var": self.var}

    def load_state_dict(self, state: Mapping[str, float]) -> None:
        self.count, self.mean, self.var = float(state["count"]), float(state["mean"]), float(state["var"])


def trajectories(samples: Sequence[Mapping[str, Any]]) -> list[list[int]]:
    """The sample indices of each trajectory, in time order (samples of one trajectory arrive in order).

    >>> trajectories([{'traj': 4}, {'traj': 4}, {'traj': 7}, {'traj': 4}])
    [[0, 1, 3], [2]]
    """
    groups: dict[int, list[int]] = {}
    for index, sample in enumerate(samples):
        groups.setdefault(int(sample["traj"]), []).append(index)
    return list(groups.values())


def recompute_advantages(
    samples: list[dict[str, Any]],
    values_of: Callable[[list[Any]], np.ndarray],
    gamma: float,
    lam: float,
) -> None:
    """Set ``value``, ``adv`` and ``return`` of every sample from the critic as it is now (in place).

    ``values_of(observations)`` gives the critic's values (on the returns' scale), one row per observation.
    """
    values = values_of([sample["obs"] for sample in samples])
    for indices in trajectories(samples):
        last = samples[indices[-1]]
        value = values[indices]
        bootstrap = np.zeros_like(value[-1])
        if last.get("bootstrap_obs") is not None:
            bootstrap = values_of([last["bootstrap_obs"]])[0]
        next_value = np.concatenate([value[1:], bootstrap[None]])
        reward = np.array([samples[i]["reward"] for i in indices])
        done = np.array([samples[i]["done"] for i in indices], dtype=np.float64)
        advantage = gae_advantages(reward, value, next_value, done, gamma, lam)
        for row, index in enumerate(indices):
            samples[index]["value"] = value[row]
            samples[index]["adv"] = advantage[row]
            samples[index]["return"] = advantage[row] + value[row]
