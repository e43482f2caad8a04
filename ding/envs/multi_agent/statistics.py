"""``ParallelEpisodeStatistics``: each agent's episode return and length, around a PettingZoo ``ParallelEnv``."""

from __future__ import annotations

import time
from collections import deque
from typing import Any


class ParallelEpisodeStatistics:
    """Record every agent's return and length, and report them in its info when it leaves the episode.

    It wraps any env of PettingZoo's parallel API (``reset``, ``step`` with dicts by agent, ``agents``) and passes
    everything else (spaces, ``state``, ``render``, ``possible_agents``, ...) through to it.

    When an agent terminates or is truncated, ``infos[agent]['episode']`` is ``{'r': return, 'l': steps it acted,
    't': seconds since reset}``. When the last agent has left, the team's return (the sum over agents) and the
    episode's length (steps) are appended to ``return_queue`` and ``length_queue``, which keep the last
    ``deque_size`` episodes. The env itself is unchanged (spaces, agents, actions).

    Example:
        >>> from mpe2 import simple_spread_v3
        >>> env = ParallelEpisodeStatistics(simple_spread_v3.parallel_env(max_cycles=3))
        >>> _ = env.reset(seed=0)
        >>> for _ in range(3):
        ...     infos = env.step({agent: 0 for agent in env.agents})[-1]
        >>> infos['agent_0']['episode']['l'], len(env.return_queue), env.length_queue[0]
        (3, 1, 3)
    """

    def __init__(self, env: Any, deque_size: int = 100) -> None:
        if not isinstance(deque_size, int) or isinstance(deque_size, bool) or deque_size < 1:
            raise ValueError(f"deque_size must be an int >= 1, got {deque_size!r}")
        self.env = env
        self.return_queue: deque[float] = deque(maxlen=deque_size)
        self.length_queue: deque[int] = deque(maxlen=deque_size)
        self._returns: dict[Any, float] = {}
        self._lengths: dict[Any, int] = {}
        self._steps = 0
        self._start = time.perf_counter()

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, Any]:
        result = self.env.reset(seed=seed, options=options)
        self._returns = {}
        self._lengths = {}
        self._steps = 0
        self._start = time.perf_counter()
        return result  # type: ignore[no-any-return]

    def step(self, actions: dict[Any, Any]) -> tuple[Any, Any, Any, Any, Any]:
        obs, rewards, terminations, truncations, infos = self.env.step(actions)
        self._steps += 1
        for agent in set(rewards) | set(terminations):
            self._returns[agent] = self._returns.get(agent, 0.0) + float(rewards.get(agent, 0.0))
            self._lengths[agent] = self._lengths.get(agent, 0) + 1
        elapsed = round(time.perf_counter() - self._start, 6)
        left = [agent for agent in terminations if terminations[agent] or truncations.get(agent, False)]
        if left:
            infos = {agent: dict(info) for agent, info in infos.items()}
            for agent in left:
                record = {"r": self._returns[agent], "l": self._lengths[agent], "t": elapsed}
                infos[agent] = {**infos.get(agent, {}), "episode": record}
        if not self.env.agents:
            self.return_queue.append(sum(self._returns.values()))
            self.length_queue.append(self._steps)
        return obs, rewards, terminations, truncations, infos

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "env":  # "env": not set yet (while unpickling)
            raise AttributeError(f"{type(self).__name__} does not pass private attribute {name!r} through")
        return getattr(self.env, name)

    def observation_space(self, agent: Any) -> Any:
        return self.env.observation_space(agent)

    def action_space(self, agent: Any) -> Any:
        return self.env.action_space(agent)

    def state(self) -> Any:
        return self.env.state()

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    @property
    def unwrapped(self) -> Any:
        return self.env.unwrapped
