"""A fault soak of a manager: many batches, with worker kills, hangs and env exceptions on a fixed schedule.

:class:`SoakEnv` observes ``[env index, episode id, step index]``: every episode gets an id no other episode has,
and a fault schedule fires in chosen steps of each instance (an exception, a hang past ``step_timeout``, or the
worker's process exiting; in the trainer's own process an exit becomes an exception). :class:`Ledger` follows
what the caller sees, step by step, and records every violation of exactly-once delivery:

- a delivered step is the next one of its env's episode (same env, same episode, step index + 1), or an abnormal
  end of it; an episode that ended (normally or not) is followed by a fresh one at step 0;
- the observation an action is taken on is the one the last delivered step left (no episode cut or replaced
  silently);
- every action taken is delivered once: none lost, none twice.

:func:`soak` drives a manager through one of its APIs (``step``, ``step_batch``, ``send`` / ``recv``, the
``V2`` list API), closes it and checks that nothing is left: no worker process alive, no child process of the
test, no shared-memory segment of this process.
"""

from __future__ import annotations

import dataclasses
import multiprocessing.resource_tracker
import os
import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from bench.measure import is_alive, shm_entries
from ding.envs import BaseEnv, BaseEnvTimestep, EnvSpaces
from ding.envs.env_manager import BaseEnvManager, create_env_manager
from ding.utils.measure import children_of

FAULTS = ("raise", "hang", "exit")


class SoakFault(RuntimeError):
    """The exception a SoakEnv raises on schedule."""


