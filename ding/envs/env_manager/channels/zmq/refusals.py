"""What a zmq manager turns away, counted by reason and address and logged a few lines at a time.

A port open to a network can be hammered: thousands of handshakes a second from peers without the keys, raw TCP
garbage, or a key holder sending nonsense. Every such event is counted by reason and by the address it came from
or reached (:attr:`CountedLog.counts`; ``ZmqEnvManager.refusals`` for monitoring). Only the first
``lines_per_interval`` events of each ``interval`` are logged one line each; the rest of the interval are summed up
in one line when it ends (counts by reason and address), and :meth:`CountedLog.close` logs the totals. A flood
therefore writes a few lines per interval, whatever its size.

>>> import logging
>>> log = CountedLog(logging.getLogger("doctest"), "refused connections", lines_per_interval=1)
>>> for _ in range(3):
...     log.count("handshake_failed", "tcp://127.0.0.1:5555", "refused a connection")
>>> log.counts
{'handshake_failed': 3}
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable

REPORT_INTERVAL = 10.0
"""Seconds over which at most :data:`LINES_PER_INTERVAL` events are logged one by one."""
LINES_PER_INTERVAL = 3

REFUSED_HANDSHAKE = "handshake_failed"
"""A connection whose security handshake failed: no CURVE, the wrong server key, or not ZMTP at all."""
REFUSED_KEY = "key_not_admitted"
"""A CURVE client key the manager does not admit."""
REFUSED_MESSAGE = "malformed_message"
"""A message from an authenticated peer that does not follow the wire format (or a malformed HELLO)."""
REFUSED_UNREGISTERED = "unregistered_peer"
"""A reply from an authenticated peer that never registered."""
REFUSED_REPLY = "undecodable_reply"
"""A registered worker's reply that is not data: the worker is dropped."""


class CountedLog:
    """Events counted by (reason, address) and logged at most a few lines per interval (see the module docstring).

    Safe to call from several threads (the ZAP authenticator's, the manager's, the hub's background thread).
    ``what`` names the events in summary lines ("refused connections and messages").
    """

    def __init__(
        self,
        logger: logging.Logger,
        what: str,
        level: int = logging.WARNING,
        interval: float = REPORT_INTERVAL,
        lines_per_interval: int = LINES_PER_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.logger, self.what, self.level = logger, what, level
        self.interval, self.lines_per_interval, self.clock = interval, lines_per_interval, clock
        self._lock = threading.Lock()
        self._totals: Counter[tuple[str, str]] = Counter()
        self._unlogged: Counter[tuple[str, str]] = Counter()  # this interval's events past its lines
        self._interval_end = clock() + interval
        self._lines_left = lines_per_interval

    @property
    def counts(self) -> dict[str, int]:
        """Events so far, by reason."""
        with self._lock:
            by_reason: Counter[str] = Counter()
            for (reason, _), count in self._totals.items():
                by_reason[reason] += count
            return dict(by_reason)

    @property
    def counts_by_address(self) -> dict[tuple[str, str], int]:
        """Events so far, by (reason, address)."""
        with self._lock:
            return dict(self._totals)

    def count(self, reason: str, address: str, line: str, *args: object) -> None:
        """One event: counted, and logged as ``line % args`` while the interval has lines left."""
        with self._lock:
            self._totals[reason, address] += 1
            summary = self._roll(self.clock())
            log_now = self._lines_left > 0
            if log_now:
                self._lines_left -= 1
            else:
                self._unlogged[reason, address] += 1
        if summary:
            self.logger.log(self.level, "%s", summary)
        if log_now:
            self.logger.log(self.level, line, *args)

    def flush(self) -> None:
        """Log the summary of an interval that has ended (call it now and then: the hub's background thread does)."""
        with self._lock:
            summary = self._roll(self.clock())
        if summary:
            self.logger.log(self.level, "%s", summary)

    def close(self) -> None:
        """Log what the current interval has not logged, then the totals (one line each, if any)."""
        with self._lock:
            pending = self._summary(self._unlogged, "more not logged")
            self._unlogged.clear()
            total = self._summary(self._totals, "in all")
        for line in (pending, total):
            if line:
                self.logger.log(self.level, "%s", line)

    def _roll(self, now: float) -> str:
        """Start a new interval if the current one has ended; the summary of its unlogged events (or '')."""
        if now < self._interval_end:
            return ""
        summary = self._summary(self._unlogged, f"more in the last {self.interval:g} s")
        self._unlogged.clear()
        self._interval_end = now + self.interval
        self._lines_left = self.lines_per_interval
        return summary

    def _summary(self, counts: Counter[tuple[str, str]], when: str) -> str:
        if not counts:
            return ""
        parts = [f"{reason} x{count:,} ({address})" for (reason, address), count in counts.most_common()]
        return f"{self.what}: {sum(counts.values()):,} {when} - " + "; ".join(parts)
