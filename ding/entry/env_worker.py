"""``ding -m worker`` and ``ding -m keygen``: a zmq env worker for another host, and the keys it needs."""

from __future__ import annotations

import logging
import sys

from ding.envs.env_manager.channels.zmq.keys import generate_keys, load_worker_keys
from ding.envs.env_manager.channels.zmq.worker import WorkerOptions, serve
from ding.errors import ConfigError


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
    connect_timeout: float = 60.0,
) -> int:
    """Serve env groups for the manager at ``connect`` until it closes the worker or goes away.

    Returns the worker's exit status: 0 closed by the manager, 3 the manager went silent, 4 no
    manager answered within ``connect_timeout``.
    """
    if not connect.startswith(("tcp://", "ipc://")):
        raise ConfigError(f"--connect must be tcp://HOST:PORT or ipc:///path, got {connect!r}")
    for label, value in (("--manager-timeout", manager_timeout), ("--connect-timeout", connect_timeout)):
        if value is not None and value <= 0:
            raise ConfigError(f"{label} must be a positive number of seconds, got {value!r}")
    keys = load_worker_keys(keys_dir, name)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logger = logging.getLogger("ding.zmq")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        return serve(WorkerOptions(connect, keys, None, connect_timeout, manager_timeout))
    finally:
        logger.removeHandler(handler)
