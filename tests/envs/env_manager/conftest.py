"""Manager kinds the env manager tests run against, and a factory that closes what it builds.

Kinds: ``base`` (in-process), ``subprocess-1`` / ``subprocess-2`` (one or two envs per worker), ``in-caller`` (two
envs per group, the calling process stepping group 0 itself), ``thread`` (one thread of this process per env),
``async`` (``wait_num`` = every env and no wait
timeout, so every step returns a full batch),
``spawn`` (subprocess with the ``spawn`` start method; slow to start, so only a few tests use it), and
``ray`` / ``ray-2`` (Ray actors with one or two envs each, stepped by Ray calls), ``ray-zmq`` (Ray actors
running zmq workers) and ``ray-shm`` (Ray actors on this node stepping through shared memory), on one local
Ray started once per session by the ``ray_cluster`` fixture (skipped when Ray is not installed), and ``zmq`` /
``zmq-tcp`` / ``zmq-2`` (zmq workers started by the manager over ipc, over tcp loopback, and with two envs per worker).

With ``DING_TEST_RAY_ADDRESS`` set, the ray kinds join that cluster instead of starting a local Ray, and with
``DING_TEST_RAY_RESOURCES`` (a JSON object) their actors ask for those resources, which places them on the nodes
that have them (``test_ray_netns.py`` runs the suites so, with the actors on another node).
``DING_TEST_MANAGER_KINDS`` (comma-separated kinds) limits the kinds tests run against.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from ding.envs.env_manager import BaseEnvManager, create_env_manager

KIND_CONFIGS: dict[str, dict[str, Any]] = {
    "base": {"type": "base"},
    "subprocess-1": {"type": "subprocess", "envs_per_worker": 1},
    "subprocess-2": {"type": "subprocess", "envs_per_worker": 2},
    "in-caller": {"type": "subprocess", "envs_per_worker": 2, "step_in_caller": True},
    "thread": {"type": "thread", "envs_per_worker": 1},
    "async": {"type": "async_subprocess", "step_wait_timeout": None},
    "spawn": {"type": "subprocess", "context": "spawn"},
    "ray": {"type": "ray", "envs_per_worker": 1},
    "ray-2": {"type": "ray", "envs_per_worker": 2},
    "ray-zmq": {"type": "ray", "transport": "zmq", "envs_per_worker": 1},
    "ray-shm": {"type": "ray", "transport": "shm", "envs_per_worker": 1},
    "zmq": {"type": "zmq", "envs_per_worker": 1},
    "zmq-tcp": {"type": "zmq", "envs_per_worker": 1, "endpoint": "tcp"},
    "zmq-2": {"type": "zmq", "envs_per_worker": 2},
}
FAST_KINDS = (
    "base",
    "subprocess-1",
    "subprocess-2",
    "in-caller",
    "thread",
    "async",
    "ray",
    "ray-zmq",
    "ray-shm",
    "zmq",
)
"""Kinds every test runs against (``spawn`` is chosen explicitly where it is worth its start-up time)."""
RAY_DEFAULT_SUITES = ("test_conformance",)
"""Suites that run against ``ray`` in the default run. A Ray actor takes 0.5-1 s to start on 2 cores, so the
other suites (bad input and layouts, handled before or apart from the actors) run against it with ``-m slow``."""
RAY_SUITE_KINDS = {"test_bad_input": ("ray",)}
"""Suites that run against some ray kinds only. Bad input is refused by manager code that the ray transports share
with ``ray``, ``zmq`` and ``subprocess`` (checked before any actor is involved), so one ray kind covers it."""
SUBPROCESS_KINDS = ("subprocess-1", "subprocess-2", "async")
IN_PROCESS_ENV_KINDS = ("base", "in-caller", "thread")
"""Kinds where env 0 lives in the calling process: tests of worker faults on env 0 (``with_workers``) leave them out."""
RAY_KINDS = ("ray", "ray-2", "ray-zmq", "ray-shm")

MakeManager = Callable[..., BaseEnvManager]
RAY_ADDRESS_VAR = "DING_TEST_RAY_ADDRESS"
"""The Ray cluster the ray kinds join (unset: a local Ray of this session)."""
RAY_RESOURCES_VAR = "DING_TEST_RAY_RESOURCES"
"""The resources (a JSON object) every actor of the ray kinds asks for (unset: none)."""
KINDS_VAR = "DING_TEST_MANAGER_KINDS"
"""The kinds (comma-separated) tests run against (unset: every kind a test takes)."""


REMOTE_EXIT_GRACE = 10.0
"""Seconds actor processes on other nodes may take to end after ``close``, which waits only for those on the
trainer's node: the raylet of their own node ends the others when Ray kills their actors."""


