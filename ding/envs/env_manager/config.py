"""Declared default configs of the env managers, by ``env_manager.type``.

These are the keys ``compile_config`` accepts under ``env.manager``; an unknown key is an error.
"""

from __future__ import annotations

import copy
from typing import Any

from easydict import EasyDict

from ding.errors import UnknownNameError, unknown_name_message

_COMMON: dict[str, Any] = {
    "episode_num": float("inf"),
    "auto_reset": True,
    "max_retry": 1,
    "retry_type": "reset",
    "step_timeout": None,
    "reset_timeout": None,
    "copy_on_get": True,
    "shared_memory": False,
    "context": None,
    "wait_num": None,
    "step_wait_timeout": None,
    "envs_per_worker": 1,
}

_SUBPROCESS: dict[str, Any] = {
    **_COMMON,
    "shared_memory": True,
    "context": "fork",
    "step_timeout": 60.0,
    "reset_timeout": 60.0,
}

_RAY: dict[str, Any] = {
    **_COMMON,
    "step_timeout": 60.0,
    "reset_timeout": 60.0,
    "envs_per_worker": 4,
    "shared_memory": None,  # None: what the transport uses (True for "shm", False for "ray" and "zmq")
    "address": None,  # None: the Ray this process uses, else start a local one (or join RAY_ADDRESS)
    "num_cpus_per_worker": None,  # None: Ray's default for actors (placed on a CPU node, hold none while running)
    "resources_per_worker": {},  # extra Ray resources per actor, e.g. {"GPU": 0.25} or custom ones
    "max_restarts": -1,  # Ray restarts of a dead actor (-1: unlimited; max_retry still bounds the faults)
    "init_kwargs": {},  # keyword arguments of ray.init when the manager connects (num_cpus, runtime_env, ...)
    "transport": "ray",  # "ray": one Ray call per actor per batch; "zmq": actors connect back over zmq (steps skip
    # Ray); "shm": actors on this node step through shared memory, as subprocess workers do
    "endpoint": None,  # transport "zmq": None binds tcp on this node's Ray IP (127.0.0.1 alone); or "tcp://HOST:PORT"
    "heartbeat_interval": 1.0,  # transport "zmq": seconds between heartbeats, both ways
    "heartbeat_timeout": 5.0,  # transport "zmq": seconds of silence after which an actor's worker is dropped
    "max_message_bytes": 64 << 20,  # transport "zmq": larger messages are refused by the socket
}

_ZMQ: dict[str, Any] = {
    **_SUBPROCESS,
    "shared_memory": None,  # None: shared memory when every worker is local (no keys_dir), else in the messages
    "endpoint": "ipc",  # "ipc" (a private 0700 directory), "tcp" (127.0.0.1, a free port), "tcp://HOST:PORT", ...
    "keys_dir": None,  # None: ephemeral in-memory CURVE keys (local workers only); else `ding -m keygen DIR`
    "local_workers": None,  # workers started on this host; None: one per env group unless remote_workers is set
    "remote_workers": 0,  # workers launch() waits for, started with `ding -m worker --connect ... --keys DIR`
    "worker_wait_timeout": 60.0,  # seconds launch() waits for every worker to register
    "heartbeat_interval": 1.0,  # seconds between heartbeats, both ways
    "heartbeat_timeout": 5.0,  # seconds of silence after which a worker (or, for a worker, the manager) is gone
    "max_message_bytes": 64 << 20,  # larger messages are refused by the socket (the peer is disconnected)
}

MANAGER_DEFAULT_CONFIGS: dict[str, dict[str, Any]] = {
    "base": _COMMON,
    "subprocess": _SUBPROCESS,
    "async_subprocess": {**_SUBPROCESS, "wait_num": 2, "step_wait_timeout": 0.01},
    "ray": _RAY,
    "zmq": _ZMQ,
}


def manager_default_config(manager_type: str) -> EasyDict:
    """The declared default config of an env manager type, with ``type`` set.

    >>> manager_default_config('base').auto_reset
    True
    """
    if manager_type not in MANAGER_DEFAULT_CONFIGS:
        raise UnknownNameError(unknown_name_message("env manager", manager_type, MANAGER_DEFAULT_CONFIGS))
    return EasyDict({"type": manager_type, **copy.deepcopy(MANAGER_DEFAULT_CONFIGS[manager_type])})
