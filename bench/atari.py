"""The Atari workload: Pong with the Atari chain in ding, gymnasium and envpool, and one-env variants of the chain.

Every face plays ``ALE/Pong-v5`` without ALE's own frame skipping or sticky actions, with 30 random no-ops at a
reset, 4 frames per step and the max over the last two, 84x84 gray frames, a stack of 4:

* ding: the dizoo ``atari`` env (``atari_default``, training variant: it also presses FIRE at a reset, clips
  rewards and ends episodes at lost lives, which Pong has none of), ALE's gray screens (gray-then-max);
* gymnasium: ``AtariPreprocessing`` + ``FrameStackObservation`` on ``gym.make('ALE/Pong-v5', frameskip=1)``
  (ALE's RGB screen as the env's observation; the wrapper reads ALE's gray screens for its frames);
* envpool: ``Pong-v5`` with lives ending episodes and clipped rewards, as ding's chain (:mod:`bench.peers`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

from bench.contenders import Contender, EnvCase, EnvpoolTask
from ding.envs.env_wrappers import preset_chain
from dizoo.atari.envs import AtariEnv

PONG_ID = "ALE/Pong-v5"
PONG_ACTIONS = 6


def gym_atari(env_id: str = PONG_ID) -> gym.Env[Any, Any]:
    """gymnasium's Atari preprocessing and frame stack: the standard settings, as ding's chain."""
    raw = gym.make(env_id, frameskip=1, repeat_action_probability=0.0)
    return FrameStackObservation(AtariPreprocessing(raw, noop_max=30, frame_skip=4, screen_size=84), 4)


def ding_atari(env_id: str = PONG_ID, **cfg: Any) -> AtariEnv:
    """ding's dizoo Atari env with its default chain (``cfg`` overrides keys)."""
    return AtariEnv({"env_id": env_id, **cfg})


PONG = EnvCase(
    "pong",
    "Pong with the Atari chain (noop 30, skip 4 with max of 2, 84x84 gray, stack 4)",
    partial(AtariEnv, {"env_id": PONG_ID}),  # the class itself, so managers see its declared spaces (as configs do)
    partial(gym_atari, PONG_ID),
    actions=PONG_ACTIONS,
    envpool=EnvpoolTask(
        "Pong-v5",
        {
            "repeat_action_probability": 0.0,
            "noop_max": 30,
            "frame_skip": 4,
            "img_height": 84,
            "img_width": 84,
            "stack_num": 4,
            "gray_scale": True,
            "episodic_life": True,
            "reward_clip": True,
            "use_fire_reset": True,
        },
    ),
)
ATARI_CASES = {PONG.name: PONG}


def frame_by_frame_chain() -> list[Any]:
    """``atari_default`` (training) with ``max_and_skip`` stepping the gymnasium env frame by frame.

    A diagnostic of the benchmark: it shows what driving the emulator directly saves.
    """
    chain = preset_chain("atari_default", train=True)
    return [
        ("max_and_skip", {"skip": 4, "direct_emulator": False}) if _name(item) == "max_and_skip" else item
        for item in chain
    ]


def _name(item: Any) -> str:
    return str(item[0] if isinstance(item, tuple) else item)


@dataclasses.dataclass(frozen=True)
class Variant:
    """One single-env variant of the chain: a label and how to build it (``ding``: a ding env, else gymnasium)."""

    key: str
    label: str
    build: Callable[[], Any]
    ding: bool


VARIANTS: dict[str, Variant] = {
    v.key: v
    for v in [
        Variant("ding", "ding `atari` env, `atari_default` (gray-then-max; the default)", partial(ding_atari), True),
        Variant(
            "ding_rgb",
            "ding `atari` env, `atari_default`, `obs_type='rgb'` (max-then-gray)",
            partial(ding_atari, obs_type="rgb"),
            True,
        ),
        Variant(
            "ding_frames",
            "ding, gray-then-max, emulator stepped frame by frame (direct path off; diagnostic)",
            lambda: ding_atari(env_wrapper=frame_by_frame_chain()),
            True,
        ),
        Variant(
            "ding_reseed",
            "ding, gray-then-max, `reseed_each_episode=True` (a ROM reload per episode, DI-engine's seeding)",
            partial(ding_atari, reseed_each_episode=True),
            True,
        ),
        Variant("gym", "gymnasium `AtariPreprocessing` + `FrameStackObservation`", partial(gym_atari), False),
    ]
}


class SingleEnv(Contender):
    """One env of a :class:`Variant`, stepped in this process (reset at the end of each episode)."""

    def __init__(self, case: EnvCase, variant: Variant) -> None:
        super().__init__(case, 1)
        self.variant = variant
        self.key = variant.key
        self.label = variant.label
        self.env: Any = None

    def start(self) -> None:
        self.env = self.variant.build()
        if self.variant.ding:
            self.env.seed(0)
            self.env.reset()
        else:
            self.env.reset(seed=0)

    def step_batch(self, row: list[int], array: np.ndarray) -> int:
        if self.variant.ding:
            if self.env.step(row[0]).done:
                self.env.reset()
        else:
            _, _, terminated, truncated, _ = self.env.step(row[0])
            if terminated or truncated:
                self.env.reset()
        return 1

    def reset_all(self) -> None:
        self.env.reset()

    def close(self) -> None:
        if self.env is not None:
            self.env.close()
            self.env = None


def play(variant: Variant, steps: int, actions: int = PONG_ACTIONS) -> None:
    """Build ``variant`` and step it ``steps`` times with the benchmark's action table (for instruction counts)."""
    from bench.contenders import ActionTape

    tape = ActionTape.make(1, length=max(steps, 1), actions=actions)
    contender = SingleEnv(PONG, variant)
    contender.start()
    for row, array in zip(tape.rows[:steps], tape.arrays[:steps], strict=True):
        contender.step_batch(row, array)
    contender.close()


if __name__ == "__main__":
    import sys

    play(VARIANTS[sys.argv[1]], int(sys.argv[2]))