class SoakEnv(BaseEnv):
    """Episodes of ``episode_len`` steps observed as ``[env_index, episode id, step]`` (float64, exact).

    Faults fire at instance steps ``offset + k * period`` (k = 0, 1, ...), of kind ``FAULTS[(first + k) % 3]``;
    ``period`` None: none. An instance rebuilt after a fault starts counting again.
    """

    config: ClassVar[dict[str, Any]] = {
        "env_index": 0,
        "episode_len": 17,
        "period": None,
        "offset": 10,
        "first": 0,
        "hang_seconds": 0.6,
        "trainer_pid": 0,  # an exit in this process (base, thread, the caller's group) raises instead
    }

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        return EnvSpaces(spaces.Box(-np.inf, np.inf, (3,), np.float64), spaces.Discrete(2))

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg)
        self.steps = 0  # over this instance's life
        self.episode = 0.0
        self.t = 0

    def _obs(self) -> np.ndarray:
        return np.array([self._cfg.env_index, self.episode, self.t], dtype=np.float64)

    def reset(self) -> np.ndarray:
        self.episode = float(int.from_bytes(os.urandom(6), "big"))  # 48 bits: exact in float64, never repeated
        self.t = 0
        return self._obs()

    def step(self, action: Any) -> BaseEnvTimestep:
        self.steps += 1
        self.t += 1
        self._fault()
        done = self.t >= self._cfg.episode_len
        return BaseEnvTimestep(self._obs(), np.ones(1, np.float32), done, {"t": self.t})

    def _fault(self) -> None:
        cfg = self._cfg
        if cfg.period is None or self.steps < cfg.offset or (self.steps - cfg.offset) % cfg.period:
            return
        kind = FAULTS[(cfg.first + (self.steps - cfg.offset) // cfg.period) % len(FAULTS)]
        if kind == "hang":
            time.sleep(cfg.hang_seconds)  # then the step goes on: a thread given up on wakes up
        elif kind == "exit" and os.getpid() != cfg.trainer_pid:
            os._exit(3)
        else:
            raise SoakFault(f"scheduled {kind} at step {self.steps} of env {cfg.env_index}")

    def close(self) -> None:
        pass


NEW = None
"""A ledger entry waiting for a fresh episode."""


@dataclasses.dataclass
class Ledger:
    """What each env's caller has seen; ``violations`` lists every breach of exactly-once delivery."""

    env_num: int
    position: list[tuple[float, int] | None] = dataclasses.field(init=False)  # (episode, step) or NEW
    outstanding: list[bool] = dataclasses.field(init=False)
    episodes: set[float] = dataclasses.field(default_factory=set)
    violations: list[str] = dataclasses.field(default_factory=list)
    delivered_steps: int = 0
    abnormal: int = 0

    def __post_init__(self) -> None:
        self.position = [NEW] * self.env_num
        self.outstanding = [False] * self.env_num

    def ready(self, env_id: int, obs: Any) -> None:
        """``obs`` is what env ``env_id`` is about to be acted on."""
        index, episode, t = (float(x) for x in np.asarray(obs).reshape(-1))
        position = self.position[env_id]
        if index != env_id:
            self.violations.append(f"env {env_id} is about to act on env {index:.0f}'s observation")
        elif position is NEW:
            if t != 0 or episode in self.episodes:
                self.violations.append(f"env {env_id} starts episode {episode:.0f} at step {t:.0f}, not a new one")
            self.episodes.add(episode)
            self.position[env_id] = (episode, 0)
        elif (episode, t) != position:
            self.violations.append(
                f"env {env_id} is about to act on ({episode:.0f}, step {t:.0f}), but its last step left "
                f"({position[0]:.0f}, step {position[1]})"
            )

    def acted(self, env_id: int) -> None:
        if self.outstanding[env_id]:
            self.violations.append(f"env {env_id} was acted on twice without a result between")
        self.outstanding[env_id] = True

    def delivered(self, env_id: int, obs: Any, done: bool, abnormal: bool) -> None:
        """A step result of env ``env_id``: ``obs`` is the step's own (the final one when ``done``)."""
        if not self.outstanding[env_id]:
            self.violations.append(f"env {env_id} delivered a step it was not sent (a duplicate)")
            return
        self.outstanding[env_id] = False
        self.delivered_steps += 1
        position = self.position[env_id]
        self.position[env_id] = NEW
        if abnormal:
            self.abnormal += 1
            return
        index, episode, t = (float(x) for x in np.asarray(obs).reshape(-1))
        if position is NEW:
            self.violations.append(f"env {env_id} delivered a step of no episode it started")
        elif (index, episode, t) != (env_id, position[0], position[1] + 1):
            self.violations.append(
                f"env {env_id} delivered (env {index:.0f}, {episode:.0f}, step {t:.0f}) with no abnormal flag; "
                f"next was ({position[0]:.0f}, step {position[1] + 1})"
            )
        elif not done:
            self.position[env_id] = (episode, int(t))

    def lost(self) -> list[int]:
        return [i for i, out in enumerate(self.outstanding) if out]


# ----- drivers: one per API -----------------------------------------------------------------------------------------
def _abnormal(info: Mapping[str, Any]) -> bool:
    return bool(info.get("abnormal", False))


def drive_step(manager: Any, ledger: Ledger, batches: int) -> None:
    manager.launch()
    for _ in range(batches):
        ids = manager.ready_obs_id
        ready = manager.ready_obs
        for env_id in ids:
            ledger.ready(env_id, ready[env_id])
            ledger.acted(env_id)
        for env_id, timestep in manager.step({i: 0 for i in ids}).items():
            ledger.delivered(env_id, timestep.obs, timestep.done, _abnormal(timestep.info))
    while getattr(manager, "in_flight_env_ids", None):
        for env_id, timestep in manager.step({}).items():
            ledger.delivered(env_id, timestep.obs, timestep.done, _abnormal(timestep.info))


def drive_step_batch(manager: Any, ledger: Ledger, batches: int) -> None:
    manager.launch()
    for _ in range(batches):
        ready = manager.ready_obs
        for env_id in range(ledger.env_num):
            ledger.ready(env_id, ready[env_id])
            ledger.acted(env_id)
        batch = manager.step_batch(np.zeros(ledger.env_num, dtype=np.int64))
        for row, env_id in enumerate(batch.env_ids.tolist()):
            done = bool(batch.done[row])
            obs = batch.final_obs[env_id] if done else batch.obs[row]
            ledger.delivered(env_id, obs, done, _abnormal(batch.info[row]))


def drive_send_recv(manager: Any, ledger: Ledger, batches: int) -> None:
    manager.async_reset()
    for turn in range(batches + 1):
        batch = manager.recv()
        ids = batch.env_ids.tolist()
        for row, env_id in enumerate(ids):
            if ledger.outstanding[env_id]:  # else: a first observation after async_reset
                done = bool(batch.done[row])
                obs = batch.final_obs[env_id] if done else batch.obs[row]
                ledger.delivered(env_id, obs, done, _abnormal(batch.info[row]))
        ready = manager.ready_obs
        acting = [i for i in ids if i in ready]
        for env_id in acting:
            ledger.ready(env_id, ready[env_id])
        if turn < batches and acting:
            for env_id in acting:
                ledger.acted(env_id)
            manager.send({i: 0 for i in acting})
    while any(ledger.outstanding):
        batch = manager.recv()
        for row, env_id in enumerate(batch.env_ids.tolist()):
            done = bool(batch.done[row])
            obs = batch.final_obs[env_id] if done else batch.obs[row]
            ledger.delivered(env_id, obs, done, _abnormal(batch.info[row]))


def drive_v2(manager: Any, ledger: Ledger, batches: int) -> None:
    manager.launch()
    for _ in range(batches):
        ids = manager.ready_obs_id
        stacked = manager.ready_obs
        for row, env_id in enumerate(ids):
            ledger.ready(env_id, stacked[row])
            ledger.acted(env_id)
        for timestep in manager.step([0] * len(ids)):
            ledger.delivered(int(timestep.env_id), timestep.obs, timestep.done, _abnormal(timestep.info))


DRIVERS: dict[str, Callable[[Any, Ledger, int], None]] = {
    "step": drive_step,
    "step_batch": drive_step_batch,
    "send_recv": drive_send_recv,
    "v2": drive_v2,
}


# ----- a soak -------------------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SoakKind:
    """A manager configuration under soak: its config, the API that drives it, its env count, spare envs."""

    cfg: dict[str, Any]
    api: str = "step"
    env_num: int = 4
    spare_envs: int = 0


@dataclasses.dataclass
class SoakResult:
    ledger: Ledger
    late_results: int
    worker_pids: set[int]
    left_processes: list[int]
    left_segments: list[str]
    seconds: float


def env_fns(kind: SoakKind, period: int | None, step_timeout: float) -> list[Any]:
    from functools import partial

    from ding.envs.builtin.spare_envs import with_spare_envs

    fns = []
    for i in range(kind.env_num):
        cfg = {
            "env_index": i,
            "period": period,
            # a rebuilt env (a restarted worker, a renewed env) counts its steps from 0 again, so the first fault
            # comes about ``period`` steps into each life: the faults stay about ``period`` steps apart
            "offset": 7 + 5 * i if period is None else max(7, period // 2) + 5 * i,
            "first": i,
            "hang_seconds": 2 * step_timeout,
            "trainer_pid": os.getpid(),
        }
        fn: Any = partial(SoakEnv, cfg=cfg)
        fns.append(with_spare_envs(fn, kind.spare_envs) if kind.spare_envs else fn)
    return fns


def _tracker_pid() -> int | None:
    tracker = multiprocessing.resource_tracker._resource_tracker  # type: ignore[attr-defined]
    return getattr(tracker, "_pid", None)


def soak(kind: SoakKind, batches: int, period: int | None, step_timeout: float = 0.25) -> SoakResult:
    """Drive ``kind`` for ``batches`` batches with faults every ``period`` steps of each env; close; look around."""
    before = set(children_of(os.getpid()))
    cfg = {"step_timeout": step_timeout, "reset_timeout": 10.0, "max_retry": 5, **kind.cfg}
    manager: BaseEnvManager = create_env_manager(cfg, env_fns(kind, period, step_timeout))
    ledger = Ledger(kind.env_num)
    start = time.monotonic()
    try:
        DRIVERS[kind.api](manager, ledger, batches)
        late = int(getattr(manager, "late_results", 0))
        workers = {p for p in getattr(manager, "worker_pids", []) if p}  # earlier ones were killed and reaped
    finally:
        manager.close()
    seconds = time.monotonic() - start
    deadline = time.monotonic() + 10.0
    tracker = _tracker_pid()
    left: list[int] = []
    while time.monotonic() < deadline:
        children = set(children_of(os.getpid())) - before - {tracker}
        left = sorted(p for p in children | workers if is_alive(p))
        if not left:
            break
        time.sleep(0.05)
    segments = shm_entries([f"ding_{os.getpid()}_"])
    return SoakResult(ledger, late, workers, left, segments, seconds)
