"""Multi-agent model shapes from env spaces (``policy.multi_agent``): DI-engine's ``mavac`` keys, filled and checked.

The env gives DI-engine's multi-agent observation dict: ``agent_state`` ``(agents, agent_obs)``, ``global_state``
``(global_obs,)`` or ``(agents, global_obs)``; actions are one ``Discrete(n)`` per agent (``MultiDiscrete``) or a
``Box`` ``(agents, k)``. The model config names one agent's sizes: ``agent_num``, ``agent_obs_shape``,
``global_obs_shape`` and ``action_shape``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from gymnasium import spaces

from ding.config.shapes import fill_or_check, same_shape
from ding.envs.values.spaces import EnvSpaces
from ding.errors import ConfigError

AGENT_SHAPE_KEYS = ("agent_num", "agent_obs_shape", "global_obs_shape", "action_shape")


def agent_shapes(env_spaces: EnvSpaces, env_type: str) -> dict[str, Any]:
    """The multi-agent model keys for an env's spaces.

    Example:
        >>> obs = spaces.Dict({'agent_state': spaces.Box(-1, 1, (3, 18)), 'global_state': spaces.Box(-1, 1, (54,))})
        >>> agent_shapes(EnvSpaces(obs, spaces.MultiDiscrete([5, 5, 5])), 'petting_zoo')
        {'agent_num': 3, 'agent_obs_shape': 18, 'global_obs_shape': 54, 'action_shape': 5}
    """
    obs = env_spaces.observation
    agent_state = obs.spaces.get("agent_state") if isinstance(obs, spaces.Dict) else None
    global_state = obs.spaces.get("global_state") if isinstance(obs, spaces.Dict) else None
    if (
        not isinstance(agent_state, spaces.Box)
        or len(agent_state.shape) != 2
        or not isinstance(global_state, spaces.Box)
        or len(global_state.shape) not in (1, 2)
    ):
        raise ConfigError(
            f"policy.multi_agent needs DI-engine's multi-agent observation dict (agent_state (agents, obs), "
            f"global_state (obs,) or (agents, obs)), but env {env_type!r} produces {obs}"
        )
    agents = int(agent_state.shape[0])
    if len(global_state.shape) == 2 and global_state.shape[0] != agents:
        raise ConfigError(f"env {env_type!r}: global_state {global_state.shape} is not one row per agent ({agents})")
    return {
        "agent_num": agents,
        "agent_obs_shape": int(agent_state.shape[1]),
        "global_obs_shape": int(global_state.shape[-1]),
        "action_shape": _action_shape(env_spaces.action, agents, env_type),
    }


def _action_shape(space: spaces.Space[Any], agents: int, env_type: str) -> int:
    if isinstance(space, spaces.MultiDiscrete) and space.nvec.shape == (agents,) and len(set(space.nvec)) == 1:
        return int(space.nvec[0])
    if isinstance(space, spaces.Box) and len(space.shape) == 2 and space.shape[0] == agents:
        return int(space.shape[1])
    raise ConfigError(
        f"policy.multi_agent needs one action per agent, all alike (MultiDiscrete([n] * {agents}) or a Box "
        f"({agents}, k)), but env {env_type!r} takes {space}"
    )


def fill_agent_shapes(policy_cfg: Mapping[str, Any], env_spaces: EnvSpaces, env_type: str) -> dict[str, Any]:
    """A copy of ``policy_cfg`` whose ``model`` has :data:`AGENT_SHAPE_KEYS` from the env; given ones must agree.

    >>> obs = spaces.Dict({'agent_state': spaces.Box(-1, 1, (2, 4)), 'global_state': spaces.Box(-1, 1, (2, 6))})
    >>> env_spaces = EnvSpaces(obs, spaces.Box(0, 1, (2, 3)))
    >>> fill_agent_shapes({'model': {'agent_num': 2}}, env_spaces, 'mine')['model']['global_obs_shape']
    6
    """
    policy = copy.deepcopy(dict(policy_cfg))
    model = dict(policy.get("model") or {})
    for key, expected in agent_shapes(env_spaces, env_type).items():
        source = f"env {env_type!r} gives {expected!r} ({env_spaces.observation}, actions {env_spaces.action})"
        fill_or_check(model, key, expected, same_shape, source)
    policy["model"] = model
    return policy
