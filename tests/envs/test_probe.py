"""``probe_spaces``: the ways building an env to read its spaces can fail, each named."""

from __future__ import annotations

import functools
import os
import threading
import time
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from ding.envs import BaseEnv, BaseEnvTimestep, EnvSpaces
from ding.envs.probe import probe_spaces, read_spaces
from ding.errors import EnvSpecError


class NoSpaces(BaseEnv):
    """Never states its spaces, not even after reset."""

    def __init__(self, cfg: Any = None) -> None:
        self.resets = 0

    def reset(self) -> Any:
        self.resets += 1
        return np.zeros(1, np.float32)

    def step(self, action: Any) -> BaseEnvTimestep:
        return BaseEnvTimestep(np.zeros(1, np.float32), np.zeros(1, np.float32), True, {})

    def close(self) -> None:
        pass


class PidSpaces(NoSpaces):
    """Its observation bound is the pid of the process that built it (to see where it was built)."""

    def __init__(self, cfg: Any = None) -> None:
        super().__init__(cfg)
        self.observation_space = spaces.Box(0.0, float(os.getpid()), (1,), np.float64)
        self.action_space = spaces.Discrete(2)


def test_spaces_never_known_are_named() -> None:
    env = NoSpaces()
    with pytest.raises(EnvSpecError, match=r"NoSpaces has no observation_space and action_space even after reset\(\)"):
        read_spaces(env)
    assert env.resets == 1


def test_the_env_is_built_in_a_child_unless_context_is_none() -> None:
    in_child, here = probe_spaces(PidSpaces), probe_spaces(PidSpaces, context=None)
    assert here == EnvSpaces(spaces.Box(0.0, float(os.getpid()), (1,), np.float64), spaces.Discrete(2))
    assert in_child.observation.high[0] != os.getpid() and in_child.action == spaces.Discrete(2)


def test_a_constructor_that_cannot_be_sent_is_named() -> None:
    lock = threading.Lock()
    with pytest.raises(EnvSpecError, match=r"cannot send .* to the process that probes its spaces: .*lock"):
        probe_spaces(lambda: (lock, PidSpaces())[1])


def test_a_child_that_dies_is_named_with_its_exit_code() -> None:
    with pytest.raises(EnvSpecError, match=r"the process probing the spaces of _exit died \(exit code 3\)"):
        probe_spaces(functools.partial(os._exit, 3))


def test_a_child_that_hangs_is_stopped() -> None:
    start = time.monotonic()
    with pytest.raises(EnvSpecError, match=r"probing the spaces of sleep took longer than 0\.5 s"):
        probe_spaces(functools.partial(time.sleep, 30), timeout=0.5)
    assert time.monotonic() - start < 10
