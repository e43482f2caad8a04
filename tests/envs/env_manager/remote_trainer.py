"""The trainer side of the multi-node Ray tests: run inside the head node's namespace, it reports as JSON lines.

``python -m tests.envs.env_manager.remote_trainer place ADDRESS TRANSPORT RESOURCE``: a ray manager whose actors ask
for ``RESOURCE`` plays the same trajectories as the base manager; prints the actors' pids.

``... shm ADDRESS RESOURCE``: the ``shm`` transport asked for actors that only another node can take; prints the error.

``... lose ADDRESS TRANSPORT RESOURCE``: steps envs whose actors ask for ``RESOURCE`` until a node is lost under them
(the test kills it) and every env has run ``AFTER`` steps past the loss; checks that each step arrives exactly once
and prints the lost episodes' errors and the new pids, or the error the manager raised.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from ding.envs.env_manager import BaseEnvManager, create_env_manager
from ding.errors import DingError
from tests.envs.env_manager.envs import DictObsEnv, assert_same_trajectories, play, table_policy
from tests.envs.env_manager.fault_envs import FaultyEnv

ENVS = 4
AFTER = 20
"""Steps every env must take after its episode was lost, on its new actor."""
DEADLINE = 150.0


def emit(event: str, **fields: Any) -> None:
    print(json.dumps({"event": event, **fields}), flush=True)


def namespaces(pids: list[int | None]) -> list[str]:
    """The network namespace each process runs in (on this machine the nodes' namespaces tell the nodes apart)."""
    found = [subprocess.run(["ip", "netns", "identify", str(pid)], capture_output=True, text=True) for pid in pids]
    return [result.stdout.strip() for result in found]


def remote_config(address: str, transport: str, resource: str, **cfg: Any) -> dict[str, Any]:
    """A ray manager on the cluster at ``address`` whose actors go where ``resource`` is."""
    return {
        "type": "ray",
        "transport": transport,
        "address": address,
        "envs_per_worker": 2,
        "num_cpus_per_worker": 0,  # the resource alone places the actors (an actor of Ray's default holds a CPU)
        "resources_per_worker": {resource: 1},
        **cfg,
    }


def place(address: str, transport: str, resource: str) -> None:
    env_fns = [partial(DictObsEnv, cfg={})] * ENVS
    with create_env_manager({"type": "base", "episode_num": 2}, env_fns) as base:
        base.seed(3)
        base.launch()
        expected = play(base, table_policy(3))
    with create_env_manager(remote_config(address, transport, resource, episode_num=2), env_fns) as manager:
        manager.seed(3)
        manager.launch()
        assert_same_trajectories(play(manager, table_policy(3)), expected)
        pids = manager.worker_pids
        emit("played", namespaces=namespaces(pids), endpoint=getattr(manager, "endpoint", None))


def shm(address: str, resource: str) -> None:
    manager = create_env_manager(remote_config(address, "shm", resource, connect_timeout=60.0), [FaultyEnv] * 2)
    try:
        manager.launch()
    except DingError as err:
        emit("refused", type=type(err).__name__, message=str(err))
    else:
        emit("launched", pids=manager.worker_pids)
    finally:
        manager.close()


class StepLedger:
    """Per env: the step count it must show next, the lost episodes' errors, and any step out of order."""

    def __init__(self, manager: BaseEnvManager) -> None:
        self.next = {i: 1 for i in range(ENVS)}
        self.errors: dict[int, list[str]] = {i: [] for i in range(ENVS)}
        self.after = {i: 0 for i in range(ENVS)}
        self.violations: list[str] = []
        self.manager = manager

    def record(self, timesteps: dict[int, Any]) -> None:
        for env_id, ts in timesteps.items():
            if ts.info.get("abnormal"):
                self.errors[env_id].append(str(ts.info["error"]))
                self.next[env_id] = 1
                start = int(self.manager.ready_obs[env_id][0])
                if start != 0:
                    self.violations.append(f"env {env_id} restarted at step {start}, not 0")
                continue
            seen = int(ts.obs[0])
            if seen != self.next[env_id]:
                self.violations.append(f"env {env_id} delivered step {seen} where step {self.next[env_id]} was due")
            self.next[env_id] = seen + 1
            if self.errors[env_id]:
                self.after[env_id] += 1

    @property
    def recovered(self) -> bool:
        return all(count >= AFTER for count in self.after.values())


def lose(address: str, transport: str, resource: str) -> None:
    cfg = remote_config(address, transport, resource, max_retry=3, step_timeout=30.0, connect_timeout=15.0)
    with create_env_manager(cfg, [partial(FaultyEnv, cfg={"episode_len": 10**6})] * ENVS) as manager:
        manager.launch()
        emit("launched", namespaces=namespaces(manager.worker_pids))
        ledger = StepLedger(manager)
        deadline = time.monotonic() + DEADLINE
        try:
            while not ledger.recovered and time.monotonic() < deadline:
                ledger.record(manager.step({i: 0 for i in manager.ready_obs_id}))
                time.sleep(0.02)
        except DingError as err:
            emit("failed", type=type(err).__name__, message=str(err), errors=ledger.errors)
            return
        emit(
            "stepped",
            recovered=ledger.recovered,
            errors=ledger.errors,
            violations=ledger.violations,
            namespaces=namespaces(manager.worker_pids),
        )


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    commands: dict[str, Callable[..., None]] = {"place": place, "shm": shm, "lose": lose}
    commands[command](*args)
