"""How the per-agent values of a multi-agent env are laid out for one ding env: the rule, stated once.

An :class:`AgentLayout` is built from the per-agent spaces (in a fixed agent order) and a few switches; from them
alone it states the spaces the env shows (:meth:`AgentLayout.spaces`) and packs or unpacks values:

- **Observation.** When every agent has the same observation space it is stacked on a leading agent axis
  (``Box((4,))`` for 3 agents gives ``Box((3, 4))``); otherwise it is a ``Dict`` by agent name. The full
  observation is DI-engine's dict: ``agent_state`` (that stack or dict), ``global_state`` (the env's ``state()``
  when it declares a ``state_space``; else the agents' flattened observations joined, when they are all Box),
  ``action_mask`` (for Discrete actions: 1 for every action of an agent still in the episode, 0 for one that left)
  and ``alive`` (1 for an agent still in the episode). ``agent_obs_only`` keeps ``agent_state`` alone;
  ``agent_specific_global_state`` gives each agent its own row, its observation followed by the global state.
- **Action.** Stacked the same way: ``Discrete(n)`` per agent gives ``MultiDiscrete([n] * agents)``, a Box a Box
  with a leading agent axis; different spaces a ``Dict`` by name. ``joint_action`` makes Discrete agents one
  ``Discrete(n_0 * n_1 * ...)`` (the first agent's action is the most significant digit).
- **Reward.** ``(agents,)`` float32, one per agent; ``shared_reward`` sums them into ``(1,)``.

An agent that is not in the episode (it left, or has not joined) shows the space's blank value (:func:`blank`:
zeros, moved into the bounds where zero is outside them) and reward 0; its action is ignored.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.values.conversion import Converter, action_converter
from ding.envs.values.spaces import EnvSpaces
from ding.errors import ConfigError, EnvSpecError

STACKABLE = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)
"""Per-agent spaces that stack on a leading agent axis when every agent has the same one."""


def stack_space(space: spaces.Space[Any], count: int) -> spaces.Space[Any]:
    """The space of ``count`` values of ``space`` stacked on a new leading axis.

    >>> stack_space(spaces.Discrete(5), 3)
    MultiDiscrete([5 5 5])
    >>> stack_space(spaces.Box(0.0, 1.0, (5,), np.float32), 3).shape
    (3, 5)
    """
    if isinstance(space, spaces.Discrete):
        return spaces.MultiDiscrete(np.full(count, space.n), dtype=np.int64, start=np.full(count, space.start))
    if isinstance(space, spaces.MultiDiscrete):
        nvec, start = np.stack([space.nvec] * count), np.stack([space.start] * count)
        return spaces.MultiDiscrete(nvec, dtype=space.dtype, start=start)  # type: ignore[arg-type]
    if isinstance(space, spaces.MultiBinary):
        return spaces.MultiBinary([count, *np.atleast_1d(space.n).tolist()])
    if isinstance(space, spaces.Box):
        return spaces.Box(np.stack([space.low] * count), np.stack([space.high] * count), dtype=space.dtype)  # type: ignore[arg-type]
    raise EnvSpecError(f"cannot stack {space} on an agent axis; stackable: Box, Discrete, MultiDiscrete, MultiBinary")


def blank(space: spaces.Space[Any]) -> Any:
    """The value shown for an agent that is not in the episode: zeros, or the bound nearest zero.

    >>> blank(spaces.Box(1.0, 2.0, (2,), np.float32)), blank(spaces.Discrete(3, start=1))
    (array([1., 1.], dtype=float32), 1)
    """
    if isinstance(space, spaces.Dict):
        return {key: blank(sub) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(blank(sub) for sub in space.spaces)
    if isinstance(space, spaces.Discrete):
        return int(space.start)
    if isinstance(space, spaces.MultiDiscrete):
        return np.array(space.start, dtype=space.dtype)
    if isinstance(space, spaces.MultiBinary):
        return np.zeros(space.shape, dtype=space.dtype)
    if isinstance(space, spaces.Box):
        return np.clip(np.zeros(space.shape, dtype=space.dtype), space.low, space.high).astype(space.dtype)
    raise EnvSpecError(f"no blank value for {space}; supported: Box, Discrete, MultiDiscrete, MultiBinary, Dict, Tuple")


def _flat_size(space: spaces.Space[Any]) -> int:
    return math.prod(space.shape) if space.shape else 1


@dataclasses.dataclass(frozen=True)
class AgentLayout:
    """Per-agent spaces in a fixed agent order, and how they are packed into one env's values (see the module).

    Example:
        >>> box, five = spaces.Box(-1.0, 1.0, (4,), np.float32), spaces.Discrete(5)
        >>> layout = AgentLayout(('a', 'b'), (box, box), (five, five), shared_reward=True)
        >>> sorted(layout.env_spaces().observation.spaces), layout.env_spaces().action, layout.env_spaces().reward.shape
        (['action_mask', 'agent_state', 'alive', 'global_state'], MultiDiscrete([5 5]), (1,))
        >>> layout.agent_actions(np.array([4, 2]), alive=np.array([True, False]))
        {'a': 4}
        >>> AgentLayout(('a', 'b'), (box, box), (five, five), joint_action=True).env_spaces().action
        Discrete(25)
    """

    agents: tuple[str, ...]
    observation_spaces: tuple[spaces.Space[Any], ...]
    action_spaces: tuple[spaces.Space[Any], ...]
    state_space: spaces.Space[Any] | None = None
    agent_obs_only: bool = False
    agent_specific_global_state: bool = False
    shared_reward: bool = False
    joint_action: bool = False

    def __post_init__(self) -> None:
        count = len(self.agents)
        if count == 0 or len(set(self.agents)) != count:
            raise EnvSpecError(f"a multi-agent env needs distinct agent names, got {list(self.agents)}")
        if len(self.observation_spaces) != count or len(self.action_spaces) != count:
            raise EnvSpecError(
                f"{count} agents need {count} observation and action spaces, got {len(self.observation_spaces)} "
                f"and {len(self.action_spaces)}"
            )
        if self.joint_action and not all(isinstance(s, spaces.Discrete) for s in self.action_spaces):
            raise ConfigError(
                f"joint_action needs a Discrete action space for every agent, got {list(self.action_spaces)}"
            )
        if self.agent_specific_global_state and self.agent_obs_only:
            raise ConfigError("agent_specific_global_state needs the full observation; set agent_obs_only=False")
        if self.agent_specific_global_state and not (self.stacked_observations and self._agent_vectors()):
            raise ConfigError(
                "agent_specific_global_state needs every agent to observe the same 1-D Box, got "
                f"{list(self.observation_spaces)}"
            )

    # ----- the rule ------------------------------------------------------------------------------
    @property
    def stacked_observations(self) -> bool:
        """Whether observations stack on an agent axis (every agent has the same stackable space)."""
        return _same_stackable(self.observation_spaces)

    @property
    def stacked_actions(self) -> bool:
        """Whether actions stack on an agent axis (not joint, and every agent has the same stackable space)."""
        return not self.joint_action and _same_stackable(self.action_spaces)

    def _agent_vectors(self) -> bool:
        return all(isinstance(s, spaces.Box) and len(s.shape) == 1 for s in self.observation_spaces)

    def agent_state_space(self) -> spaces.Space[Any]:
        if self.stacked_observations:
            return stack_space(self.observation_spaces[0], len(self.agents))
        return spaces.Dict(dict(zip(self.agents, self.observation_spaces, strict=True)))

    def global_state_space(self) -> spaces.Space[Any] | None:
        """The env's state space; else the agents' Box observations joined (float32); None when neither exists."""
        space = self.state_space
        if space is None and all(isinstance(s, spaces.Box) for s in self.observation_spaces):
            size = sum(_flat_size(s) for s in self.observation_spaces)
            low = np.concatenate([np.asarray(s.low, np.float32).reshape(-1) for s in self.observation_spaces])  # type: ignore[attr-defined]
            high = np.concatenate([np.asarray(s.high, np.float32).reshape(-1) for s in self.observation_spaces])  # type: ignore[attr-defined]
            space = spaces.Box(low, high, (size,), np.float32)
        if space is None or not self.agent_specific_global_state:
            return space
        if not (isinstance(space, spaces.Box) and len(space.shape) == 1):
            raise ConfigError(f"agent_specific_global_state needs a 1-D Box global state, got {space}")
        own = self.observation_spaces[0]
        assert isinstance(own, spaces.Box)  # checked in __post_init__
        dtype = np.result_type(own.dtype, space.dtype)  # type: ignore[arg-type]
        row_low = np.concatenate([own.low, space.low]).astype(dtype)
        row_high = np.concatenate([own.high, space.high]).astype(dtype)
        return stack_space(spaces.Box(row_low, row_high, dtype=dtype), len(self.agents))  # type: ignore[arg-type]

    def action_mask_space(self) -> spaces.Space[Any] | None:
        """DI-engine's float32 action mask, for Discrete actions only."""
        if not all(isinstance(s, spaces.Discrete) for s in self.action_spaces):
            return None
        masks = [spaces.Box(0.0, 1.0, (n,), np.float32) for n in self._action_counts()]
        if len({m.shape for m in masks}) == 1:
            return stack_space(masks[0], len(self.agents))
        return spaces.Dict(dict(zip(self.agents, masks, strict=True)))

    def observation_space(self) -> spaces.Space[Any]:
        if self.agent_obs_only:
            return self.agent_state_space()
        parts: dict[str, spaces.Space[Any]] = {"agent_state": self.agent_state_space()}
        global_state = self.global_state_space()
        if global_state is not None:
            parts["global_state"] = global_state
        mask = self.action_mask_space()
        if mask is not None:
            parts["action_mask"] = mask
        parts["alive"] = spaces.Box(0.0, 1.0, (len(self.agents),), np.float32)
        return spaces.Dict(parts)

    def _action_counts(self) -> list[int]:
        """Each agent's number of actions (every agent's action space is Discrete where this is called)."""
        return [int(s.n) for s in self.action_spaces if isinstance(s, spaces.Discrete)]

    def action_space(self) -> spaces.Space[Any]:
        if self.joint_action:
            return spaces.Discrete(math.prod(self._action_counts()))
        if self.stacked_actions:
            return stack_space(self.action_spaces[0], len(self.agents))
        return spaces.Dict(dict(zip(self.agents, self.action_spaces, strict=True)))

    def reward_space(self) -> spaces.Space[Any]:
        return spaces.Box(-np.inf, np.inf, (1 if self.shared_reward else len(self.agents),), np.float32)

    def env_spaces(self) -> EnvSpaces:
        """The observation, action and reward spaces of the env this layout packs."""
        return EnvSpaces(self.observation_space(), self.action_space(), self.reward_space())

    # ----- packing -------------------------------------------------------------------------------
    def observation(self, per_agent: Mapping[str, Any], alive: np.ndarray, state: Any = None) -> Any:
        """The env's observation from the agents' own (an agent absent from ``per_agent`` shows its blank value)."""
        rows = [
            per_agent[agent] if agent in per_agent else blank(space)
            for agent, space in zip(self.agents, self.observation_spaces, strict=True)
        ]
        if self.stacked_observations:
            agent_state: Any = np.stack([np.asarray(row, dtype=self.observation_spaces[0].dtype) for row in rows])
        else:
            agent_state = dict(zip(self.agents, rows, strict=True))
        if self.agent_obs_only:
            return agent_state
        out: dict[str, Any] = {"agent_state": agent_state}
        global_space = self.global_state_space()
        if global_space is not None:
            out["global_state"] = self._global_state(rows, state, global_space)
        mask_space = self.action_mask_space()
        if mask_space is not None:
            counts = self._action_counts()
            masks = [np.full(n, float(live), np.float32) for n, live in zip(counts, alive, strict=True)]
            out["action_mask"] = (
                np.stack(masks) if isinstance(mask_space, spaces.Box) else dict(zip(self.agents, masks, strict=True))
            )
        out["alive"] = alive.astype(np.float32)
        return out

    def _global_state(self, rows: Sequence[Any], state: Any, space: spaces.Space[Any]) -> np.ndarray:
        if self.state_space is not None:
            shared = np.asarray(state, dtype=self.state_space.dtype)
        else:
            shared = np.concatenate([np.asarray(row, np.float32).reshape(-1) for row in rows])
        if not self.agent_specific_global_state:
            return shared
        own = np.stack([np.asarray(row) for row in rows])
        return np.concatenate([own, np.broadcast_to(shared, (len(rows), shared.size))], axis=1).astype(space.dtype)

    def agent_actions(self, action: Any, alive: np.ndarray) -> dict[str, Any]:
        """The actions of the agents still in the episode (``alive``), each checked against its own space."""
        if self.joint_action:
            digits = np.unravel_index(int(action), self._action_counts())
            starts = [int(s.start) for s in self.action_spaces if isinstance(s, spaces.Discrete)]
            values: Sequence[Any] = [int(d) + start for d, start in zip(digits, starts, strict=True)]
        elif self.stacked_actions:
            values = list(np.asarray(action))
        else:
            values = [action.get(agent) for agent in self.agents]
        out: dict[str, Any] = {}
        for agent, value, convert, live in zip(self.agents, values, self._action_converters, alive, strict=True):
            if live:
                if value is None:
                    raise ValueError(f"no action for agent {agent!r}, which is still in the episode")
                out[agent] = convert(value)
        return out

    @property
    def _action_converters(self) -> tuple[Converter, ...]:
        cached: tuple[Converter, ...] | None = self.__dict__.get("_converters")
        if cached is None:
            cached = tuple(
                action_converter(s, owner=f"agent {a!r}") for a, s in zip(self.agents, self.action_spaces, strict=True)
            )
            object.__setattr__(self, "_converters", cached)
        return cached

    def stack_actions(self, by_agent: Mapping[str, Any], alive: np.ndarray) -> Any:
        """Actions given as a dict by agent name, in the stacked form (agents not in the episode may be left out)."""
        unknown = sorted(set(by_agent) - set(self.agents))
        if unknown:
            raise ValueError(f"actions for unknown agents {unknown}; the agents are {list(self.agents)}")
        if not self.stacked_actions:
            return by_agent
        rows = []
        for agent, space, live in zip(self.agents, self.action_spaces, alive, strict=True):
            if agent not in by_agent and live:
                raise ValueError(f"no action for agent {agent!r}, which is still in the episode")
            rows.append(np.asarray(by_agent[agent] if agent in by_agent else blank(space)))
        return np.stack(rows)

    def reward(self, per_agent: Mapping[str, Any]) -> np.ndarray:
        """Per-agent rewards (absent agents: 0) as ``(agents,)``, or their sum as ``(1,)`` with ``shared_reward``."""
        values = np.array([float(per_agent.get(agent, 0.0)) for agent in self.agents], dtype=np.float64)
        if self.shared_reward:
            return np.array([values.sum()], dtype=np.float32)
        return values.astype(np.float32)


def _same_stackable(items: Sequence[spaces.Space[Any]]) -> bool:
    return isinstance(items[0], STACKABLE) and all(space == items[0] for space in items[1:])
