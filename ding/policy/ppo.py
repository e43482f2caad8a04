"""PPO: on-policy actor-critic with GAE advantages and the clipped surrogate objective (DI-engine's ``ppo``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn

from ding.errors import ConfigError
from ding.model.vac import ACTION_SPACES, vac_from_config
from ding.policy.base import Policy, check_number
from ding.policy.obs_batch import obs_tensor
from ding.policy.registry import POLICY_REGISTRY


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
    after which nothing is bootstrapped.

    >>> gae_advantages(np.array([1.0, 1.0]), np.array([0.5, 0.5]), np.array([0.5, 2.0]), np.array([0.0, 1.0]), 0.9, 0.5)
    array([1.175, 0.5  ])
    """
    reward, value, next_value = (np.asarray(x, dtype=np.float64) for x in (reward, value, next_value))
    not_done = 1.0 - np.asarray(done, dtype=np.float64)
    if not reward.shape == value.shape == next_value.shape == not_done.shape or reward.ndim != 1:
        raise ValueError(
            f"gae_advantages needs 1-D arrays of one length, got shapes {reward.shape}, {value.shape}, "
            f"{next_value.shape}, {not_done.shape}"
        )
    delta = reward + gamma * not_done * next_value - value
    advantages = np.zeros_like(delta)
    running = 0.0
    for t in range(len(delta) - 1, -1, -1):
        running = delta[t] + gamma * lam * not_done[t] * running
        advantages[t] = running
    return advantages


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
) -> dict[str, torch.Tensor]:
    """PPO's losses of a batch: ``total = policy + value_weight * value - entropy_weight * entropy``.

    ``policy`` is the negated clipped surrogate ``-mean(min(r * A, clip(r, 1 - eps, 1 + eps) * A))``
    with ``r = exp(logp - old_logp)``; ``value`` is ``0.5 * mean((return - value) ** 2)``; ``entropy`` the
    mean entropy. ``approx_kl`` and ``clipfrac`` (the fraction of clipped ratios) are for logging.

    >>> out = ppo_loss(torch.log(torch.tensor([1.5])), torch.zeros(1), torch.ones(1), torch.zeros(1),
    ...                torch.ones(1), torch.zeros(1), 0.2, 0.5, 0.01)
    >>> round(out['policy_loss'].item(), 4), out['value_loss'].item(), round(out['total_loss'].item(), 4)
    (-1.2, 0.5, -0.95)
    """
    log_ratio = logp - old_logp
    ratio = log_ratio.exp()
    surrogate = ratio * advantage
    clipped = ratio.clamp(1.0 - clip_ratio, 1.0 + clip_ratio) * advantage
    policy_loss = -torch.min(surrogate, clipped).mean()
    value_loss = 0.5 * (return_ - value).pow(2).mean()
    entropy_loss = entropy.mean()
    total = policy_loss + value_weight * value_loss - entropy_weight * entropy_loss
    with torch.no_grad():
        approx_kl = ((ratio - 1.0) - log_ratio).mean()
        clipfrac = ((ratio - 1.0).abs() > clip_ratio).float().mean()
    return {
        "total_loss": total,
        "policy_loss": policy_loss,
        "value_loss": value_loss,
        "entropy_loss": entropy_loss,
        "approx_kl": approx_kl,
        "clipfrac": clipfrac,
    }


