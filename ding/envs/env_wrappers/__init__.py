"""ding's wrapper collection: every wrapper registered by name with a static shape rule.

Modules by concern: :mod:`.atari` (ALE-specific episode handling); frame processing in
:mod:`.image_resize` (resizing, gray scale, scaling to float), :mod:`.image_crop` (fixed and
random crops), :mod:`.image_axes` (channel order, flips) and :mod:`.frame_stack`, on the shared
helpers of :mod:`.image`; :mod:`.observation` (flattening, previous action/reward),
:mod:`.action`, :mod:`.reward`, :mod:`.normalization` and :mod:`.episode`.
"""

from ding.envs.env_wrappers import (  # noqa: F401  (imported for their registrations)
    action,
    atari,
    episode,
    frame_stack,
    history,
    image_axes,
    image_crop,
    image_resize,
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
