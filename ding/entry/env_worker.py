"""``ding -m worker`` and ``ding -m keygen``: a zmq env worker for another host, and the keys it needs."""

from __future__ import annotations

import logging
import sys
import threading
import time

from ding.envs.env_manager.channels.zmq.keys import generate_keys, load_worker_keys
from ding.envs.env_manager.channels.zmq.worker import WorkerOptions, serve
from ding.errors import ConfigError

DEFAULT_CONNECT_TIMEOUT = 60.0
"""Seconds a worker waits for a manager to welcome it, unless ``--manager-timeout`` says otherwise."""
WAIT_REPORT_EVERY = 5.0
"""Seconds between two "waiting for the manager" lines (at most; a quarter of a shorter timeout)."""
REGISTERED = "registered with the manager"
"""How the worker's log line starts once a manager has welcomed it."""

logger = logging.getLogger("ding.zmq.worker")


class WaitReport(logging.Handler):
    """Logs, every few seconds until a manager welcomes the worker, where it waits, for how long, and the timeout.

    It listens to the worker's log for the line saying it registered; it stops then, at the timeout (the
    worker says itself that it gives up), or when :meth:`stop` is called.
    """

    def __init__(self, endpoint: str, timeout: float) -> None:
        super().__init__(logging.INFO)
        self.endpoint, self.timeout = endpoint, timeout
        self.every = min(WAIT_REPORT_EVERY, max(0.5, timeout / 4))
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._report, name="ding-worker-wait-report", daemon=True)

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith(REGISTERED):
            self._done.set()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        self._thread.join()

    def _report(self) -> None:
        started = time.monotonic()
        while not self._done.wait(self.every):
            waited = time.monotonic() - started
            if waited >= self.timeout:
                return
            logger.info(
                "waiting for a manager at %s: %.1f s so far, giving up after %.1f s",
                self.endpoint,
                waited,
                self.timeout,
            )


def run_keygen(directory: str, name: str = "worker") -> str:
    """Create CURVE keys in ``directory`` (see :mod:`ding.envs.env_manager.channels.zmq.keys`); return a summary."""
    try:
        created = generate_keys(directory, name)
    except FileExistsError as err:
        raise ConfigError(str(err)) from None
    lines = [f"created {path}" for path in created]
    lines.append(
        f"manager: env.manager.keys_dir = {directory!r}; worker hosts need {directory}/server.key and "
        f"{directory}/{name}.key_secret (keep *.key_secret private)"
    )
    return "\n".join(lines)


def run_worker(
    connect: str,
    keys_dir: str,
    name: str = "worker",
    manager_timeout: float | None = None,
    connect_timeout: float | None = None,
) -> int:
    """Serve env groups for the manager at ``connect`` until it closes the worker or goes away.

    Until a manager welcomes it, the worker says every few seconds on stderr that it is waiting; it waits
    ``connect_timeout`` seconds (default: ``manager_timeout``, the longest it goes without a word from the
    manager, else 60). Returns the worker's exit status: 0 closed by the manager, 3 the manager went silent,
    4 no manager answered in time.
    """
    if not connect.startswith(("tcp://", "ipc://")):
        raise ConfigError(f"--connect must be tcp://HOST:PORT or ipc:///path, got {connect!r}")
    for label, value in (("--manager-timeout", manager_timeout), ("--connect-timeout", connect_timeout)):
        if value is not None and value <= 0:
            raise ConfigError(f"{label} must be a positive number of seconds, got {value!r}")
    if connect_timeout is None:
        connect_timeout = manager_timeout if manager_timeout is not None else DEFAULT_CONNECT_TIMEOUT
    keys = load_worker_keys(keys_dir, name)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    zmq_logger = logging.getLogger("ding.zmq")
    zmq_logger.addHandler(handler)
    zmq_logger.setLevel(logging.INFO)
    report = WaitReport(connect, connect_timeout)
    logger.addHandler(report)
    report.start()
    try:
        return serve(WorkerOptions(connect, keys, None, connect_timeout, manager_timeout))
    finally:
        report.stop()
        logger.removeHandler(report)
        zmq_logger.removeHandler(handler)
