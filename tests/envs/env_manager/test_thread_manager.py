"""The ``thread`` manager beyond the shared suites (where it is the ``thread`` kind), and ``start_serially``."""

from __future__ import annotations

import functools
import itertools
import json
import pathlib
import threading
import time
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from ding.envs.env_manager import ThreadEnvManager, create_env_manager
from ding.errors import ConfigError
from tests.envs.env_manager.fault_envs import FaultyEnv


def test_a_hung_step_ends_the_episode_and_a_new_thread_takes_the_group(tmp_path: pathlib.Path) -> None:
    cfg = {"fault": "hang", "at_step": 2, "once_path": str(tmp_path / "fired"), "episode_len": 50}
    manager = ThreadEnvManager([functools.partial(FaultyEnv, cfg=cfg) for _ in range(2)], {"step_timeout": 0.5})
    manager.launch()
    try:
        manager.step({0: 0, 1: 0})
        threads_before = {t.ident for t in threading.enumerate()}
        timesteps = manager.step({0: 0, 1: 0})
        hung = [i for i, ts in timesteps.items() if ts.info.get("abnormal")]
        assert len(hung) == 1 and "did not answer within 0.5 s" in timesteps[hung[0]].info["error"]
        fresh = manager.step({0: 0, 1: 0})
        assert not any(ts.info.get("abnormal") for ts in fresh.values())
        assert fresh[hung[0]].obs[0] == 1  # the renewed env's first step
        new_threads = {t.ident for t in threading.enumerate()} - threads_before
        assert new_threads  # the group got a new thread; the stuck one is abandoned as a daemon
    finally:
        manager.close()
    alive = [t for t in threading.enumerate() if t.name.startswith("ding-env-thread") and not t.daemon]
    assert alive == []


def test_context_is_refused() -> None:
    with pytest.raises(ConfigError, match="the thread manager starts no processes"):
        ThreadEnvManager([functools.partial(FaultyEnv, cfg={})], {"context": "spawn"})


class SlowBuildEnv(FaultyEnv):
    """Records when its construction started and ended (in a file), taking 0.3 s to build."""

    config: ClassVar[dict[str, Any]] = {**FaultyEnv.config, "log": ""}

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        started = time.time()
        time.sleep(0.3)
        super().__init__(cfg)
        with open(self._cfg.log, "a", encoding="utf-8") as log:
            log.write(json.dumps([started, time.time()]) + "\n")


def build_intervals(tmp_path: pathlib.Path, kind: str, serially: bool) -> list[list[float]]:
    log = tmp_path / f"{kind}-{serially}.log"
    fns = [functools.partial(SlowBuildEnv, cfg={"log": str(log)}) for _ in range(3)]
    manager = create_env_manager({"type": kind, "start_serially": serially}, fns)
    manager.launch()
    manager.close()
    return sorted(json.loads(line) for line in log.read_text().splitlines())


@pytest.mark.parametrize("kind", ["subprocess", "thread"])
def test_start_serially_builds_one_worker_after_another(tmp_path: pathlib.Path, kind: str) -> None:
    serial = build_intervals(tmp_path, kind, serially=True)
    assert len(serial) == 3
    assert all(earlier[1] <= later[0] for earlier, later in itertools.pairwise(serial))
    parallel = build_intervals(tmp_path, kind, serially=False)
    assert any(earlier[1] > later[0] for earlier, later in itertools.pairwise(parallel))


def test_start_serially_must_be_a_bool() -> None:
    with pytest.raises(ConfigError, match=r"env\.manager\.start_serially must be a bool, got 'yes'"):
        create_env_manager({"type": "subprocess", "start_serially": "yes"}, [functools.partial(FaultyEnv, cfg={})])
