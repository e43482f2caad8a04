"""Test envs and drivers shared by the env manager tests.

- :class:`DictObsEnv`: a point moving on a plane, observed as ``{image (uint8 HWC scaled to float),
  state {pos, vel}}``, with spaces declared statically and a ``scaled_float_frame`` chain on the image.
- :class:`GuardedDictObsEnv`: the same env, whose constructor refuses to run in a given process.
- :class:`TupleObsEnv`: a plain ``BaseEnv`` with a ``(Box, Discrete)`` tuple observation.
- :func:`play`: drive a manager to ``done`` with a deterministic per-env action schedule and record
  every env's steps, so trajectories of different managers can be compared exactly.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.wrappers import TimeLimit

from ding.envs import BaseEnv, BaseEnvTimestep, DingEnvWrapper, EnvSpaces
from ding.envs.env_manager import BaseEnvManager

# ---------------------------------------------------------------------------------------------
# Envs
# ---------------------------------------------------------------------------------------------


def point_observation_space(height: int, width: int) -> spaces.Dict:
    """The raw observation space of :class:`PointGymEnv`."""
    return spaces.Dict(
        {
            "image": spaces.Box(0, 255, (height, width, 3), np.uint8),
            "state": spaces.Dict(
                {
                    "pos": spaces.Box(-10.0, 10.0, (2,), np.float32),
                    "vel": spaces.Box(-5.0, 5.0, (2,), np.float32),
                }
            ),
        }
    )


class PointGymEnv(gym.Env[Any, Any]):
    """A point pushed left, not at all, or right; the episode terminates when it leaves [-2, 2]^2.

    The image is noise drawn from the env's seeded generator, so it is reproducible from the seed.
    """

    def __init__(self, height: int, width: int, render_mode: str | None = None) -> None:
        self.metadata = {"render_modes": ["rgb_array"], "render_fps": 30}
        self.image_shape = (height, width, 3)
        self.observation_space = point_observation_space(height, width)
        self.action_space = spaces.Discrete(3)
        self.render_mode = render_mode
        self.pos = np.zeros(2, np.float32)
        self.vel = np.zeros(2, np.float32)

    def _obs(self) -> dict[str, Any]:
        image = self.np_random.integers(0, 256, self.image_shape).astype(np.uint8)
        return {"image": image, "state": {"pos": self.pos.copy(), "vel": self.vel.copy()}}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.pos = self.np_random.uniform(-1.0, 1.0, 2).astype(np.float32)
        self.vel = self.np_random.uniform(-0.1, 0.1, 2).astype(np.float32)
        return self._obs(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        push = np.float32(0.15) * (int(action) - 1)
        self.vel = np.clip(self.vel + np.array([push, -push / 2], np.float32), -5.0, 5.0).astype(np.float32)
        self.pos = np.clip(self.pos + self.vel, -10.0, 10.0).astype(np.float32)
        reward = -float(np.abs(self.pos).sum())
        return self._obs(), reward, bool(np.abs(self.pos).max() > 2.0), False, {"speed": float(np.abs(self.vel).sum())}

    def render(self) -> np.ndarray:
        return np.zeros((16, 16, 3), np.uint8)


class DictObsEnv(DingEnvWrapper):
    """:class:`PointGymEnv` behind the ding API; its image is scaled to float32 in [0, 1].

    Example:
        >>> DictObsEnv.spaces_from_config({}).shapes[0]
        {'image': (5, 7, 3), 'state': {'pos': (2,), 'vel': (2,)}}
    """

    config: ClassVar[dict[str, Any]] = {
        "env_id": "PointDict",
        "max_episode_steps": 9,
        "image_size": [5, 7],
        "env_wrapper": [{"type": "scaled_float_frame", "kwargs": {"fields": ["image"]}}],
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg=cfg or {})
        self.built_in_pid = os.getpid()

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        height, width = cfg["image_size"]
        return EnvSpaces(point_observation_space(int(height), int(width)), spaces.Discrete(3))

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        height, width = self._cfg.image_size
        env = PointGymEnv(int(height), int(width), render_mode="rgb_array" if render else None)
        return TimeLimit(env, max_episode_steps=int(self._cfg.max_episode_steps))

    def env_pid(self) -> int:
        """The id of the process this env lives in."""
        return os.getpid()

    def scaled(self, value: float, factor: float = 2.0) -> float:
        """``value * factor``: a method with arguments, for fan-out calls."""
        return value * factor


class GuardedDictObsEnv(DictObsEnv):
    """A :class:`DictObsEnv` whose constructor raises in the process ``cfg.forbidden_pid``."""

    config: ClassVar[dict[str, Any]] = {"forbidden_pid": None}

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        forbidden = (cfg or {}).get("forbidden_pid")
        if forbidden is not None and os.getpid() == forbidden:
            raise RuntimeError(f"GuardedDictObsEnv was built in process {forbidden}, which must not build envs")
        super().__init__(cfg)


class TupleObsEnv(BaseEnv):
    """Observation ``(position (2,) float32, phase Discrete(5))``; episodes last ``episode_len`` steps."""

    config: ClassVar[dict[str, Any]] = {"episode_len": 4}

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        return EnvSpaces(
            spaces.Tuple((spaces.Box(-100.0, 100.0, (2,), np.float32), spaces.Discrete(5))), spaces.Discrete(2)
        )

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg)
        self.t = 0
        self.start = 0.0
        self.total = 0.0

    def _obs(self) -> tuple[np.ndarray, np.ndarray]:
        position = np.array([self.start + self.t, self.total], np.float32)
        return position, np.asarray(self.t % 5, dtype=np.int64)

    def reset(self) -> tuple[np.ndarray, np.ndarray]:
        self.t = 0
        self.total = 0.0
        self.start = float(np.random.default_rng(self._next_episode_seed()).integers(0, 50))
        return self._obs()

    def step(self, action: Any) -> BaseEnvTimestep:
        self.t += 1
        self.total += float(action)
        done = self.t >= self._cfg.episode_len
        info = {"eval_episode_return": np.array([self.total], np.float32)} if done else {}
        return BaseEnvTimestep(self._obs(), np.array([float(action)], np.float32), done, info, truncated=done)

    def close(self) -> None:
        pass


# ---------------------------------------------------------------------------------------------
# Drivers
# ---------------------------------------------------------------------------------------------

Policy = Callable[[int, int, Any], Any]
"""``policy(env_id, k, obs)``: the action of env ``env_id`` at its ``k``-th step (counted over its life) on ``obs``."""


@functools.lru_cache(maxsize=64)
def _action_table(env_id: int, n: int) -> tuple[int, ...]:
    return tuple(int(a) for a in np.random.default_rng(1000 + env_id).integers(0, n, size=4096))


def table_policy(n_actions: int) -> Policy:
    """A fixed pseudo-random action sequence per env, the same for every manager."""
    return lambda env_id, k, obs: _action_table(env_id, n_actions)[k % 4096]


@dataclasses.dataclass(frozen=True)
class StepRecord:
    """One step of one env: the observation acted on, the action and the returned timestep."""

    before: Any
    action: Any
    obs: Any
    reward: np.ndarray
    done: bool
    terminated: bool
    truncated: bool
    info: dict[str, Any]

    @classmethod
    def of(cls, before: Any, action: Any, ts: BaseEnvTimestep) -> StepRecord:
        """The record of stepping with ``action`` on ``before`` and getting ``ts``."""
        return cls(before, action, ts.obs, ts.reward, ts.done, bool(ts.terminated), ts.truncated, ts.info)


Trajectories = dict[int, list[StepRecord]]


def play(manager: BaseEnvManager, policy: Policy, max_steps: int = 20_000) -> Trajectories:
    """Step every ready env with ``policy`` until the manager is done; return each env's steps in order.

    Results an async manager delivers in a later call than the one that sent the action are matched
    to the observation and action they came from.
    """
    records: Trajectories = {i: [] for i in range(manager.env_num)}
    pending: dict[int, tuple[Any, Any]] = {}  # env id -> (obs acted on, action) awaiting its result
    for _ in range(max_steps):
        if manager.done:
            assert not pending, f"envs {sorted(pending)} never got their results"
            return records
        ready = manager.ready_obs
        actions = {i: policy(i, len(records[i]), obs) for i, obs in ready.items()}
        if not actions and not pending:
            raise AssertionError(f"no env is ready and none is in flight, but the manager is not done: {manager}")
        pending.update({i: (ready[i], action) for i, action in actions.items()})
        for env_id, ts in manager.step(actions).items():
            records[env_id].append(StepRecord.of(*pending.pop(env_id), ts))
    raise AssertionError(f"the manager was not done after {max_steps} steps")


def episodes(steps: list[StepRecord]) -> list[list[StepRecord]]:
    """Split one env's steps into episodes (each ends with a done step)."""
    out: list[list[StepRecord]] = [[]]
    for step in steps:
        out[-1].append(step)
        if step.done:
            out.append([])
    return [episode for episode in out if episode]