@POLICY_REGISTRY.register("ppo")
class PPOPolicy(Policy):
    """Proximal policy optimization for discrete or continuous actions (DI-engine's ``ppo`` config keys).

    - Collection samples actions from the current policy and records their log-probabilities and the
      critic's values. A trajectory becomes training samples when its episode ends or when the
      on-policy pipeline cuts it at the end of a collection; advantages are GAE
      (``collect.discount_factor``, ``collect.gae_lambda``), bootstrapped with the value of the last
      next observation unless the episode terminated (a time-limit cut is bootstrapped).
    - Each collection is learned ``learn.epoch_per_collect`` times in shuffled minibatches of
      ``learn.batch_size`` (the pipeline does the shuffling); one update is one minibatch:
      clipped surrogate (``clip_ratio``), value loss (``value_weight``), entropy bonus
      (``entropy_weight``), advantages normalized per minibatch when ``adv_norm``, gradient norm
      clipped to ``grad_clip_value`` (None: no clipping).
    - ``action_space`` is ``'discrete'`` (categorical) or ``'continuous'`` (Gaussian with a
      state-independent log std; the sampled action is passed to the env unclipped). Evaluation is
      greedy: the most likely action, or the mean.

    Example:
        >>> policy = PPOPolicy({'model': {'obs_shape': 4, 'action_shape': 2}}, seed=0)
        >>> out = policy.collect_mode.forward({0: np.zeros(4, np.float32)})
        >>> sorted(out[0]), out[0]['action'] in (0, 1)
        (['action', 'logit', 'logp', 'value'], True)
    """

    algorithm = "PPO"

    config: ClassVar[dict[str, Any]] = {
        "cuda": False,
        "on_policy": True,
        "action_space": "discrete",
        "model": {
            "encoder_hidden_size_list": [64, 64, 128],
            "actor_head_hidden_size": 128,
            "actor_head_layer_num": 1,
            "critic_head_hidden_size": 128,
            "critic_head_layer_num": 1,
            "share_encoder": True,
            "activation": "relu",
            "sigma_init": 0.0,
        },
        "learn": {
            "epoch_per_collect": 10,
            "batch_size": 64,
            "learning_rate": 0.0003,
            "value_weight": 0.5,
            "entropy_weight": 0.0,
            "clip_ratio": 0.2,
            "adv_norm": True,
            "grad_clip_value": 0.5,
            "learner": {
                "hook": {
                    "log_show_after_iter": 100,
                    "save_ckpt_after_iter": 10000,
                    "save_ckpt_after_run": True,
                    "save_ckpt_after_minutes": None,  # also ckpt/iteration_<N> every that many minutes of wall time
                },
            },
        },
        "collect": {"n_sample": 64, "unroll_len": 1, "discount_factor": 0.99, "gae_lambda": 0.95},
        "eval": {"evaluator": {"eval_freq": 1000}},
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None, model: nn.Module | None = None, seed: int = 0) -> None:
        super().__init__(cfg)
        config = self._cfg
        self._check_config()
        if config.cuda and not torch.cuda.is_available():
            raise ConfigError("policy.cuda is True but torch sees no CUDA device; set policy.cuda=False")
        self._device = torch.device("cuda" if config.cuda else "cpu")
        self._continuous = config.action_space == "continuous"
        self._model = (model if model is not None else vac_from_config(dict(config.model), config.action_space)).to(
            self._device
        )
        self._optimizer = torch.optim.Adam(self._model.parameters(), lr=config.learn.learning_rate)
        self._gamma = float(config.collect.discount_factor)
        self._lambda = float(config.collect.gae_lambda)
        self._generator = torch.Generator().manual_seed(seed)
        self._learn_iter = 0

    def _check_config(self) -> None:
        cfg = self._cfg
        if not cfg.on_policy:
            raise ConfigError(f"policy.on_policy: {self.algorithm} learns on-policy; set on_policy=True")
        if cfg.action_space not in ACTION_SPACES:
            raise ConfigError(f"policy.action_space must be one of {list(ACTION_SPACES)}, got {cfg.action_space!r}")
        learn, collect = cfg.learn, cfg.collect
        check_number(learn.epoch_per_collect, "policy.learn.epoch_per_collect", integer=True, low=1)
        check_number(learn.batch_size, "policy.learn.batch_size", integer=True, low=1)
        check_number(learn.learning_rate, "policy.learn.learning_rate", low=0.0, open_low=True)
        check_number(learn.value_weight, "policy.learn.value_weight", low=0.0)
        check_number(learn.entropy_weight, "policy.learn.entropy_weight", low=0.0)
        check_number(learn.clip_ratio, "policy.learn.clip_ratio", low=0.0, open_low=True)
        if learn.grad_clip_value is not None:
            check_number(learn.grad_clip_value, "policy.learn.grad_clip_value", low=0.0, open_low=True)
        check_number(collect.n_sample, "policy.collect.n_sample", integer=True, low=1)
        if collect.unroll_len != 1:
            raise ConfigError(f"policy.collect.unroll_len must be 1 for {self.algorithm}, got {collect.unroll_len!r}")
        check_number(collect.discount_factor, "policy.collect.discount_factor", low=0.0, high=1.0, open_low=True)
        check_number(collect.gae_lambda, "policy.collect.gae_lambda", low=0.0, high=1.0)

    # ----- modes ---------------------------------------------------------------------------------
    def _update_per_collect(self) -> int:
        return int(self._cfg.learn.epoch_per_collect)

    @property
    def model(self) -> nn.Module:
        return self._model

    @property
    def learn_iter(self) -> int:
        """Updates (minibatches) made so far."""
        return self._learn_iter

    # ----- distributions -------------------------------------------------------------------------
    def _distribution(self, logit: Any) -> torch.distributions.Distribution:
        if self._continuous:
            normal = torch.distributions.Normal(logit["mu"], logit["sigma"])
            return torch.distributions.Independent(normal, 1)
        return torch.distributions.Categorical(logits=logit)

    def _sample(self, logit: Any) -> torch.Tensor:
        """Actions drawn with the policy's own generator (the same seed gives the same actions)."""
        if self._continuous:
            noise = torch.randn(logit["mu"].shape, generator=self._generator).to(self._device)
            return logit["mu"] + logit["sigma"] * noise
        probs = torch.softmax(logit, dim=-1).cpu()
        return torch.multinomial(probs, 1, generator=self._generator).squeeze(-1).to(self._device)

    def _action_value(self, action: torch.Tensor, index: int) -> Any:
        if self._continuous:
            return action[index].cpu().numpy().astype(np.float32)
        return int(action[index])

    # ----- acting --------------------------------------------------------------------------------
    def _obs_tensor(self, observations: Sequence[Any]) -> torch.Tensor:
        return obs_tensor(observations, self._device)

    def _run_model(self, obs: Mapping[int, Any]) -> tuple[list[int], dict[str, Any]]:
        if not obs:
            raise ValueError("no observations to act on: the dict {env_id: obs} is empty")
        env_ids = list(obs)
        with torch.no_grad():
            out = self._model(self._obs_tensor([obs[env_id] for env_id in env_ids]))
        return env_ids, out

    def _logit_numpy(self, logit: Any, index: int) -> Any:
        if self._continuous:
            return {key: logit[key][index].cpu().numpy() for key in ("mu", "sigma")}
        return logit[index].cpu().numpy()

    def _forward_collect(self, obs: Mapping[int, Any]) -> dict[int, dict[str, Any]]:
        env_ids, out = self._run_model(obs)
        action = self._sample(out["logit"])
        logp = self._distribution(out["logit"]).log_prob(action)
        return {
            env_id: {
                "action": self._action_value(action, i),
                "logit": self._logit_numpy(out["logit"], i),
                "logp": float(logp[i]),
                "value": float(out["value"][i]),
            }
            for i, env_id in enumerate(env_ids)
        }

    def _forward_eval(self, obs: Mapping[int, Any]) -> dict[int, dict[str, Any]]:
        env_ids, out = self._run_model(obs)
        logit = out["logit"]
        greedy = logit["mu"] if self._continuous else logit.argmax(dim=-1)
        return {
            env_id: {"action": self._action_value(greedy, i), "logit": self._logit_numpy(logit, i)}
            for i, env_id in enumerate(env_ids)
        }

    def _collect_kwargs(self, env_step: int) -> dict[str, Any]:
        return {}

    def _process_transition(self, obs: Any, output: Mapping[str, Any], timestep: Any) -> dict[str, Any]:
        reward = np.asarray(timestep.reward, dtype=np.float64).reshape(-1)
        if reward.size != 1:
            raise ValueError(f"{self.algorithm} needs a scalar reward per step, got shape {np.shape(timestep.reward)}")
        return {
            "obs": obs,
            "action": output["action"],
            "logp": float(output["logp"]),
            "value": float(output["value"]),
            "reward": float(reward[0]),
            "next_obs": timestep.obs,
            "done": bool(timestep.terminated),
        }

    def _get_train_sample(self, traj: list[dict[str, Any]], episode_over: bool) -> list[dict[str, Any]]:
        """Nothing until the trajectory is over (the episode ended or the pipeline cut it); then all of it."""
        if not episode_over or not traj:
            return []
        last = traj[-1]
        bootstrap = 0.0
        if not last["done"]:
            with torch.no_grad():
                bootstrap = float(self._model(self._obs_tensor([last["next_obs"]]))["value"][0])
        value = np.array([t["value"] for t in traj])
        next_value = np.append(value[1:], bootstrap)
        done = np.array([t["done"] for t in traj], dtype=np.float64)
        reward = np.array([t["reward"] for t in traj])
        advantage = gae_advantages(reward, value, next_value, done, self._gamma, self._lambda)
        return [
            {
                "obs": t["obs"],
                "action": t["action"],
                "logp": t["logp"],
                "value": t["value"],
                "adv": float(advantage[i]),
                "return": float(advantage[i] + value[i]),
            }
            for i, t in enumerate(traj)
        ]

    # ----- learning ------------------------------------------------------------------------------
    def _collate(self, batch: Sequence[Mapping[str, Any]]) -> dict[str, torch.Tensor]:
        device = self._device

        def floats(key: str) -> torch.Tensor:
            return torch.tensor([float(sample[key]) for sample in batch], dtype=torch.float32, device=device)

        if self._continuous:
            actions = np.stack([np.asarray(sample["action"], dtype=np.float32) for sample in batch])
            action = torch.from_numpy(actions).to(device)
        else:
            action = torch.tensor([int(sample["action"]) for sample in batch], dtype=torch.int64, device=device)
        return {
            "obs": self._obs_tensor([sample["obs"] for sample in batch]),
            "action": action,
            "logp": floats("logp"),
            "adv": floats("adv"),
            "return": floats("return"),
        }

    def _forward_learn(self, batch: list[dict[str, Any]]) -> dict[str, float]:
        if not batch:
            raise ValueError("cannot learn from an empty batch")
        learn = self._cfg.learn
        data = self._collate(batch)
        advantage = data["adv"]
        if learn.adv_norm and len(batch) > 1:
            advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
        out = self._model(data["obs"])
        dist = self._distribution(out["logit"])
        losses = ppo_loss(
            dist.log_prob(data["action"]),
            data["logp"],
            advantage,
            out["value"],
            data["return"],
            dist.entropy(),
            float(learn.clip_ratio),
            float(learn.value_weight),
            float(learn.entropy_weight),
        )
        self._optimizer.zero_grad()
        losses["total_loss"].backward()
        if learn.grad_clip_value is not None:
            nn.utils.clip_grad_norm_(self._model.parameters(), float(learn.grad_clip_value))
        self._optimizer.step()
        self._learn_iter += 1
        return {
            "cur_lr": float(self._optimizer.param_groups[0]["lr"]),
            **{key: float(value.item()) for key, value in losses.items()},
            "value_mean": float(out["value"].mean().item()),
        }

    # ----- state ---------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Model, optimizer and update count (what a checkpoint holds)."""
        return {
            "model": self._model.state_dict(),
            "optimizer": self._optimizer.state_dict(),
            "learn_iter": self._learn_iter,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`state_dict` gave; only ``model`` is required."""
        self._load_model_only(state)
        if "optimizer" in state:
            self._optimizer.load_state_dict(state["optimizer"])
        self._learn_iter = int(state.get("learn_iter", 0))

    def _load_model_only(self, state: Mapping[str, Any]) -> None:
        if not isinstance(state, Mapping) or "model" not in state:
            raise ValueError(f"a {self.algorithm} state dict needs a 'model' entry (the model's state_dict)")
        self._model.load_state_dict(state["model"])
