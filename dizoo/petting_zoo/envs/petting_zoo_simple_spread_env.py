"""MPE's ``simple_spread`` (PettingZoo's MPE, now in ``mpe2``) under DI-engine's ``petting_zoo`` env name and keys."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from ding.envs import ENV_REGISTRY
from ding.envs.base_env import env_wrapper_key
from ding.envs.multi_agent import ParallelEnvWrapper, parallel_env_factory
from ding.errors import ConfigError
from ding.utils.accepts import count, typed, unit
from dizoo.env_ids import check_env_id
from dizoo.flags import bool_flag
from dizoo.limits import MAX_AGENTS
from dizoo.petting_zoo.envs.spread_state import SpreadGlobalState

MPE_IDS = ("simple_spread_v3",)
"""MPE envs the suite supports (DI-engine's ``simple_spread_v2`` is ``mpe2``'s ``simple_spread_v3``)."""
ENV_FAMILIES = ("mpe",)


def _positive_int(cfg: Mapping[str, Any], key: str) -> int:
    value = cfg.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(f"petting_zoo: {key} must be an int >= 1, got {value!r}")
    return value


@ENV_REGISTRY.register("petting_zoo")
class PettingZooEnv(ParallelEnvWrapper):
    """``simple_spread``: ``n_agent`` agents cover as many landmarks, avoiding collisions (DI-engine's keys).

    The observation is DI-engine's dict (``agent_state`` ``(n_agent, 6 * n_agent)``, ``global_state`` = DI-engine's
    team state of ``2 * n_agent ** 2 + 4 * n_agent`` values, ``action_mask``, and ``alive``), or ``agent_state``
    alone with ``agent_obs_only``; actions are one ``Discrete(5)`` per agent (``MultiDiscrete``), or
    ``Box(0, 1, (n_agent, 5))`` with ``continuous_actions``; the reward is the agents' sum ``(1,)`` as in DI-engine
    (``shared_reward=False``: one per agent).
    ``joint_action`` makes the agents' actions one ``Discrete(5 ** n_agent)``, for single-agent policies.
    Episodes last ``max_cycles`` steps. ``local_ratio`` weighs each agent's own collision penalty against the
    shared distance term, as ``mpe2`` does; ``env_kwargs`` passes other ``simple_spread_v3`` arguments.

    Example:
        >>> PettingZooEnv.spaces_from_config({'agent_obs_only': True, 'joint_action': True}).shapes
        ((3, 18), 125, (1,))
        >>> PettingZooEnv.spaces_from_config({'n_agent': 2, 'n_landmark': 2}).observation['agent_state'].shape
        (2, 12)
    """

    config: ClassVar[dict[str, Any]] = {
        "env_family": "mpe",
        "env_id": typed("simple_spread_v3"),
        "n_agent": count(3, high=MAX_AGENTS),
        "n_landmark": count(3, low=0, high=MAX_AGENTS),
        "max_cycles": count(25),
        "continuous_actions": False,
        "local_ratio": unit(0.5),
        "agent_obs_only": False,
        "agent_specific_global_state": False,
        "shared_reward": True,
        "joint_action": False,
        "env_kwargs": {},
        "env_wrapper": env_wrapper_key(None),
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(None, cfg or {})

    @classmethod
    def parallel_env_call(cls, cfg: Mapping[str, Any]) -> tuple[str, Callable[..., Any], dict[str, Any]]:
        family = cfg.get("env_family", "mpe")
        if family not in ENV_FAMILIES:
            raise ConfigError(f"petting_zoo: env_family {family!r} is not supported; supported: {list(ENV_FAMILIES)}")
        env_id = check_env_id(cfg.get("env_id"), MPE_IDS, "petting_zoo")
        n_agent, n_landmark = _positive_int(cfg, "n_agent"), _positive_int(cfg, "n_landmark")
        if n_landmark != n_agent:
            raise ConfigError(
                f"petting_zoo: {env_id} has as many landmarks as agents; n_landmark is {n_landmark} but n_agent is "
                f"{n_agent}: set n_landmark={n_agent}"
            )
        local_ratio = cfg.get("local_ratio")
        if isinstance(local_ratio, bool) or not isinstance(local_ratio, (int, float)) or not 0 <= local_ratio <= 1:
            raise ConfigError(f"petting_zoo: local_ratio must be a number in [0, 1], got {local_ratio!r}")
        extra = cfg.get("env_kwargs") or {}
        if not isinstance(extra, Mapping):
            raise ConfigError(f"petting_zoo: env_kwargs must be a dict, got {type(extra).__name__} {extra!r}")
        kwargs = {
            "N": n_agent,
            "max_cycles": _positive_int(cfg, "max_cycles"),
            "continuous_actions": bool_flag(cfg, "continuous_actions", "petting_zoo"),
            "local_ratio": float(local_ratio),
        }
        clashes = sorted(set(extra) & set(kwargs))
        if clashes:
            raise ConfigError(f"petting_zoo: env_kwargs {clashes} are set by the env's own keys; set those instead")
        name = f"mpe2.{env_id}"
        return (
            f"{name} with DI-engine's global state",
            _with_spread_state(parallel_env_factory(name)),
            {
                **kwargs,
                **extra,
            },
        )


def _with_spread_state(factory: Callable[..., Any]) -> Callable[..., Any]:
    """``factory``'s envs with DI-engine's global state (:class:`SpreadGlobalState`)."""
    return functools.partial(_build_with_spread_state, factory)


def _build_with_spread_state(factory: Callable[..., Any], **kwargs: Any) -> SpreadGlobalState:
    return SpreadGlobalState(factory(**kwargs))
