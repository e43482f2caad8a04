"""Keys and sections several policies declare alike, with what their keys accept: the keys every policy section
has, the learner's hooks, the evaluator's frequency and the replay buffer.

Each policy's ``config`` takes them from here (with its own defaults), and the workers that read them hold a value
to the same declaration, so a key means one thing wherever it is set.

Example:
    >>> from ding.utils.accepts import plain_defaults
    >>> plain_defaults(learner_section(log_show_after_iter=1000))['learner']['hook']['log_show_after_iter']
    1000
    >>> plain_defaults(replay_buffer_section(10000))
    {'replay_buffer_size': 10000, 'share_frames': None, 'save_in_checkpoint': False}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ding.utils.accepts import count, optional, plain_defaults, positive, redeclare, unit

COMMON_CONFIG: dict[str, Any] = {"load_path": optional(str, note="a checkpoint file")}
"""Keys every compiled policy section has, with their defaults and what they accept: ``load_path``, a checkpoint
``ding -m eval`` evaluates when no ``--load-path`` is given (DI-engine's key: training resumes only from
``--load-path``, as DI-engine's training loads ``load_path`` only when a hook asks for it)."""

LEARNER_HOOK: dict[str, Any] = {
    "log_show_after_iter": count(100),  # train iterations between logged statistics
    "save_ckpt_after_iter": count(10000),  # train iterations between ckpt/iteration_<N> checkpoints
    "save_ckpt_after_run": True,  # a checkpoint at the end of the run
    "save_ckpt_after_minutes": optional(positive()),  # also ckpt/iteration_<N> every that many minutes of wall time
}
"""``policy.learn.learner.hook``: when the learner logs and saves checkpoints."""

EVALUATOR: dict[str, Any] = {
    "eval_freq": count(1000),  # train iterations between evaluations
    # the env steps an evaluation episode may take before the evaluation fails, naming the env (None: unbounded)
    "fail_after_episode_steps": optional(count(), note="None: unbounded"),
}
"""``policy.eval.evaluator``: how often to evaluate, and the bound on an evaluation episode's steps."""

REPLAY_BUFFER: dict[str, Any] = {
    "replay_buffer_size": count(10000),  # transitions the buffer keeps
    "share_frames": optional(bool),  # store each frame of frame-stack observations once (None: when the spec stacks)
    "save_in_checkpoint": False,  # ckpt/iteration_<N> holds the buffer, and resuming from it restores the buffer
}
"""``policy.other.replay_buffer`` of the off-policy policies."""


PRIORITY_KEYS: dict[str, Any] = {
    "alpha": unit(0.6, note="how much priorities count: 0 samples uniformly, 1 in proportion to them"),
    "beta": unit(0.4, note="how much importance-sampling weights correct: 0 not at all, 1 fully"),
    "anneal_step": count(100000, low=0, note="batches over which beta rises to 1; 0: beta stays"),
}
"""``policy.other.replay_buffer`` keys of prioritized replay (``policy.priority``), with DI-engine's defaults; the
policies that have prioritized replay (DQN, C51, QR-DQN) add them to their replay buffer section."""

NO_PRIORITY = "prioritized replay is for the DQN family: dqn, c51, qrdqn"
"""Why the other policies take ``priority`` and ``priority_IS_weight`` False only."""


def learner_section(log_show_after_iter: int = 100) -> dict[str, Any]:
    """The ``learn.learner`` section, logging every ``log_show_after_iter`` train iterations."""
    return {"learner": {"hook": redeclare(LEARNER_HOOK, {"log_show_after_iter": log_show_after_iter})}}


def evaluator_section(eval_freq: int) -> dict[str, Any]:
    """The ``eval`` section, evaluating every ``eval_freq`` train iterations."""
    return {"evaluator": redeclare(EVALUATOR, {"eval_freq": eval_freq})}


def replay_buffer_section(replay_buffer_size: int) -> dict[str, Any]:
    """The ``other.replay_buffer`` section, keeping ``replay_buffer_size`` transitions."""
    return redeclare(REPLAY_BUFFER, {"replay_buffer_size": replay_buffer_size})


def with_common_defaults(defaults: dict[str, Any]) -> dict[str, Any]:
    """``defaults`` with the plain defaults of :data:`COMMON_CONFIG` added where missing.

    >>> with_common_defaults({'cuda': False})
    {'cuda': False, 'load_path': None}
    """
    return {**defaults, **plain_defaults(common_declarations(defaults))}


def common_declarations(declared: Mapping[str, Any]) -> dict[str, Any]:
    """The declarations of :data:`COMMON_CONFIG` a (declared) policy config does not have itself."""
    return {key: value for key, value in COMMON_CONFIG.items() if key not in declared}
