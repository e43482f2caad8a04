"""N-step returns: turn one env's transitions into training samples, and compute double-DQN targets.

A transition is a dict with ``obs``, ``action``, ``reward`` (a float), ``next_obs`` and ``done``
(the episode *terminated*: a time-limit cut is not done, so its value is bootstrapped). A sample
built from transitions ``t .. t+k-1`` (``k = nstep``, fewer at the end of an episode) holds

- ``reward``: ``r_t + g r_{t+1} + ... + g^(k-1) r_{t+k-1}``,
- ``next_obs``: the observation after step ``t+k-1``, ``done``: whether that step terminated,
- ``discount``: ``g^k``, the weight of the bootstrapped value,

so that the target is ``reward + discount * (1 - done) * Q'(next_obs)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from ding.errors import ConfigError


def nstep_samples(
    traj: Sequence[Mapping[str, Any]], nstep: int, gamma: float, episode_over: bool
) -> list[dict[str, Any]]:
    """Samples for the leading transitions of ``traj`` (one env's, in order) whose n-step window is known.

    While the episode goes on, transition ``i`` is ready once ``i + nstep`` transitions exist; when
    ``episode_over``, every transition is, with a shorter window at the end. The caller drops as many
    leading transitions as samples are returned.

    Example:
        >>> traj = [dict(obs=t, action=0, reward=float(t + 1), next_obs=t + 1, done=t == 2) for t in range(3)]
        >>> def show(samples):
        ...     return [(s['obs'], s['reward'], s['next_obs'], s['done'], s['discount']) for s in samples]
        >>> show(nstep_samples(traj[:2], 2, 0.5, episode_over=False))
        [(0, 2.0, 2, False, 0.25)]
        >>> show(nstep_samples(traj, 2, 0.5, episode_over=True))
        [(0, 2.0, 2, False, 0.25), (1, 3.5, 3, True, 0.25), (2, 3.0, 3, True, 0.5)]
    """
    if not isinstance(nstep, int) or isinstance(nstep, bool) or nstep < 1:
        raise ConfigError(f"policy.nstep must be an int >= 1, got {nstep!r}")
    count = len(traj) if episode_over else max(0, len(traj) - nstep + 1)
    samples = []
    for start in range(count):
        window = traj[start : start + nstep]
        reward = 0.0
        for offset, transition in enumerate(window):
            reward += gamma**offset * float(transition["reward"])
        first, last = traj[start], window[-1]
        samples.append(
            {
                "obs": first["obs"],
                "action": first["action"],
                "reward": reward,
                "next_obs": last["next_obs"],
                "done": bool(last["done"]),
                "discount": gamma ** len(window),
            }
        )
    return samples


@dataclasses.dataclass(frozen=True)
class NStepRule:
    """How a policy turns one env's transitions into samples: :func:`nstep_samples` with ``nstep`` and ``gamma``.

    A policy states it (``Policy.nstep_rule_of``) so that a replay buffer which keeps transitions rather than
    samples (:class:`~ding.worker.frame_buffer.FrameStackReplayBuffer`) builds the same samples.

    Example:
        >>> rule = NStepRule(nstep=2, gamma=0.5)
        >>> traj = [dict(obs=t, action=0, reward=1.0, next_obs=t + 1, done=False) for t in range(3)]
        >>> [(s['obs'], s['reward'], s['discount']) for s in rule.samples(traj, episode_over=False)]
        [(0, 1.5, 0.25), (1, 1.5, 0.25)]
    """

    nstep: int
    gamma: float

    def samples(self, traj: Sequence[Mapping[str, Any]], episode_over: bool) -> list[dict[str, Any]]:
        """:func:`nstep_samples` of ``traj`` with this rule's ``nstep`` and ``gamma``."""
        return nstep_samples(traj, self.nstep, self.gamma, episode_over)


def double_dqn_target(
    reward: torch.Tensor,
    discount: torch.Tensor,
    done: torch.Tensor,
    next_q_online: torch.Tensor,
    next_q_target: torch.Tensor,
) -> torch.Tensor:
    """``reward + discount * (1 - done) * Q_target(next_obs, argmax_a Q_online(next_obs, a))`` per sample.

    The online network picks the next action and the target network values it (double DQN).

    Example:
        >>> target = double_dqn_target(
        ...     reward=torch.tensor([1.0, 2.0]), discount=torch.tensor([0.5, 0.5]), done=torch.tensor([0.0, 1.0]),
        ...     next_q_online=torch.tensor([[0.0, 1.0], [1.0, 0.0]]),
        ...     next_q_target=torch.tensor([[10.0, 4.0], [7.0, 8.0]]),
        ... )
        >>> target.tolist()
        [3.0, 2.0]
    """
    best = next_q_online.argmax(dim=-1, keepdim=True)
    next_value = next_q_target.gather(-1, best).squeeze(-1)
    return reward + discount * (1.0 - done) * next_value
