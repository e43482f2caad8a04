"""``BaseLearner``: run a policy's updates, count iterations, log statistics and save checkpoints."""

from __future__ import annotations

import math
import os
import pathlib
import time
from collections.abc import Callable, Mapping
from typing import Any

from ding.config.policy_sections import LEARNER_HOOK
from ding.policy.base import LearnMode
from ding.utils.accepts import check_values, plain_defaults
from ding.utils.checkpoint_files import CheckpointError, iteration_ckpt_name
from ding.worker.checkpoint import save_checkpoint
from ding.worker.interrupt import critical_section
from ding.worker.logger import ExperimentLogger

COUNTER_KEYS = ("last_iter", "last_step", "last_episode")
BEST_RETURN_KEY = "best_eval_return"
"""The best mean evaluation return of the run so far, stored in every checkpoint once there was an evaluation."""
REPLAY_BUFFER_KEY = "replay_buffer"
"""Where a resume checkpoint holds the replay buffer (``policy.other.replay_buffer.save_in_checkpoint``)."""


class BaseLearner:
    """Call ``policy.forward(batch)`` per :meth:`train`, count iterations and keep checkpoints.

    ``hook`` is the policy's ``learn.learner.hook`` section: statistics are logged every
    ``log_show_after_iter`` iterations and ``ckpt/iteration_<N>.pth.tar`` (:meth:`save_resume_checkpoint`)
    is saved every ``save_ckpt_after_iter`` iterations and, when ``save_ckpt_after_minutes`` is set, after an
    update once that many minutes of wall time passed since the last such checkpoint (or the start).
    A checkpoint holds the policy's state (``model``, ...) plus ``last_iter``, ``last_step`` and, when the
    caller sets them, ``last_episode`` (:attr:`episode_count`) and ``best_eval_return`` (:attr:`best_eval_return`)
    (:func:`load_policy_state` and :func:`~ding.utils.checkpoint_files.checkpoint_counter` read one back); the
    ``iteration_<N>`` ones also hold what :meth:`add_resume_state` registered (the replay buffer, for one).
    A file in ``ckpt_dir`` that this learner did not write (an earlier run's) is never replaced, except by
    ``save_checkpoint(..., replace=True)`` (the run's ``ckpt_best`` after a better evaluation). An update is a
    critical section (:mod:`ding.worker.interrupt`): a stop signal never leaves it half-applied. ``clock`` is
    ``time.monotonic``.
    """

    def __init__(
        self,
        policy: LearnMode,
        ckpt_dir: str | os.PathLike[str],
        logger: ExperimentLogger | None = None,
        hook: Mapping[str, Any] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        hook = {**plain_defaults(LEARNER_HOOK), **dict(hook or {})}
        check_values(LEARNER_HOOK, hook, "policy.learn.learner.hook")
        self._log_every: int = hook["log_show_after_iter"]
        self._ckpt_every: int = hook["save_ckpt_after_iter"]
        minutes = hook["save_ckpt_after_minutes"]
        self._ckpt_seconds = None if minutes is None else float(minutes) * 60.0
        self._clock = clock
        self._last_resume_ckpt = clock()
        self._resume_state: dict[str, Callable[[], Any]] = {}
        self._policy = policy
        self.ckpt_dir = pathlib.Path(ckpt_dir)
        self._logger = logger
        self.train_iter = 0
        self.last_stats: dict[str, float] = {}
        self.episode_count: int | None = None  # saved as ``last_episode`` when set (the pipeline keeps it current)
        self.best_eval_return: float | None = None  # saved as ``best_eval_return`` when set
        self._written: set[str] = set()  # the names this learner saved

    @property
    def batch_size(self) -> int:
        return self._policy.batch_size

    def train(self, batch: list[dict[str, Any]], env_step: int = 0) -> dict[str, float]:
        """One update; returns the policy's statistics."""
        with critical_section():
            stats = self._policy.forward(batch)
            self.train_iter += 1
        self.last_stats = stats
        if self._logger is not None and self.train_iter % self._log_every == 0:
            self._logger.scalars("learner_iter", stats, self.train_iter)
        if self.train_iter % self._ckpt_every == 0:
            self.save_resume_checkpoint(env_step)
        elif self._ckpt_seconds is not None and self._clock() - self._last_resume_ckpt >= self._ckpt_seconds:
            self.save_resume_checkpoint(env_step, reason="save_ckpt_after_minutes")
        return stats

    def add_resume_state(self, key: str, state_fn: Callable[[], Any]) -> None:
        """Store ``state_fn()`` under ``key`` in every ``iteration_<N>`` checkpoint (e.g. the replay buffer's)."""
        if key in ("model", BEST_RETURN_KEY, *COUNTER_KEYS):
            raise ValueError(f"checkpoint key {key!r} is the learner's own; choose another")
        self._resume_state[key] = state_fn

    def save_resume_checkpoint(self, env_step: int = 0, reason: str | None = None) -> pathlib.Path | None:
        """Save ``ckpt/iteration_<train_iter>.pth.tar``: the policy's state, counters and the resume state.

        Returns the path, or None when an earlier run's file of that name was kept (see :meth:`save_checkpoint`).
        """
        extra = {key: state_fn() for key, state_fn in self._resume_state.items()}
        path = self.save_checkpoint(iteration_ckpt_name(self.train_iter), env_step, extra, reason)
        self._last_resume_ckpt = self._clock()
        return path

    def save_checkpoint(
        self,
        name: str,
        env_step: int = 0,
        extra: Mapping[str, Any] | None = None,
        reason: str | None = None,
        replace: bool = False,
    ) -> pathlib.Path | None:
        """Save the policy's state (with ``extra`` entries) as ``ckpt/<name>``; return its path.

        A ``ckpt/<name>`` this learner did not write is kept (None is returned and the log says so) unless
        ``replace``.
        """
        target = self.ckpt_dir / name
        if not replace and name not in self._written and target.exists():
            if self._logger is not None:
                self._logger.info(f"kept checkpoint {target}: an earlier run wrote it, and no run replaces another's")
            return None
        state = {**self._policy.state_dict(), **(extra or {}), "last_iter": self.train_iter, "last_step": env_step}
        if self.episode_count is not None:
            state["last_episode"] = self.episode_count
        if self.best_eval_return is not None:
            state[BEST_RETURN_KEY] = float(self.best_eval_return)
        path = save_checkpoint(state, target)
        self._written.add(name)
        if self._logger is not None:
            held = f", with {', '.join(extra)}" if extra else ""
            why = f" ({reason})" if reason else ""
            self._logger.info(f"saved checkpoint {path}{why} (train iter {self.train_iter}, env step {env_step}{held})")
        return path


def load_policy_state(policy: LearnMode, state: Mapping[str, Any], source: str | os.PathLike[str]) -> None:
    """Load a checkpoint's policy state (model, optimizer, ... as saved) into ``policy``.

    ``state`` is what :func:`load_checkpoint` returned for ``source`` (named in errors); a model that
    does not fit the policy's raises :class:`CheckpointError`.
    """
    try:
        policy.load_state_dict(state)
    except (RuntimeError, ValueError, KeyError) as err:
        lines = [line.strip() for line in str(err).splitlines() if line.strip()]
        first = lines[1] if len(lines) > 1 else lines[0] if lines else type(err).__name__
        raise CheckpointError(f"checkpoint {source} does not fit the policy of this config: {first}") from err


def stored_best_return(state: Mapping[str, Any]) -> float | None:
    """The ``best_eval_return`` a checkpoint stores (None for one saved before any evaluation, or by an older ding).

    >>> stored_best_return({'best_eval_return': 21.5}), stored_best_return({})
    (21.5, None)
    """
    value = state.get(BEST_RETURN_KEY)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def load_replay_buffer(buffer: Any, state: Mapping[str, Any], source: str | os.PathLike[str]) -> int | None:
    """Restore the replay buffer a checkpoint holds (:data:`REPLAY_BUFFER_KEY`) into ``buffer``.

    Returns the transitions restored, or None when the checkpoint holds no buffer; a buffer state that does
    not fit ``buffer`` raises :class:`CheckpointError`.
    """
    if REPLAY_BUFFER_KEY not in state:
        return None
    try:
        buffer.load_state_dict(state[REPLAY_BUFFER_KEY])
    except (KeyError, TypeError, ValueError) as err:
        raise CheckpointError(f"checkpoint {source}: its replay buffer cannot be restored: {err}") from err
    return len(buffer)
