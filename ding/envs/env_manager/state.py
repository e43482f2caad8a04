"""The per-env state machine every env manager keeps."""

from __future__ import annotations

import enum


class EnvState(enum.Enum):
    """Where one env of a manager stands (DI-engine's states, by the same names).

    ``VOID`` (before ``launch`` and after ``close``) → ``INIT`` (built) → ``RESET`` → ``RUN`` ⇄ (step)
    ``RUN``. An episode end goes back to ``RESET`` (auto-reset) or waits in ``NEED_RESET`` for an
    explicit ``reset``; an env that has played ``episode_num`` episodes is ``DONE``; an env whose
    failures reached ``max_retry`` is ``ERROR`` until ``reset`` revives it.

    ``DONE_EPISODE`` and ``CLOSED`` are older names of ``NEED_RESET`` and ``VOID``:

    >>> EnvState.DONE_EPISODE is EnvState.NEED_RESET, EnvState.CLOSED is EnvState.VOID
    (True, True)
    """

    VOID = "void"
    INIT = "init"
    RESET = "reset"
    RUN = "run"
    NEED_RESET = "need_reset"
    DONE = "done"
    ERROR = "error"
    DONE_EPISODE = "need_reset"
    CLOSED = "void"