def exit_grace() -> float:
    """How long a test waits for a closed manager's worker processes to end: 0 (they are gone when ``close``
    returns) unless the ray kinds run on a cluster whose other nodes hold their actors."""
    return REMOTE_EXIT_GRACE if os.environ.get(RAY_ADDRESS_VAR) else 0.0


def ray_placement() -> dict[str, Any]:
    """The ray managers' placement keys the environment asks for (see the module docstring); {} by default."""
    resources = os.environ.get(RAY_RESOURCES_VAR)
    return {"resources_per_worker": json.loads(resources)} if resources else {}


def kind_config(kind: str, env_num: int, **cfg: Any) -> dict[str, Any]:
    """The manager config of ``kind`` for ``env_num`` envs (``type`` included), with ``cfg`` merged in."""
    if kind not in KIND_CONFIGS:
        raise ValueError(f"unknown manager kind {kind!r}; kinds: {', '.join(KIND_CONFIGS)}")
    merged = dict(KIND_CONFIGS[kind])
    if merged["type"] == "async_subprocess":
        merged["wait_num"] = env_num
    if merged["type"] == "ray":
        merged.update(ray_placement())
    merged.update(cfg)
    return merged


def make_manager(kind: str, env_fns: Sequence[Callable[[], Any]], **cfg: Any) -> BaseEnvManager:
    """Build a manager of ``kind`` over ``env_fns``; ``cfg`` overrides or extends the kind's config."""
    return create_env_manager(kind_config(kind, len(env_fns), **cfg), list(env_fns))


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[str]:
    """One local Ray (2 CPUs) shared by every ray test of the session, or the cluster ``DING_TEST_RAY_ADDRESS``
    names; yields its GCS address."""
    ray = pytest.importorskip("ray")
    started = not ray.is_initialized()
    address = os.environ.get(RAY_ADDRESS_VAR)
    if started and address:
        ray.init(address=address, log_to_driver=False)
    elif started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    if started:
        ray.shutdown()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``manager_kind`` over FAST_KINDS; ray kinds are slow outside RAY_DEFAULT_SUITES (some left out).

    A test marked ``with_workers`` runs only on the kinds whose env 0 lives in a worker process (not ``base``,
    ``in-caller`` and ``thread``).
    """
    if "manager_kind" not in metafunc.fixturenames:
        return
    suite = metafunc.module.__name__.rsplit(".", 1)[-1]
    slow = [pytest.mark.slow] if suite not in RAY_DEFAULT_SUITES else []
    ray_kinds = RAY_SUITE_KINDS.get(suite, RAY_KINDS)
    workers_only = metafunc.definition.get_closest_marker("with_workers") is not None
    chosen = os.environ.get(KINDS_VAR)
    allowed = set(chosen.split(",")) if chosen else set(KIND_CONFIGS)
    kinds = [
        pytest.param(kind, marks=slow if kind in RAY_KINDS else [])
        for kind in FAST_KINDS
        if (kind not in RAY_KINDS or kind in ray_kinds)
        and not (workers_only and kind in IN_PROCESS_ENV_KINDS)
        and kind in allowed
    ]
    metafunc.parametrize("manager_kind", kinds, indirect=True)


@pytest.fixture
def manager_kind(request: pytest.FixtureRequest) -> str:
    """Each fast manager kind in turn (ray kinds start the session's Ray, or skip without Ray)."""
    if request.param in RAY_KINDS:
        request.getfixturevalue("ray_cluster")
    return str(request.param)


@pytest.fixture
def new_manager() -> Iterator[MakeManager]:
    """``new_manager(kind, env_fns, **cfg)``: :func:`make_manager`, closing every manager at teardown."""
    built: list[BaseEnvManager] = []

    def build(kind: str, env_fns: Sequence[Callable[[], Any]], **cfg: Any) -> BaseEnvManager:
        manager = make_manager(kind, env_fns, **cfg)
        built.append(manager)
        return manager

    yield build
    for manager in built:
        manager.close()
