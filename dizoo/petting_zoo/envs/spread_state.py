"""``simple_spread`` with DI-engine's global state: a compact team view assembled from the agents' observations.

An agent's observation is ``[own velocity (2), own position (2), landmarks relative to it (2 per landmark), other
agents relative to it (2 each), other agents' communication (2 each)]``. DI-engine's global state joins agent 0's
position and relative positions, every agent's velocity and every agent's communication:
``2 + 2 * landmarks + 2 * (agents - 1) + 2 * agents + 2 * agents * (agents - 1)`` values (30 for 3 agents and 3
landmarks), where ``mpe2``'s ``state()`` joins every agent's whole observation (54).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces


class SpreadGlobalState:
    """A ``simple_spread`` ``ParallelEnv`` whose ``state()`` / ``state_space`` are DI-engine's (everything else is
    the env's own).

    Example:
        >>> from mpe2 import simple_spread_v3
        >>> env = SpreadGlobalState(simple_spread_v3.parallel_env(N=3))
        >>> env.state_space.shape
        (30,)
        >>> _ = env.reset(seed=0)
        >>> env.state().shape, env.state().dtype
        ((30,), dtype('float32'))
    """

    def __init__(self, env: Any) -> None:
        self._env = env
        agents = list(env.possible_agents)
        size = int(env.observation_space(agents[0]).shape[0])
        self._others = 2 * (len(agents) - 1)  # relative positions, and communication, of the other agents
        team = (size - 2 - self._others) + 2 * len(agents) + self._others * len(agents)
        self.state_space = spaces.Box(-np.inf, np.inf, (team,), np.float32)
        self._rows = np.zeros((len(agents), size), np.float32)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, Any]:
        observations, infos = self._env.reset(seed=seed, options=options)
        self._keep(observations)
        return observations, infos

    def step(self, actions: Any) -> tuple[Any, ...]:
        observations, *rest = self._env.step(actions)
        self._keep(observations)
        return (observations, *rest)

    def state(self) -> np.ndarray:
        rows, others = self._rows, self._others
        own_view = rows[0, 2 : rows.shape[1] - others]  # position, landmarks and other agents as agent 0 sees them
        communication = rows[:, rows.shape[1] - others :].reshape(-1)
        return np.concatenate([own_view, rows[:, 0:2].reshape(-1), communication]).astype(np.float32)

    def _keep(self, observations: Any) -> None:
        for index, agent in enumerate(self._env.possible_agents):
            if agent in observations:  # an agent that left keeps its last row
                self._rows[index] = observations[agent]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._env, name)