def assert_tree_equal(actual: Any, expected: Any, where: str = "value") -> None:
    """Exact equality of nested dicts / tuples / arrays, including array dtypes and shapes."""
    if isinstance(expected, Mapping):
        assert isinstance(actual, Mapping), f"{where}: expected a dict, got {type(actual).__name__}"
        assert set(actual) == set(expected), f"{where}: keys {sorted(actual)} != {sorted(expected)}"
        for key in expected:
            assert_tree_equal(actual[key], expected[key], f"{where}[{key!r}]")
        return
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)), f"{where}: expected a sequence, got {type(actual).__name__}"
        assert len(actual) == len(expected), f"{where}: length {len(actual)} != {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_tree_equal(a, e, f"{where}[{i}]")
        return
    if isinstance(expected, (np.ndarray, np.generic)):
        a, e = np.asarray(actual), np.asarray(expected)
        assert a.dtype == e.dtype, f"{where}: dtype {a.dtype} != {e.dtype}"
        np.testing.assert_array_equal(a, e, err_msg=where, strict=True)
        return
    assert actual == expected, f"{where}: {actual!r} != {expected!r}"


def tree_row(tree: Any, row: int) -> Any:
    """Row ``row`` of every array in a nested dict / tuple of batched arrays."""
    if isinstance(tree, Mapping):
        return {key: tree_row(value, row) for key, value in tree.items()}
    if isinstance(tree, tuple):
        return tuple(tree_row(value, row) for value in tree)
    return tree[row]


