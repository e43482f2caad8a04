"""``ParallelGymEnv``: a PettingZoo ``ParallelEnv`` as one gymnasium env, its values packed by an :class:`AgentLayout`.

Agents keep the order of ``possible_agents``. An agent is *alive* from the step it first appears in until it
terminates or is truncated; the observation row of the step it leaves in holds its last observation, later rows
its blank value (see :mod:`ding.envs.multi_agent.layout`), its reward is 0 and its action is ignored. The episode
ends when no agent is alive (or the env lists no agents): ``terminated`` when every agent leaving in that step
terminated, else ``truncated``.

``info`` of every step: ``alive`` (bool, one per agent) and ``agent_infos`` (the env's per-agent infos of the step).
At the episode's end also ``episode`` (``r``: each agent's return, float32; ``l``: the steps each agent acted, int64;
``t``: seconds since reset) and ``eval_episode_return``, the team's return (the sum over agents) as float32
``(1,)``, from :class:`~ding.envs.multi_agent.statistics.ParallelEpisodeStatistics`, which wraps the env.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from ding.envs.multi_agent.layout import AgentLayout
from ding.envs.multi_agent.statistics import ParallelEpisodeStatistics
from ding.envs.values.spaces import EnvSpaces
from ding.errors import EnvSpecError


def read_layout(env: Any, **switches: bool) -> AgentLayout:
    """The layout of a ``ParallelEnv``'s ``possible_agents`` and spaces (read without a reset or a step).

    ``switches`` are :class:`AgentLayout`'s keyword arguments (``shared_reward``, ``joint_action``, ...).
    """
    agents = tuple(getattr(env, "possible_agents", None) or ())
    if not agents:
        raise EnvSpecError(f"{type(env).__name__} lists no possible_agents; a multi-agent env must name them all")
    state_space = getattr(env, "state_space", None)
    return AgentLayout(
        tuple(str(agent) for agent in agents),
        tuple(env.observation_space(agent) for agent in agents),
        tuple(env.action_space(agent) for agent in agents),
        state_space if isinstance(state_space, gym.spaces.Space) else None,
        **switches,
    )


class ParallelGymEnv(gym.Env[Any, Any]):
    """One gymnasium env over a PettingZoo ``ParallelEnv`` (see the module); its spaces are ``layout.env_spaces()``.

    Example:
        >>> from mpe2 import simple_spread_v3
        >>> parallel = simple_spread_v3.parallel_env(max_cycles=2)
        >>> env = ParallelGymEnv(parallel, read_layout(parallel, agent_obs_only=True))
        >>> env.observation_space.shape, env.action_space, env.reward_space.shape
        ((3, 18), MultiDiscrete([5 5 5]), (3,))
        >>> obs, info = env.reset(seed=0)
        >>> _ = env.step(np.zeros(3, np.int64))
        >>> obs, reward, terminated, truncated, info = env.step(np.zeros(3, np.int64))
        >>> terminated, truncated, info['alive'].tolist(), info['episode']['l'].tolist()
        (False, True, [False, False, False], [2, 2, 2])
    """

    def __init__(self, env: Any, layout: AgentLayout) -> None:
        self.parallel_env = env if isinstance(env, ParallelEpisodeStatistics) else ParallelEpisodeStatistics(env)
        self.layout = layout
        declared: EnvSpaces = layout.env_spaces()
        self.observation_space = declared.observation
        self.action_space = declared.action
        self.reward_space = declared.reward
        self.render_mode = getattr(env, "render_mode", None)
        self.metadata = dict(getattr(env, "metadata", {}) or {})
        self._index = {agent: i for i, agent in enumerate(layout.agents)}
        self._alive = np.zeros(len(layout.agents), dtype=bool)
        self._records: dict[str, Mapping[str, Any]] = {}
        self._state: Callable[[], Any] | None = self.parallel_env.state if layout.state_space is not None else None

    @property
    def agents(self) -> tuple[str, ...]:
        """Every agent, in the order of the agent axis."""
        return self.layout.agents

    @property
    def alive(self) -> np.ndarray:
        """Which agents are in the episode now (a copy)."""
        return self._alive.copy()

    def _check_agents(self, names: Any) -> None:
        unknown = [agent for agent in names if agent not in self._index]
        if unknown:
            raise EnvSpecError(
                f"the env reports agents {unknown} that are not in its possible_agents {list(self.layout.agents)}"
            )

    def _observe(self, per_agent: Mapping[str, Any]) -> Any:
        state = self._state() if self._state is not None else None
        return self.layout.observation(per_agent, self._alive, state)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        obs, infos = self.parallel_env.reset(seed=seed, options=options)
        self._check_agents(obs)
        self._alive[:] = [agent in obs for agent in self.layout.agents]
        self._records = {}
        return self._observe(obs), {"alive": self._alive.copy(), "agent_infos": copy.deepcopy(dict(infos))}

    def step(self, action: Any) -> tuple[Any, np.ndarray, bool, bool, dict[str, Any]]:
        actions = self.layout.agent_actions(action, self._alive)
        obs, rewards, terminations, truncations, infos = self.parallel_env.step(actions)
        self._check_agents(obs)
        leaving: list[str] = []
        for agent in self.layout.agents:
            if terminations.get(agent, False) or truncations.get(agent, False):
                leaving.append(agent)
            elif agent in obs:
                self._alive[self._index[agent]] = True  # joined (or still in)
        for agent in leaving:
            self._alive[self._index[agent]] = False
            if "episode" in infos.get(agent, {}):
                self._records[agent] = infos[agent]["episode"]
        over = not self._alive.any() or not self.parallel_env.agents
        if over:
            self._alive[:] = False  # the env ended the episode for every agent
        observation = self._observe(obs)
        reward = self.layout.reward(rewards)
        info: dict[str, Any] = {"alive": self._alive.copy(), "agent_infos": copy.deepcopy(dict(infos))}
        terminated = over and bool(leaving) and all(terminations.get(agent, False) for agent in leaving)
        if over:
            info.update(self._episode_info())
        return observation, reward, terminated, over and not terminated, info

    def _episode_info(self) -> dict[str, Any]:
        records = [self._records.get(agent, {}) for agent in self.layout.agents]
        returns = np.array([record.get("r", 0.0) for record in records], dtype=np.float64)
        lengths = np.array([record.get("l", 0) for record in records], dtype=np.int64)
        elapsed = max((float(record.get("t", 0.0)) for record in records), default=0.0)
        return {
            "episode": {"r": returns.astype(np.float32), "l": lengths, "t": elapsed},
            "eval_episode_return": np.array([returns.sum()], dtype=np.float32),
        }

    def render(self) -> Any:
        return self.parallel_env.render()

    def close(self) -> None:
        self.parallel_env.close()
