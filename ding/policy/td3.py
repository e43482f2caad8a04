"""TD3: DDPG with twin critics, target policy smoothing and delayed actor updates (DI-engine's ``ding.policy.td3``)."""

from __future__ import annotations

from typing import Any, ClassVar

from ding.config.policy_registry import POLICY_REGISTRY
from ding.policy.ddpg import DDPGPolicy
from ding.utils.accepts import redeclare


@POLICY_REGISTRY.register("td3")
class TD3Policy(DDPGPolicy):
    """TD3 (DI-engine's ``td3`` policy and config keys): :class:`DDPGPolicy` with twin critics, target policy smoothing
    (``learn.noise``) and an actor updated every second update.

    Example:
        >>> policy = TD3Policy({'model': {'obs_shape': 3, 'action_shape': 1}}, seed=0)
        >>> policy.cfg.model.twin_critic, policy.cfg.learn.actor_update_freq, policy.cfg.learn.noise
        (True, 2, True)
    """

    algorithm = "TD3"

    config: ClassVar[dict[str, Any]] = redeclare(
        DDPGPolicy.config, {"model": {"twin_critic": True}, "learn": {"actor_update_freq": 2, "noise": True}}
    )