def assert_same_trajectories(actual: Trajectories, expected: Trajectories) -> None:
    """Every env took the same steps and got the same observations, rewards, flags and infos."""
    assert sorted(actual) == sorted(expected)
    for env_id in expected:
        got, want = actual[env_id], expected[env_id]
        assert len(got) == len(want), f"env {env_id}: {len(got)} steps != {len(want)}"
        for k, (a, e) in enumerate(zip(got, want, strict=True)):
            where = f"env {env_id} step {k}"
            for field in dataclasses.fields(StepRecord):
                assert_tree_equal(getattr(a, field.name), getattr(e, field.name), f"{where} {field.name}")


# ---------------------------------------------------------------------------------------------
# Process and shared-memory probes
# ---------------------------------------------------------------------------------------------


def processes_ended(pids: Sequence[int | None], grace: float = 0.0) -> bool:
    """Whether none of ``pids`` is running, waiting up to ``grace`` seconds for them to end (0: look once)."""
    deadline = time.monotonic() + grace
    while any(pid_alive(pid) for pid in pids):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def pid_alive(pid: int | None) -> bool:
    """Whether ``pid`` is a running process (a zombie counts as gone)."""
    if pid is None:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def shm_exists(name: str) -> bool:
    """Whether the POSIX shared-memory segment ``name`` exists."""
    return os.path.exists(os.path.join("/dev/shm", name))
