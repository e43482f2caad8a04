"""DI-engine's names and entry points for ding's wrappers: other names for the same classes, no copies.

DI-engine's documentation names the Atari-era wrappers ``WarpFrame``, ``NoopResetEnv``, ...; its
0.5.3 source names two wrappers differently from ding. Each name below is bound to ding's
registered class and is also a config name (``update_shape(..., ['WarpFrame', 'FrameStack'])``),
like every registered class's own name. :func:`create_env_wrapper` and
:func:`get_default_wrappers` are DI-engine's functions, built on ding's chains and presets.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
from easydict import EasyDict

from ding.envs.env_wrappers.atari import EpisodicLifeWrapper, FireResetWrapper, MaxAndSkipWrapper, NoopResetWrapper
from ding.envs.env_wrappers.base import WRAPPER_REGISTRY, wrapper_alias
from ding.envs.env_wrappers.frame_stack import FrameStackWrapper
from ding.envs.env_wrappers.image_axes import ObsTransposeWrapper
from ding.envs.env_wrappers.image_resize import ScaledFloatFrameWrapper, WarpFrameWrapper
from ding.envs.env_wrappers.normalization import ObsNormWrapper, RewardNormWrapper
from ding.envs.env_wrappers.presets import preset_chain
from ding.envs.env_wrappers.reward import ClipRewardWrapper, RewardInObsWrapper
from ding.envs.env_wrappers.update import resolve_wrappers
from ding.errors import ConfigError

# The names DI-engine's documentation gives the classes (same defaults: noop_max=30, skip=4, size 84, n_frames=4).
NoopResetEnv = wrapper_alias("NoopResetEnv", NoopResetWrapper)
MaxAndSkipEnv = wrapper_alias("MaxAndSkipEnv", MaxAndSkipWrapper)
WarpFrame = wrapper_alias("WarpFrame", WarpFrameWrapper)
ScaledFloatFrame = wrapper_alias("ScaledFloatFrame", ScaledFloatFrameWrapper)
ClipRewardEnv = wrapper_alias("ClipRewardEnv", ClipRewardWrapper)
FrameStack = wrapper_alias("FrameStack", FrameStackWrapper)
ObsNormEnv = wrapper_alias("ObsNormEnv", ObsNormWrapper)
RewardNormEnv = wrapper_alias("RewardNormEnv", RewardNormWrapper)
EpisodicLifeEnv = wrapper_alias("EpisodicLifeEnv", EpisodicLifeWrapper)
FireResetEnv = wrapper_alias("FireResetEnv", FireResetWrapper)

# DI-engine 0.5.3 class names of wrappers that ding's classes name differently.
AllinObsWrapper = wrapper_alias("AllinObsWrapper", RewardInObsWrapper)
TransposeWrapper = wrapper_alias("TransposeWrapper", ObsTransposeWrapper)

_CALLERS = ("collector", "evaluator")


def create_env_wrapper(env: gym.Env[Any, Any], env_wrapper_cfg: Mapping[str, Any]) -> gym.Wrapper[Any, Any, Any, Any]:
    """Wrap ``env`` with the one wrapper ``{type, kwargs}`` describes (DI-engine's function).

    ``type`` is any name a chain accepts (registered name or class name); an ``import_names`` list, as
    in DI-engine, is imported first so that plug-in wrappers register.

    Example:
        >>> from gymnasium.envs.classic_control import CartPoleEnv
        >>> create_env_wrapper(CartPoleEnv(), {'type': 'FrameStack', 'kwargs': {'n_frames': 2}}).observation_space.shape
        (2, 4)
    """
    cfg = dict(copy.deepcopy(env_wrapper_cfg))
    import_names = cfg.pop("import_names", None)
    if import_names is not None:
        WRAPPER_REGISTRY.import_names([import_names] if isinstance(import_names, str) else import_names)
    (step,) = resolve_wrappers([cfg])
    return step.wrap(env)


def get_default_wrappers(env_wrapper_name: str, env_id: str | None = None, caller: str = "collector") -> list[EasyDict]:
    """The wrapper configs ``{type, kwargs}`` of a preset, for the collector or the evaluator (DI-engine's function).

    ``env_id`` is accepted for DI-engine's signature; ding's presets do not depend on it
    (``fire_reset`` itself does nothing in games without FIRE). An unknown preset raises
    :class:`~ding.errors.UnknownNameError` naming the known ones.

    Example:
        >>> [w.type for w in get_default_wrappers('gym_hybrid_default')]
        ['gym_hybrid_dict_action', 'eval_episode_return']
        >>> 'clip_reward' in [w.type for w in get_default_wrappers('atari_default', caller='evaluator')]
        False
    """
    if caller not in _CALLERS:
        raise ConfigError(f"get_default_wrappers caller must be one of {', '.join(_CALLERS)}; got {caller!r}")
    if env_id is not None and not isinstance(env_id, str):
        raise TypeError(f"get_default_wrappers env_id must be a str or None; got {env_id!r}")
    steps = resolve_wrappers(preset_chain(env_wrapper_name, train=caller == "collector"))
    return [EasyDict(type=step.name, kwargs=dict(step.kwargs)) for step in steps]
