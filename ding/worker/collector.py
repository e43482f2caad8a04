"""``SampleSerialCollector``: drive an env manager with a policy's collect mode and return training samples."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from ding.envs.env_manager import BaseEnvManager
from ding.errors import EnvManagerError
from ding.policy.base import CollectMode


@dataclasses.dataclass
class CollectorStats:
    """Counts since the collector started, and the returns of episodes finished since the last ``pop_returns``."""

    env_step: int = 0
    episode_count: int = 0
    abnormal_episode_count: int = 0
    sample_count: int = 0
    finished_returns: list[float] = dataclasses.field(default_factory=list)
    finished_lengths: list[int] = dataclasses.field(default_factory=list)
    """Env steps of the episodes finished since the last ``pop_lengths``."""


class SampleSerialCollector:
    """Collect at least ``n_sample`` samples per call from every env the manager runs.

    Each call steps every env waiting for an action (the manager resets finished episodes itself)
    and keeps, per env, the transitions whose samples are not ready yet (an n-step sample needs the
    next steps). Env steps, finished episodes and their returns are counted; an *abnormal* timestep
    (``info['abnormal']``: the env failed and was reset or rebuilt) is no step: it and the env's
    pending transitions are discarded, and the cut episode counts as abnormal, not as an episode.

    Example:
        >>> from functools import partial
        >>> from ding.envs.env_manager import create_env_manager
        >>> from ding.policy.dqn import DQNPolicy
        >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
        >>> env = create_env_manager({'type': 'base'}, [partial(CartPoleEnv, cfg={}) for _ in range(2)])
        >>> env.seed(0)
        >>> policy = DQNPolicy({'model': {'obs_shape': 4, 'action_shape': 2}})
        >>> collector = SampleSerialCollector(env, policy.collect_mode)
        >>> samples = collector.collect(n_sample=5, policy_kwargs={'eps': 0.5})
        >>> len(samples), collector.env_step, sorted(samples[0])
        (6, 6, ['action', 'discount', 'done', 'next_obs', 'obs', 'reward'])
        >>> collector.close()
    """

    def __init__(self, env: BaseEnvManager, policy: CollectMode) -> None:
        self._env = env
        self._policy = policy
        self._traj: dict[int, list[dict[str, Any]]] = {}
        self._acting: dict[int, tuple[Any, Mapping[str, Any]]] = {}  # env id -> (obs, policy output) in flight
        self._returns: dict[int, float] = {}
        self._lengths: dict[int, int] = {}  # env steps of each env's episode so far
        self.stats = CollectorStats()

    @property
    def env(self) -> BaseEnvManager:
        return self._env

    @property
    def env_step(self) -> int:
        """Env steps collected (abnormal timesteps excluded)."""
        return self.stats.env_step

    @property
    def episode_count(self) -> int:
        return self.stats.episode_count

    def pop_returns(self) -> list[float]:
        """Returns of the episodes finished since the last call."""
        returns, self.stats.finished_returns = self.stats.finished_returns, []
        return returns

    def pop_lengths(self) -> list[int]:
        """Lengths (env steps) of the episodes finished since the last call."""
        lengths, self.stats.finished_lengths = self.stats.finished_lengths, []
        return lengths

    def collect(
        self, n_sample: int | None = None, train_iter: int = 0, policy_kwargs: Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Step the envs until at least ``n_sample`` (default: the policy's) new samples are ready; return them."""
        if n_sample is None:
            n_sample = self._policy.n_sample
        if not isinstance(n_sample, int) or isinstance(n_sample, bool) or n_sample < 1:
            raise ValueError(f"n_sample must be an int >= 1, got {n_sample!r}")
        if not self._env.launched:
            self._env.launch()
        kwargs = dict(policy_kwargs or {})
        samples: list[dict[str, Any]] = []
        while len(samples) < n_sample:
            timesteps = self._step_envs(kwargs)
            for env_id, timestep in timesteps.items():
                samples.extend(self._on_timestep(env_id, timestep))
        self.stats.sample_count += len(samples)
        return samples

    def _step_envs(self, kwargs: Mapping[str, Any]) -> Mapping[int, Any]:
        ready = self._env.ready_obs
        in_flight = getattr(self._env, "in_flight_env_ids", [])
        if not ready:
            if in_flight:
                return self._env.step({})
            raise EnvManagerError(
                "the collector's env manager has no env waiting for an action: its envs finished "
                "env.manager.episode_num episodes; training needs episode_num=inf"
            )
        outputs = self._policy.forward(ready, **kwargs)
        for env_id, obs in ready.items():
            self._acting[env_id] = (_owned(obs), outputs[env_id])
        return self._env.step({env_id: outputs[env_id]["action"] for env_id in ready})

    def _on_timestep(self, env_id: int, timestep: Any) -> list[dict[str, Any]]:
        obs, output = self._acting.pop(env_id)
        if timestep.info.get("abnormal", False):
            self._traj.pop(env_id, None)
            self._returns.pop(env_id, None)
            self._lengths.pop(env_id, None)
            self.stats.abnormal_episode_count += 1
            return []
        self.stats.env_step += 1
        timestep = timestep._replace(obs=_owned(timestep.obs))
        traj = self._traj.setdefault(env_id, [])
        traj.append(self._policy.process_transition(obs, output, timestep))
        self._returns[env_id] = self._returns.get(env_id, 0.0) + float(np.sum(timestep.reward))
        self._lengths[env_id] = self._lengths.get(env_id, 0) + 1
        samples = self._policy.get_train_sample(traj, bool(timestep.done))
        del traj[: len(samples)]
        if timestep.done:
            self._traj.pop(env_id, None)
            summed = self._returns.pop(env_id, 0.0)
            self.stats.episode_count += 1
            self.stats.finished_returns.append(float(np.sum(timestep.info.get("eval_episode_return", summed))))
            self.stats.finished_lengths.append(self._lengths.pop(env_id, 0))
        return samples

    def close(self) -> None:
        self._env.close()


def _owned(obs: Any) -> Any:
    """An observation the env manager can no longer overwrite (a copy of an array view)."""
    if isinstance(obs, np.ndarray) and obs.base is not None:
        return obs.copy()
    return obs
