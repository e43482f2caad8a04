"""``EvalResult``: what one evaluation found, as the evaluator reports it and the logger records it."""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class EvalResult:
    """One evaluation: the episodes' returns and what they mean for the run.

    ``returns``, ``lengths`` (env steps), ``env_ids`` and ``videos`` (paths, when recorded) hold one entry per
    episode, in the order the episodes ended.
    """

    train_iter: int
    env_step: int
    returns: tuple[float, ...]
    stop_value: float | None
    is_best: bool
    duration: float
    lengths: tuple[int, ...] = ()
    env_ids: tuple[int, ...] = ()
    videos: tuple[str, ...] = ()

    @property
    def mean(self) -> float:
        return float(np.mean(self.returns))

    @property
    def std(self) -> float:
        return float(np.std(self.returns))

    @property
    def max(self) -> float:
        return float(np.max(self.returns))

    @property
    def min(self) -> float:
        return float(np.min(self.returns))

    @property
    def stop(self) -> bool:
        """Whether the mean return reached ``stop_value``."""
        return self.stop_value is not None and self.mean >= self.stop_value
