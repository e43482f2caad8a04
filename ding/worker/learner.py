"""``BaseLearner``: run a policy's updates, count iterations, log statistics and save checkpoints."""

from __future__ import annotations

import os
import pathlib
import time
from collections.abc import Callable, Mapping
from typing import Any

import torch

from ding.config.policy_sections import LEARNER_HOOK
from ding.errors import DingError
from ding.policy.base import LearnMode
from ding.utils.accepts import check_values, plain_defaults
from ding.worker.interrupt import critical_section
from ding.worker.logger import ExperimentLogger

CKPT_BEST = "ckpt_best.pth.tar"
COUNTER_KEYS = ("last_iter", "last_step", "last_episode")
REPLAY_BUFFER_KEY = "replay_buffer"
"""Where a resume checkpoint holds the replay buffer (``policy.other.replay_buffer.save_in_checkpoint``)."""


class CheckpointError(DingError, ValueError):
    """A file that should be a checkpoint is missing, unreadable or holds no model state."""


def iteration_ckpt_name(train_iter: int) -> str:
    """The name of the periodic checkpoint at ``train_iter`` (``iteration_<N>.pth.tar``)."""
    return f"iteration_{train_iter}.pth.tar"


def save_checkpoint(state: Mapping[str, Any], path: str | os.PathLike[str]) -> pathlib.Path:
    """Write ``state`` with ``torch.save`` atomically (a temporary file renamed into place)."""
    target = pathlib.Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(target.name + ".tmp")
    with critical_section():  # a stop signal waits until the file is complete
        torch.save(dict(state), temporary)
        os.replace(temporary, target)
    return target


def load_checkpoint(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a checkpoint written by :func:`save_checkpoint` (tensors and plain values only)."""
    file = pathlib.Path(path)
    if not file.is_file():
        raise CheckpointError(f"checkpoint {file} does not exist")
    try:
        state = torch.load(file, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises many kinds for a file that is not a checkpoint
        first = (str(err).strip().splitlines() or [""])[0].split(". ")[0].rstrip(".")
        raise CheckpointError(f"{file} is not a ding checkpoint (torch.load: {type(err).__name__}: {first})") from err
    if not isinstance(state, dict) or "model" not in state:
        raise CheckpointError(f"{file} is not a ding checkpoint: it holds no 'model' state")
    return state


class BaseLearner:
    """Call ``policy.forward(batch)`` per :meth:`train`, count iterations and keep checkpoints.

    ``hook`` is the policy's ``learn.learner.hook`` section: statistics are logged every
    ``log_show_after_iter`` iterations and ``ckpt/iteration_<N>.pth.tar`` (:meth:`save_resume_checkpoint`)
    is saved every ``save_ckpt_after_iter`` iterations and, when ``save_ckpt_after_minutes`` is set, after an
    update once that many minutes of wall time passed since the last such checkpoint (or the start).
    A checkpoint holds the policy's state (``model``, ...) plus ``last_iter``, ``last_step`` and, when the
    caller sets :attr:`episode_count`, ``last_episode`` (:func:`load_policy_state` and
    :func:`checkpoint_counter` read one back); the ``iteration_<N>`` ones also hold what
    :meth:`add_resume_state` registered (the replay buffer, for one). An update is a critical section
    (:mod:`ding.worker.interrupt`): a stop signal never leaves it half-applied. ``clock`` is ``time.monotonic``.
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
        if key in ("model", *COUNTER_KEYS):
            raise ValueError(f"checkpoint key {key!r} is the learner's own; choose another")
        self._resume_state[key] = state_fn

    def save_resume_checkpoint(self, env_step: int = 0, reason: str | None = None) -> pathlib.Path:
        """Save ``ckpt/iteration_<train_iter>.pth.tar``: the policy's state, counters and the resume state."""
        extra = {key: state_fn() for key, state_fn in self._resume_state.items()}
        path = self.save_checkpoint(iteration_ckpt_name(self.train_iter), env_step, extra, reason)
        self._last_resume_ckpt = self._clock()
        return path

    def save_checkpoint(
        self, name: str, env_step: int = 0, extra: Mapping[str, Any] | None = None, reason: str | None = None
    ) -> pathlib.Path:
        """Save the policy's state (with ``extra`` entries) as ``ckpt/<name>``."""
        state = {**self._policy.state_dict(), **(extra or {}), "last_iter": self.train_iter, "last_step": env_step}
        if self.episode_count is not None:
            state["last_episode"] = self.episode_count
        path = save_checkpoint(state, self.ckpt_dir / name)
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


def checkpoint_counter(state: Mapping[str, Any], key: str, source: str | os.PathLike[str] = "the checkpoint") -> int:
    """The counter ``key`` (``last_iter``, ``last_step``, ``last_episode``) of a loaded checkpoint, 0 if absent."""
    value = state.get(key, 0)
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise CheckpointError(f"checkpoint {source} has an invalid {key!r}: {value!r}")
    return value
