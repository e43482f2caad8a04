"""Atari and dm_control envs with the float32 frames ding's chains gave before frames stayed uint8 to the model.

Each class is its suite's env with ``scaled_float_frame`` put back where the chain had it (Atari: right after
``warp_frame``; dm_control pixels: after ``frame_stack``), so a run can be compared with the uint8 chain.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ding.envs import ENV_REGISTRY
from ding.envs.env_wrappers import WrapperChain
from dizoo.atari.envs.atari_env import AtariEnv
from dizoo.dmc.envs.dmc_env import DMCEnv


def with_scaled_float_frame(chain: WrapperChain, after: str) -> list[Any]:
    """``chain`` with ``scaled_float_frame`` right after its step named ``after``."""
    items = list(chain or [])  # type: ignore[arg-type]
    names = [item["type"] if isinstance(item, Mapping) else item for item in items]
    if after not in names:
        raise ValueError(f"the chain has no {after!r} step: {names}")
    items.insert(names.index(after) + 1, "scaled_float_frame")
    return items


@ENV_REGISTRY.register("atari_float_frames")
class FloatFramesAtariEnv(AtariEnv):
    @classmethod
    def wrapper_chain(cls, cfg: Mapping[str, Any]) -> WrapperChain:
        return with_scaled_float_frame(super().wrapper_chain(cfg), "warp_frame")


@ENV_REGISTRY.register("dmc_float_frames")
class FloatFramesDMCEnv(DMCEnv):
    @classmethod
    def wrapper_chain(cls, cfg: Mapping[str, Any]) -> WrapperChain:
        return with_scaled_float_frame(super().wrapper_chain(cfg), "frame_stack")
