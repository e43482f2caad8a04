"""Policies keep observations in the spec's dtype until the model: acting, stored transitions and learning."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from gymnasium import spaces

from ding.config.shapes import fill_model_shapes
from ding.envs.values.spaces import EnvSpaces
from ding.envs.values.timestep import BaseEnvTimestep
from ding.policy.a2c import A2CPolicy
from ding.policy.c51 import C51Policy
from ding.policy.dqn import DQNPolicy
from ding.policy.ppo import PPOPolicy
from ding.policy.sac import SACPolicy

FRAMES = spaces.Box(0, 255, (4, 36, 36), np.uint8)
CONV = [4, 8, 8, 16]

CASES: dict[str, tuple[type, spaces.Space[Any], dict[str, Any]]] = {
    "dqn": (DQNPolicy, spaces.Discrete(3), {"nstep": 1}),
    "c51": (C51Policy, spaces.Discrete(3), {"nstep": 1, "model": {"n_atom": 5}}),
    "ppo": (PPOPolicy, spaces.Discrete(3), {}),
    "a2c": (A2CPolicy, spaces.Discrete(3), {}),
    "sac": (SACPolicy, spaces.Box(-1, 1, (2,), np.float32), {}),
}


def _policy(name: str) -> Any:
    policy_cls, action, extra = CASES[name]
    cfg = fill_model_shapes({**extra, "model": {**extra.get("model", {})}}, EnvSpaces(FRAMES, action), "frames")
    cfg["model"]["encoder_hidden_size_list"] = CONV
    if name in ("ppo", "a2c"):
        cfg["action_space"] = "discrete"
    return policy_cls(cfg, seed=0)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_model_receives_uint8_frames_in_every_mode(name: str) -> None:
    policy = _policy(name)
    seen: list[torch.dtype] = []
    policy.model.obs_input.register_forward_pre_hook(lambda module, args: seen.append(args[0].dtype))
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 256, FRAMES.shape, dtype=np.uint8) for _ in range(6)]

    mode = policy.collect_mode
    kwargs = mode.collect_kwargs(0)
    transitions = []
    for t in range(4):
        outputs = mode.forward({0: frames[t]}, **kwargs)
        timestep = BaseEnvTimestep(frames[t + 1], np.ones(1, np.float32), t == 3, {})
        transitions.append(mode.process_transition(frames[t], outputs[0], timestep))
    samples = mode.get_train_sample(transitions, True)
    assert samples and all(s["obs"].dtype == np.uint8 for s in samples)
    assert all(s["next_obs"].dtype == np.uint8 for s in samples if "next_obs" in s)
    policy.eval_mode.forward({0: frames[4], 1: frames[5]})
    policy.learn_mode.forward(samples)
    assert seen and set(seen) == {torch.uint8}, seen
