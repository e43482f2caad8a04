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


class HeldEnv(FaultyEnv):
    """The first instance's third step waits for ``RELEASE`` (past any ``step_timeout``), then reports ``MARK``."""

    RELEASE: ClassVar[threading.Event] = threading.Event()
    RETURNED: ClassVar[threading.Event] = threading.Event()
    MARK = -777.0
    built = 0

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg)
        HeldEnv.built += 1
        self.held = HeldEnv.built == 1

    def step(self, action: Any) -> Any:
        timestep = super().step(action)
        if not self.held or self.total_steps != 3:
            return timestep
        self.RELEASE.wait(30.0)
        obs = timestep.obs.copy()
        obs[:] = self.MARK
        HeldEnv.RETURNED.set()
        return timestep._replace(obs=obs, done=True, info={"eval_episode_return": obs[:1]})


def test_a_thread_given_up_on_cannot_write_the_rows_its_successor_uses() -> None:
    HeldEnv.built = 0
    HeldEnv.RELEASE.clear()
    HeldEnv.RETURNED.clear()
    fns = [functools.partial(HeldEnv, cfg={"episode_len": 100}) for _ in range(2)]
    manager = ThreadEnvManager(fns, {"step_timeout": 0.3, "envs_per_worker": 2})
    manager.launch()
    try:
        for _ in range(2):
            manager.step({0: 0, 1: 0})
        old = manager.channel.groups[0].thread  # type: ignore[attr-defined]
        timesteps = manager.step({0: 0, 1: 0})  # env 0's step hangs: the group's thread is given up on
        assert all(ts.info.get("abnormal") for ts in timesteps.values())
        manager.step({0: 0, 1: 0})  # the new thread's envs step in the same rows
        HeldEnv.RELEASE.set()  # the old thread's step returns at last: it writes its results, steps env 1, replies
        old.join(10.0)
        assert HeldEnv.RETURNED.is_set() and not old.is_alive()
        rows = manager.ready_obs_batch().obs
        assert HeldEnv.MARK not in rows and [float(rows[i][0]) for i in (0, 1)] == [1.0, 1.0]
        assert manager.late_results == 0
        for t in range(2, 6):
            fresh = manager.step({0: 0, 1: 0})
            assert [float(fresh[i].obs[0]) for i in (0, 1)] == [t, t] and not any(ts.done for ts in fresh.values())
        assert manager.late_results == 1  # its reply came, late: dropped and counted
    finally:
        HeldEnv.RELEASE.set()
        manager.close()
