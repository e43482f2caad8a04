"""An env that steps a batch natively (``batched=True``) is refused by every manager kind, naming it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from ding.errors import EnvManagerError, EnvSpecError
from tests.envs.env_manager.conftest import MakeManager
from tests.envs.env_manager.fault_envs import FaultyEnv


class FourAtOnceEnv(FaultyEnv):
    """A stand-in for a simulator that steps four sub-envs per call."""

    batched: ClassVar[bool] = True
    batch_size: ClassVar[int | None] = 4

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg)


def test_a_batched_env_is_refused_with_what_to_do(manager_kind: str, new_manager: MakeManager) -> None:
    manager = new_manager(manager_kind, [FourAtOnceEnv, FourAtOnceEnv])
    with pytest.raises((EnvSpecError, EnvManagerError), match=r"FourAtOnceEnv\) steps a batch of 4 sub-envs natively"):
        manager.launch()
    assert manager.closed
