"""DI-engine's ``act_scale`` for dizoo's continuous envs: the agent acts in [-1, 1], clipped, then mapped linearly
onto the action bounds.

DI-engine's envs apply ``affine_transform(action, min_val=low, max_val=high)``, which clips the action into [-1, 1]
before scaling it, so an unbounded policy (PPO's and A2C's Gaussian samples) acts on them unchanged. ding states the
same in the env's chain: ``continuous_action_clip`` declares a clipping action space (a
:class:`~ding.envs.conversion.ClippedBox`) and ``normalized_action`` keeps it, so envs and managers clip a finite
action outside [-1, 1] where they would otherwise refuse it (NaN and infinities are still refused).

Example:
    >>> from gymnasium import spaces
    >>> from ding.envs.env_wrappers import update_space
    >>> update_space(spaces.Box(-1.0, 1.0, (1,)), spaces.Box(-2.0, 2.0, (1,)), spaces.Box(-1, 1, (1,)),
    ...              list(ACT_SCALE_STEPS)).action
    ClippedBox(-1.0, 1.0, (1,), float32)
"""

from __future__ import annotations

ACT_SCALE_STEPS: tuple[str, ...] = ("continuous_action_clip", "normalized_action")
"""The wrapper steps of ``act_scale=True`` (outermost last): clip into the bounds, then act in [-1, 1]."""
