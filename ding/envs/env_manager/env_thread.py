"""Calls with a time limit, for envs that run in the calling process.

:class:`EnvThread` runs one env's calls on a daemon thread and waits for each at most its timeout;
a call that overruns is abandoned with the thread (it finishes, or not, on its own and takes no more
work), so the caller can go on with a rebuilt env. :func:`timeout_wrapper` is DI-engine's decorator
of the same name, built on it.
"""

from __future__ import annotations

import functools
import itertools
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

R = TypeVar("R")
_names = itertools.count()


class CallTimeout(TimeoutError):
    """A call did not finish within its timeout; its thread was abandoned."""


class EnvThread:
    """A daemon thread that runs the calls given to :meth:`call`, one at a time.

    Example:
        >>> thread = EnvThread('env-0')
        >>> thread.call(lambda: 1 + 1, timeout=1.0)
        2
        >>> thread.stop()
    """

    def __init__(self, name: str) -> None:
        self._queue: queue.SimpleQueue[tuple[Callable[[], Any], list[Any], threading.Event] | None] = (
            queue.SimpleQueue()
        )
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def call(self, fn: Callable[[], R], timeout: float | None) -> R:
        """Run ``fn`` on the thread and return its result (or raise its exception).

        Raises :class:`CallTimeout` when ``fn`` has not finished within ``timeout`` seconds (None: no
        limit); the thread is then stopped once ``fn`` returns, and takes no further calls.
        """
        box: list[Any] = []
        finished = threading.Event()
        self._queue.put((fn, box, finished))
        if not finished.wait(timeout):
            self.stop()
            raise CallTimeout(f"the call did not finish within {timeout} s")
        ok, value = box[0]
        if ok:
            return value  # type: ignore[no-any-return]
        raise value

    def stop(self) -> None:
        """Let the thread end after the call it is running (if any)."""
        self._queue.put(None)

    def _serve(self) -> None:
        while (item := self._queue.get()) is not None:
            fn, box, finished = item
            try:
                box.append((True, fn()))
            except BaseException as exc:  # handed to the caller with its traceback
                box.append((False, exc))
            finished.set()


def call_with_timeout(fn: Callable[[], R], timeout: float | None) -> R:
    """Run ``fn`` on a fresh daemon thread, waiting at most ``timeout`` seconds (None: direct call).

    >>> call_with_timeout(lambda: 'done', 1.0)
    'done'
    """
    if timeout is None:
        return fn()
    thread = EnvThread(f"ding-timeout-{next(_names)}")
    try:
        return thread.call(fn, timeout)
    finally:
        thread.stop()


def timeout_wrapper(func: Callable[..., R] | None = None, timeout: float | None = None) -> Any:
    """DI-engine's decorator: calls of ``func`` raise :class:`TimeoutError` past ``timeout`` seconds.

    Without a timeout ``func`` is returned unchanged. Unlike DI-engine's (a SIGALRM watchdog) the
    call runs on a daemon thread, so it works off the main thread; an overrun call is abandoned.

    >>> @timeout_wrapper(timeout=1.0)
    ... def add(a, b):
    ...     return a + b
    >>> add(1, 2)
    3
    """
    if func is None:
        return functools.partial(timeout_wrapper, timeout=timeout)
    if timeout is None:
        return func
    limit = timeout

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> R:
        return call_with_timeout(lambda: func(*args, **kwargs), limit)

    return wrapper
