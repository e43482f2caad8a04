"""Manager kinds the env manager tests run against, and a factory that closes what it builds.

Kinds: ``base`` (in-process), ``subprocess-1`` / ``subprocess-2`` (one or two envs per worker),
``async`` (``wait_num`` = every env and no wait timeout, so every step returns a full batch), and
``spawn`` (subprocess with the ``spawn`` start method; slow to start, so only a few tests use it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from ding.envs.env_manager import BaseEnvManager, create_env_manager

KIND_CONFIGS: dict[str, dict[str, Any]] = {
    "base": {"type": "base"},
    "subprocess-1": {"type": "subprocess", "envs_per_worker": 1},
    "subprocess-2": {"type": "subprocess", "envs_per_worker": 2},
    "async": {"type": "async_subprocess", "step_wait_timeout": None},
    "spawn": {"type": "subprocess", "context": "spawn"},
}
FAST_KINDS = ("base", "subprocess-1", "subprocess-2", "async")
"""Kinds every test runs against (``spawn`` is chosen explicitly where it is worth its start-up time)."""
SUBPROCESS_KINDS = ("subprocess-1", "subprocess-2", "async")

MakeManager = Callable[..., BaseEnvManager]


def make_manager(kind: str, env_fns: Sequence[Callable[[], Any]], **cfg: Any) -> BaseEnvManager:
    """Build a manager of ``kind`` over ``env_fns``; ``cfg`` overrides or extends the kind's config."""
    if kind not in KIND_CONFIGS:
        raise ValueError(f"unknown manager kind {kind!r}; kinds: {', '.join(KIND_CONFIGS)}")
    merged = dict(KIND_CONFIGS[kind])
    if merged["type"] == "async_subprocess":
        merged["wait_num"] = len(env_fns)
    merged.update(cfg)
    return create_env_manager(merged, list(env_fns))


@pytest.fixture(params=FAST_KINDS)
def manager_kind(request: pytest.FixtureRequest) -> str:
    """Each fast manager kind in turn."""
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
