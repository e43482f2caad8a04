"""A manager declares the spaces of the envs its constructors build, evaluator chains included (issue F6)."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from ding.envs import DingEnvWrapper
from ding.envs.env_manager import create_env_manager

ATARI = {"env_id": "BreakoutNoFrameskip-v4", "env_wrapper": "atari_default"}


@pytest.mark.parametrize(("caller", "bounded"), [("collector", True), ("evaluator", False)])
def test_the_declared_reward_space_follows_the_caller_of_the_constructor(caller: str, bounded: bool) -> None:
    manager = create_env_manager({"type": "base"}, [partial(DingEnvWrapper, cfg=ATARI, caller=caller)])
    declared = manager.reward_space
    assert bool(np.all(np.isfinite(declared.high))) is bounded, "clip_reward is in the training chain only"
    manager.launch()  # the built env agrees with the declaration (a mismatch raises here)
    assert manager.reward_space == declared
    manager.close()


def test_a_constructor_given_an_env_instance_declares_nothing() -> None:
    import gymnasium as gym

    manager = create_env_manager({"type": "base"}, [partial(DingEnvWrapper, gym.make("CartPole-v1"))])
    assert manager.observation_space.shape == (4,)  # read from the env it builds, not declared
    manager.close()
