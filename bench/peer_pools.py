"""The peers' vector envs as the benchmark drives them, in their own venvs: envpool, tianshou and TorchRL.

Imported by ``bench/peer_child.py`` from this folder (no ding, no ``bench`` package); each pool imports its library
when built. Every pool takes a row of N int actions per batch and resets an env whose episode ended within the same
batch (as ding's managers and gymnasium's same-step autoreset do), in the way the peer's own collector does it:

- ``envpool``: sync (``num_envs = batch_size = N``) or async (``num_envs = 2N``, batches of N); its own autoreset.
- ``tianshou``: ``ShmemVectorEnv`` or ``SubprocVectorEnv`` (one worker process per env); ended envs are reset with
  ``reset(env_id=...)`` after the step, as tianshou's collector does.
- ``torchrl``: ``ParallelEnv`` (one worker process per env) of ``GymEnv`` / ``GymWrapper`` with integer actions,
  stepped with ``step_and_maybe_reset``, as TorchRL's collectors do.

The env a pool steps (``env`` in the start command): ``{"gym_id": "CartPole-v1"}`` (gymnasium's registered env) or
``{"synthetic": {...}}`` (the synthetic env of ``synthetic_core.py``, the same file the project's contenders step).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np


def gym_env_fn(env: dict[str, Any]) -> Callable[[], Any]:
    """A picklable constructor of the gymnasium env ``env`` names."""
    if "synthetic" in env:
        import synthetic_core

        return functools.partial(synthetic_core.GymSyntheticEnv, dict(env["synthetic"]))
    import gymnasium as gym

    return functools.partial(gym.make, env["gym_id"])


class EnvpoolPool:
    """envpool sync or async."""

    action_dtype = np.int32

    def __init__(self, spec: dict[str, Any]) -> None:
        import envpool

        env = spec["env"]
        if "envpool_task" not in env:
            raise ValueError(f"envpool has no task for {env}")
        self.n = int(spec["n"])
        self.asynchronous = spec["mode"] == "async"
        self.env = envpool.make(
            env["envpool_task"],
            env_type="gymnasium",
            num_envs=2 * self.n if self.asynchronous else self.n,
            batch_size=self.n,
            seed=int(spec["seed"]),
            **env.get("kwargs", {}),
        )
        self.reset()

    def reset(self) -> None:
        """Reset every env (async: the next ``recv`` returns the first observations)."""
        if self.asynchronous:
            self.env.async_reset()
        else:
            self.env.reset()

    def step(self, row: np.ndarray) -> int:
        if self.asynchronous:
            _, _, _, _, info = self.env.recv()
            self.env.send(row, info["env_id"])
        else:
            self.env.step(row)
        return self.n

    def close(self) -> None:
        self.env.close()


class TianshouPool:
    """tianshou 2.x ``ShmemVectorEnv`` (mode ``shmem``) or ``SubprocVectorEnv`` (mode ``subproc``)."""

    action_dtype = np.int64

    def __init__(self, spec: dict[str, Any]) -> None:
        from tianshou.env import ShmemVectorEnv, SubprocVectorEnv

        self.n = int(spec["n"])
        vector = {"shmem": ShmemVectorEnv, "subproc": SubprocVectorEnv}[spec["mode"]]
        fn = gym_env_fn(spec["env"])
        self.env = vector([fn for _ in range(self.n)])
        self.env.seed(int(spec["seed"]))
        self.reset()

    def reset(self) -> None:
        self.env.reset()

    def step(self, row: np.ndarray) -> int:
        _, _, terminated, truncated, _ = self.env.step(row)
        ended = np.flatnonzero(np.logical_or(terminated, truncated))
        if len(ended):
            self.env.reset(env_id=ended)
        return self.n

    def close(self) -> None:
        self.env.close()


def torchrl_env(env: dict[str, Any]) -> Any:
    """One TorchRL env with integer (categorical) actions: ``GymEnv`` for a registered id, else ``GymWrapper``."""
    from torchrl.envs import GymEnv, GymWrapper

    if "gym_id" in env:
        return GymEnv(env["gym_id"], categorical_action_encoding=True)
    return GymWrapper(gym_env_fn(env)(), categorical_action_encoding=True)


class TorchRLPool:
    """TorchRL ``ParallelEnv``: one worker process per env."""

    action_dtype = np.int64

    def __init__(self, spec: dict[str, Any]) -> None:
        import torch
        from torchrl.envs import ParallelEnv

        torch.set_num_threads(1)
        self.torch = torch
        self.n = int(spec["n"])
        self.env = ParallelEnv(self.n, functools.partial(torchrl_env, dict(spec["env"])))
        self.env.set_seed(int(spec["seed"]))
        self.td = self.env.reset()

    def reset(self) -> None:
        self.td = self.env.reset()

    def step(self, row: np.ndarray) -> int:
        self.td.set("action", self.torch.from_numpy(row))
        _, self.td = self.env.step_and_maybe_reset(self.td)
        return self.n

    def close(self) -> None:
        self.env.close()


POOLS: dict[str, type[Any]] = {"envpool": EnvpoolPool, "tianshou": TianshouPool, "torchrl": TorchRLPool}
"""The peer named in the start command → its pool."""

DISTRIBUTIONS = {"envpool": "envpool", "tianshou": "tianshou", "torchrl": "torchrl"}
"""The peer → the distribution whose version the child reports."""
