"""ding's wrapper collection: every wrapper registered by name with its space rule.

:mod:`.base` derives each wrapper from its one ``space_rule`` (keyword arguments declared by the
rule's parameters, checked by :mod:`.arguments`). Modules by concern: :mod:`.atari` (ALE-specific
episode handling), :mod:`.repeat` (repeating actions); frame processing in
:mod:`.image_resize` (resizing, gray scale, scaling to float), :mod:`.image_crop` (fixed and
random crops), :mod:`.image_axes` (channel order, flips) and :mod:`.frame_stack`, on the shared
helpers of :mod:`.image`; :mod:`.observation` (flattening, previous action/reward),
:mod:`.action`, :mod:`.hybrid_action`, :mod:`.reward`, :mod:`.normalization` and :mod:`.episode`.
:mod:`.di_engine` gives DI-engine's names for the same classes and its two helper functions.
Task tools: :mod:`.multitask` (several envs behind one spec, ``task_id``), :mod:`.curriculum` (task sampling by
progress) and :mod:`.profiler` (call timings, cProfile).

A chain may name a wrapper by its registered name (``'warp_frame'``), its class name
(``'WarpFrameWrapper'``) or a DI-engine name (``'WarpFrame'``).
"""

from ding.envs.env_wrappers.action import (
    ActionOffsetWrapper,
    ContinuousActionClipWrapper,
    DiscreteActionWrapper,
    NormalizedActionWrapper,
    TemporallyCorrelatedNoiseWrapper,
    TimeShiftWrapper,
)
from ding.envs.env_wrappers.atari import (
    EpisodicLifeWrapper,
    FireResetWrapper,
    MaxAndSkipWrapper,
    NoopResetWrapper,
    RamWrapper,
    TerminalOnLifeLossWrapper,
)
from ding.envs.env_wrappers.base import (
    WRAPPER_REGISTRY,
    DingActionWrapper,
    DingObservationWrapper,
    DingRewardWrapper,
    DingWrapper,
    register_wrapper,
    wrapper_alias,
)
from ding.envs.env_wrappers.curriculum import CurriculumWrapper
from ding.envs.env_wrappers.di_engine import (
    AllinObsWrapper,
    ClipRewardEnv,
    EpisodicLifeEnv,
    FireResetEnv,
    FrameStack,
    MaxAndSkipEnv,
    NoopResetEnv,
    ObsNormEnv,
    RewardNormEnv,
    ScaledFloatFrame,
    TransposeWrapper,
    WarpFrame,
    create_env_wrapper,
    get_default_wrappers,
)
from ding.envs.env_wrappers.episode import (
    EvalEpisodeReturnWrapper,
    NonEpisodicWrapper,
    RandomFirstEpisodeLengthWrapper,
    RecordEpisodeStatisticsWrapper,
    TimeLimitWrapper,
)
from ding.envs.env_wrappers.episode_history import EpisodeHistory
from ding.envs.env_wrappers.frame_stack import FrameStackWrapper
from ding.envs.env_wrappers.history import ActionObservationWrapper, ObsPlusPrevActRewWrapper
from ding.envs.env_wrappers.hybrid_action import GymHybridDictActionWrapper
from ding.envs.env_wrappers.image_axes import FrameFlipWrapper, ImageChannelFirstWrapper, ObsTransposeWrapper
from ding.envs.env_wrappers.image_crop import EpisodicRandomFrameCropWrapper, FrameCropWrapper
from ding.envs.env_wrappers.image_resize import (
    FrameResizeWrapper,
    GrayScaleWrapper,
    ScaledFloatFrameWrapper,
    WarpFrameWrapper,
)
from ding.envs.env_wrappers.multitask import MultitaskEnv, TaskIdWrapper, merge_task_spaces
from ding.envs.env_wrappers.normalization import (
    ObsNormWrapper,
    RewardNormWrapper,
    RunningMeanStd,
    StaticObsNormWrapper,
)
from ding.envs.env_wrappers.observation import FlatObsWrapper, FlattenObservationWrapper
from ding.envs.env_wrappers.presets import PRESETS, preset_chain
from ding.envs.env_wrappers.profiler import ProfilerWrapper
from ding.envs.env_wrappers.repeat import ActionRepeatWrapper, FrameSkipWrapper
from ding.envs.env_wrappers.reward import (
    ClipRewardWrapper,
    DelayRewardWrapper,
    RewardInObsWrapper,
    ScalarRewardWrapper,
)
from ding.envs.env_wrappers.transformers import TransformedSpace, TransformersWrapper
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
    "ActionObservationWrapper",
    "ActionOffsetWrapper",
    "ActionRepeatWrapper",
    "AllinObsWrapper",
    "ClipRewardEnv",
    "ClipRewardWrapper",
    "ContinuousActionClipWrapper",
    "CurriculumWrapper",
    "DelayRewardWrapper",
    "DingActionWrapper",
    "DingObservationWrapper",
    "DingRewardWrapper",
    "DingWrapper",
    "DiscreteActionWrapper",
    "EpisodeHistory",
    "EpisodicLifeEnv",
    "EpisodicLifeWrapper",
    "EpisodicRandomFrameCropWrapper",
    "EvalEpisodeReturnWrapper",
    "FireResetEnv",
    "FireResetWrapper",
    "FlatObsWrapper",
    "FlattenObservationWrapper",
    "FrameCropWrapper",
    "FrameFlipWrapper",
    "FrameResizeWrapper",
    "FrameSkipWrapper",
    "FrameStack",
    "FrameStackWrapper",
    "GrayScaleWrapper",
    "GymHybridDictActionWrapper",
    "ImageChannelFirstWrapper",
    "MaxAndSkipEnv",
    "MaxAndSkipWrapper",
    "MultitaskEnv",
    "NonEpisodicWrapper",
    "NoopResetEnv",
    "NoopResetWrapper",
    "NormalizedActionWrapper",
    "ObsNormEnv",
    "ObsNormWrapper",
    "ObsPlusPrevActRewWrapper",
    "ObsTransposeWrapper",
    "ProfilerWrapper",
    "RamWrapper",
    "RandomFirstEpisodeLengthWrapper",
    "RecordEpisodeStatisticsWrapper",
    "RewardInObsWrapper",
    "RewardNormEnv",
    "RewardNormWrapper",
    "RunningMeanStd",
    "ScalarRewardWrapper",
    "ScaledFloatFrame",
    "ScaledFloatFrameWrapper",
    "StaticObsNormWrapper",
    "TaskIdWrapper",
    "TemporallyCorrelatedNoiseWrapper",
    "TerminalOnLifeLossWrapper",
    "TimeLimitWrapper",
    "TimeShiftWrapper",
    "TransformedSpace",
    "TransformersWrapper",
    "TransposeWrapper",
    "WarpFrame",
    "WarpFrameWrapper",
    "WrapperChain",
    "WrapperStep",
    "apply_wrappers",
    "create_env_wrapper",
    "get_default_wrappers",
    "merge_task_spaces",
    "preset_chain",
    "register_wrapper",
    "resolve_wrappers",
    "trace_spaces",
    "update_shape",
    "update_space",
    "wrapper_alias",
]
