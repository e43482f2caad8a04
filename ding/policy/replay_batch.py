"""One-step replay transitions of off-policy methods (DQN, C51, SAC, discrete SAC): built from a step, collated into
tensors, and the target network moved towards the online one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

REPLAY_INDEX, REPLAY_ID, IS_WEIGHT = "replay_buffer_idx", "replay_unique_id", "IS"
"""Keys a prioritized replay buffer adds to each sample it draws (DI-engine's): the slot, the push number (so that
an update for a sample evicted meanwhile is skipped) and the importance-sampling weight."""


def transition(algorithm: str, obs: Any, timestep: Any, **policy_data: Any) -> dict[str, Any]:
    """The replay entry of one step: ``obs``, the policy's data (its ``action``, ...), ``reward``, ``next_obs`` and
    ``done`` (a real end: a time-limit cut is bootstrapped). The reward must be one number.

    >>> from types import SimpleNamespace
    >>> step = SimpleNamespace(obs=1, reward=np.array([0.5]), terminated=True)
    >>> transition('DQN', 0, step, action=1)
    {'obs': 0, 'action': 1, 'reward': 0.5, 'next_obs': 1, 'done': True}
    """
    reward = np.asarray(timestep.reward, dtype=np.float64).reshape(-1)
    if reward.size != 1:
        raise ValueError(f"{algorithm} needs a scalar reward per step, got shape {np.shape(timestep.reward)}")
    return {
        "obs": obs,
        **policy_data,
        "reward": float(reward[0]),
        "next_obs": timestep.obs,
        "done": bool(timestep.terminated),
    }


def collate_transitions(
    batch: Sequence[Mapping[str, Any]],
    obs_batch: Callable[[Sequence[Any]], torch.Tensor],
    device: torch.device,
    discrete: bool,
) -> dict[str, torch.Tensor]:
    """Samples (transitions with their n-step ``discount``) as tensors: ``obs`` / ``next_obs`` by ``obs_batch``,
    ``action`` int64 ``(B,)`` (``(B, branches)`` for a multi-discrete action) when ``discrete`` else float32
    ``(B, k)``, and float32 ``reward``, ``done``, ``discount``.

    >>> sample = {'obs': np.zeros(2), 'next_obs': np.ones(2), 'action': 1, 'reward': 1.0, 'done': False,
    ...           'discount': 0.99}
    >>> data = collate_transitions([sample], lambda xs: torch.tensor(np.stack(xs)), torch.device('cpu'), True)
    >>> data['action'], data['discount']
    (tensor([1]), tensor([0.9900]))
    """

    def floats(key: str) -> torch.Tensor:
        return torch.tensor([float(sample[key]) for sample in batch], dtype=torch.float32, device=device)

    if discrete:  # an int per sample, or an int per branch of a multi-discrete action
        actions = np.stack([np.asarray(sample["action"], dtype=np.int64) for sample in batch])
        action = torch.from_numpy(actions).to(device)
    else:
        stacked = np.stack([np.asarray(sample["action"], dtype=np.float32).reshape(-1) for sample in batch])
        action = torch.from_numpy(stacked).to(device)
    return {
        "obs": obs_batch([sample["obs"] for sample in batch]),
        "next_obs": obs_batch([sample["next_obs"] for sample in batch]),
        "action": action,
        "reward": floats("reward"),
        "done": floats("done"),
        "discount": floats("discount"),
    }


def done_mask(data: Mapping[str, torch.Tensor], ignore_done: bool) -> torch.Tensor:
    """The ``done`` flags a target bootstraps by: ``data['done']``, or zeros with ``learn.ignore_done`` (bootstrap
    after real ends too).

    >>> done_mask({'done': torch.tensor([1.0, 0.0])}, False).tolist(), done_mask({'done': torch.ones(2)}, True).tolist()
    ([1.0, 0.0], [0.0, 0.0])
    """
    return torch.zeros_like(data["done"]) if ignore_done else data["done"]


def soft_update(target: nn.Module, online: nn.Module, theta: float) -> None:
    """Move every parameter of ``target`` towards ``online``'s by the fraction ``theta`` (Polyak averaging).

    >>> target, online = nn.Linear(1, 1), nn.Linear(1, 1)
    >>> soft_update(target, online, 1.0)
    >>> bool(torch.equal(target.weight, online.weight))
    True
    """
    with torch.no_grad():
        for target_param, online_param in zip(target.parameters(), online.parameters(), strict=True):
            target_param.mul_(1.0 - theta).add_(online_param, alpha=theta)
