"""ding's wrapper collection: every wrapper registered by name with a static shape rule.

Modules by concern: :mod:`.atari` (ALE-specific episode handling), :mod:`.image` (frame
processing), :mod:`.observation` (flattening, previous action/reward), :mod:`.action`,
:mod:`.reward`, :mod:`.normalization` and :mod:`.episode`.
"""

from ding.envs.env_wrappers import (  # noqa: F401  (imported for their registrations)
    action,
    atari,
    episode,
    history,
    image,
    normalization,
    observation,
    reward,
)
from ding.envs.env_wrappers.base import (
    WRAPPER_REGISTRY,
    DingActionWrapper,
    DingObservationWrapper,
    DingRewardWrapper,
    DingWrapper,
    register_wrapper,
)
from ding.envs.env_wrappers.presets import PRESETS, preset_chain
from ding.envs.env_wrappers.update import (
    WrapperChain,
    WrapperStep,
    apply_wrappers,
    resolve_wrappers,
    trace_spaces,
    update_shape,
    update_space,
)

__all__ = [
    "PRESETS",
    "WRAPPER_REGISTRY",
    "DingActionWrapper",
    "DingObservationWrapper",
    "DingRewardWrapper",
    "DingWrapper",
    "WrapperChain",
    "WrapperStep",
    "apply_wrappers",
    "preset_chain",
    "register_wrapper",
    "resolve_wrappers",
    "trace_spaces",
    "update_shape",
    "update_space",
]
