"""PPO's arithmetic: GAE advantages, the clipped surrogate loss and the KL estimators (no policy state here)."""

from __future__ import annotations

import numpy as np
import torch

KL_TYPES = ("k1", "k2", "k3")
"""DI-engine's Monte-Carlo estimators of KL(new || reference) from ``log_ratio = logp_new - logp_reference``."""


def gae_advantages(
    reward: np.ndarray,
    value: np.ndarray,
    next_value: np.ndarray,
    done: np.ndarray,
    gamma: float,
    lam: float,
) -> np.ndarray:
    """Generalized advantage estimates of one trajectory (arrays of length T, in time order).

    ``delta_t = r_t + gamma * (1 - done_t) * next_value_t - value_t`` and
    ``A_t = delta_t + gamma * lam * (1 - done_t) * A_{t+1}``; ``done_t`` is a real end (termination),
    after which nothing is bootstrapped. For several agents ``value`` and ``next_value`` are ``(T, agents)``;
    ``reward`` is ``(T,)`` (the team's, the same for every agent) or ``(T, agents)``, ``done`` is ``(T,)``.

    >>> gae_advantages(np.array([1.0, 1.0]), np.array([0.5, 0.5]), np.array([0.5, 2.0]), np.array([0.0, 1.0]), 0.9, 0.5)
    array([1.175, 0.5  ])
    >>> gae_advantages(np.ones(2), np.full((2, 2), 0.5), np.array([[0.5, 0.5], [2.0, 0.0]]), np.array([0, 1]), 0.9, 0.5)
    array([[1.175, 1.175],
           [0.5  , 0.5  ]])
    """
    value, next_value = (np.asarray(x, dtype=np.float64) for x in (value, next_value))
    reward = np.asarray(reward, dtype=np.float64)
    not_done = 1.0 - np.asarray(done, dtype=np.float64)
    columns = value.shape[1:]
    if (
        value.ndim not in (1, 2)
        or next_value.shape != value.shape
        or not_done.shape != value.shape[:1]
        or reward.shape not in (value.shape, value.shape[:1])
    ):
        raise ValueError(
            "gae_advantages needs value and next_value of one shape (T,) or (T, agents), reward of that shape or "
            f"(T,), and done (T,); got shapes {reward.shape}, {value.shape}, {next_value.shape}, {not_done.shape}"
        )
    if columns:
        reward = reward.reshape(len(reward), -1)
        not_done = not_done[:, None]
    delta = reward + gamma * not_done * next_value - value
    advantages = np.zeros_like(delta)
    running = np.zeros(columns)
    for t in range(len(delta) - 1, -1, -1):
        running = delta[t] + gamma * lam * not_done[t] * running
        advantages[t] = running
    return advantages


def kl_estimate(log_ratio: torch.Tensor, kl_type: str) -> torch.Tensor:
    """The mean of DI-engine's estimator ``kl_type`` of KL(new || reference), ``log_ratio = logp_new - logp_ref``.

    ``'k1'``: ``log_ratio``; ``'k2'``: ``log_ratio ** 2 / 2``; ``'k3'``: ``exp(-log_ratio) - 1 + log_ratio``.

    >>> [round(kl_estimate(torch.tensor([0.5]), kind).item(), 4) for kind in KL_TYPES]
    [0.5, 0.125, 0.1065]
    """
    if kl_type == "k1":
        return log_ratio.mean()
    if kl_type == "k2":
        return (log_ratio.pow(2) / 2).mean()
    if kl_type == "k3":
        return (torch.exp(-log_ratio) - 1 + log_ratio).mean()
    raise ValueError(f"kl_type must be one of {list(KL_TYPES)}, got {kl_type!r}")


def ppo_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantage: torch.Tensor,
    value: torch.Tensor,
    return_: torch.Tensor,
    entropy: torch.Tensor,
    clip_ratio: float,
    value_weight: float,
    entropy_weight: float,
    weight: torch.Tensor | None = None,
) -> dict[str, torch.Tensor]:
    """PPO's losses of a batch: ``total = policy + value_weight * value - entropy_weight * entropy``.

    ``policy`` is the negated clipped surrogate ``-mean(min(r * A, clip(r, 1 - eps, 1 + eps) * A))``
    with ``r = exp(logp - old_logp)``; ``value`` is ``0.5 * mean((return - value) ** 2)``; ``entropy`` the
    mean entropy. ``approx_kl`` and ``clipfrac`` (the fraction of clipped ratios) are for logging. ``weight``
    (the shape of ``logp``) makes every mean a weighted one: 0 leaves an entry out (an agent no longer in the
    episode).

    >>> out = ppo_loss(torch.log(torch.tensor([1.5])), torch.zeros(1), torch.ones(1), torch.zeros(1),
    ...                torch.ones(1), torch.zeros(1), 0.2, 0.5, 0.01)
    >>> round(out['policy_loss'].item(), 4), out['value_loss'].item(), round(out['total_loss'].item(), 4)
    (-1.2, 0.5, -0.95)
    """

    def mean(x: torch.Tensor) -> torch.Tensor:
        return x.mean() if weight is None else (x * weight).sum() / weight.sum().clamp_min(1e-8)

    log_ratio = logp - old_logp
    ratio = log_ratio.exp()
    surrogate = ratio * advantage
    clipped = ratio.clamp(1.0 - clip_ratio, 1.0 + clip_ratio) * advantage
    policy_loss = -mean(torch.min(surrogate, clipped))
    value_loss = 0.5 * mean((return_ - value).pow(2))
    entropy_loss = mean(entropy)
    total = policy_loss + value_weight * value_loss - entropy_weight * entropy_loss
    with torch.no_grad():
        approx_kl = mean((ratio - 1.0) - log_ratio)
        clipfrac = mean(((ratio - 1.0).abs() > clip_ratio).float())
    return {
        "total_loss": total,
        "policy_loss": policy_loss,
        "value_loss": value_loss,
        "entropy_loss": entropy_loss,
        "approx_kl": approx_kl,
        "clipfrac": clipfrac,
    }
