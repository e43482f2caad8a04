"""The per-env state machine every env manager keeps."""

from __future__ import annotations

import enum


class EnvState(enum.Enum):
    """Where one env of a manager stands.

    ``VOID`` → (launch) ``INIT`` → (reset) ``RESET`` → ``RUN`` ⇄ (step) ``RUN``; an episode end goes
    to ``RESET`` (auto-reset) or waits in ``DONE_EPISODE`` for an explicit ``reset``; an env that
    has played ``episode_num`` episodes is ``DONE``; a fault past the retry budget is ``ERROR``;
    ``CLOSED`` after ``close``.
    """

    VOID = "void"
    INIT = "init"
    RESET = "reset"
    RUN = "run"
    DONE_EPISODE = "done_episode"
    DONE = "done"
    ERROR = "error"
    CLOSED = "closed"
