"""Multi-agent envs: PettingZoo ``ParallelEnv`` s behind the ``BaseEnv`` API, every manager included.

- :class:`AgentLayout` (:mod:`.layout`): the rule that packs per-agent spaces and values into one env's
  (stacked on an agent axis, or a dict by agent name; DI-engine's ``agent_state`` / ``global_state`` /
  ``action_mask`` observation, plus ``alive``).
- :class:`ParallelGymEnv` (:mod:`.gym_adapter`): a ``ParallelEnv`` as one gymnasium env, agents that leave
  mid-episode included.
- :class:`ParallelEnvWrapper` (:mod:`.env`): the ``BaseEnv`` (registered ``parallel_env_wrapper``).
- :class:`ParallelEpisodeStatistics` (:mod:`.statistics`): each agent's return and length, around a ``ParallelEnv``.
"""

from ding.envs.multi_agent.env import LAYOUT_SWITCHES, ParallelEnvWrapper, parallel_env_factory
from ding.envs.multi_agent.gym_adapter import ParallelGymEnv, read_layout
from ding.envs.multi_agent.layout import AgentLayout, blank, stack_space
from ding.envs.multi_agent.statistics import ParallelEpisodeStatistics

__all__ = [
    "LAYOUT_SWITCHES",
    "AgentLayout",
    "ParallelEnvWrapper",
    "ParallelEpisodeStatistics",
    "ParallelGymEnv",
    "blank",
    "parallel_env_factory",
    "read_layout",
    "stack_space",
]
