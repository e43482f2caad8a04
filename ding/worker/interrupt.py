"""Stopping a training run on SIGINT or SIGTERM: the signal becomes an exception the run's loop handles.

``Ctrl-C`` (SIGINT) and the SIGTERM that ``timeout``, Slurm and Kubernetes send are both raised in the
main thread as :class:`RunInterrupted` (a ``KeyboardInterrupt``), so the run saves a checkpoint, closes its
env managers and reports how it ended; a process stopped by a signal exits with ``128 + signum``
(130 for SIGINT, 143 for SIGTERM). While :func:`stop_on_signals` is active:

- the first signal is raised at once, except inside a :func:`critical_section` (an update of the model,
  a push into the replay buffer, a checkpoint being written), where it is raised when the section ends,
  so a checkpoint never holds a half-applied update or a half-written buffer;
- later signals are ignored while the run saves and closes (``SIGKILL`` still stops it at once);
- when it ends, the handlers that were installed before are restored.

Handlers can only be installed in the main thread: elsewhere :func:`stop_on_signals` changes nothing.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType, TracebackType
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def exit_status(signum: int) -> int:
    """The exit status of a process that stopped on ``signum``, as shells report it.

    >>> exit_status(signal.SIGINT), exit_status(signal.SIGTERM)
    (130, 143)
    """
    return 128 + int(signum)


class RunInterrupted(KeyboardInterrupt):
    """A training run was asked to stop by a signal (``signum``)."""

    def __init__(self, signum: int) -> None:
        self.signum = int(signum)
        super().__init__(f"stopped by {self.signal_name}")

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        return exit_status(self.signum)


def signal_of(err: BaseException) -> int:
    """The signal behind an interruption: ``err.signum`` for :class:`RunInterrupted`, SIGINT for a plain Ctrl-C."""
    return err.signum if isinstance(err, RunInterrupted) else int(signal.SIGINT)


class _State:
    """Process-wide: whether handlers are installed, the nesting of critical sections, a signal held back."""

    def __init__(self) -> None:
        self.active = 0
        self.depth = 0
        self.pending: int | None = None
        self.fired = False


_STATE = _State()


def _handle(signum: int, frame: FrameType | None) -> None:
    if _STATE.fired:  # the run is already stopping: let it save and close
        return
    if _STATE.depth > 0:
        _STATE.pending = signum
        return
    _STATE.fired = True
    raise RunInterrupted(signum)


class critical_section:  # lower case: used like a function, ``with critical_section():``
    """A block a stop signal does not cut: a signal arriving inside is raised when the outermost block ends.

    Example:
        >>> with critical_section():
        ...     pass
    """

    __slots__ = ()

    def __enter__(self) -> None:
        _STATE.depth += 1

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        _STATE.depth -= 1
        if _STATE.depth == 0 and _STATE.pending is not None and not _STATE.fired:
            signum, _STATE.pending = _STATE.pending, None
            _STATE.fired = True
            if exc_type is None:  # an exception already on its way wins; the run is stopping either way
                raise RunInterrupted(signum)


@contextlib.contextmanager
def stop_on_signals(signals: tuple[int, ...] = STOP_SIGNALS) -> Iterator[bool]:
    """Raise :class:`RunInterrupted` in the main thread on ``signals`` during the block; yield whether installed.

    Nested uses keep the outer handlers. Off the main thread nothing is installed (signals are delivered to
    the main thread only).

    Example:
        >>> before = signal.getsignal(signal.SIGTERM)
        >>> with stop_on_signals() as installed:
        ...     signal.getsignal(signal.SIGTERM) is not before
        True
        >>> signal.getsignal(signal.SIGTERM) is before
        True
    """
    if threading.current_thread() is not threading.main_thread():
        yield False
        return
    if _STATE.active:
        _STATE.active += 1
        try:
            yield True
        finally:
            _STATE.active -= 1
        return
    previous: dict[int, Any] = {}
    try:
        for signum in signals:
            previous[signum] = signal.signal(signum, _handle)
        _STATE.active, _STATE.depth, _STATE.pending, _STATE.fired = 1, 0, None, False
        yield True
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)  # None: set outside Python
        _STATE.active, _STATE.depth, _STATE.pending, _STATE.fired = 0, 0, None, False
