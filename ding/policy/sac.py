"""SAC: soft actor-critic for continuous actions in [-1, 1], with twin critics and a tuned temperature."""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ding.errors import ConfigError
from ding.model.qac import QAC, qac_from_config
from ding.policy.base import Policy, check_number
from ding.policy.device import policy_device
from ding.policy.nstep import NStepRule
from ding.policy.obs_batch import obs_tensor
from ding.policy.registry import POLICY_REGISTRY


@POLICY_REGISTRY.register("sac")
class SACPolicy(Policy):
    """Soft actor-critic (DI-engine's ``sac`` policy and config keys).

    - The actor is a tanh-squashed Gaussian (reparameterized); actions lie in ``[-1, 1]``, so the env
      should rescale them (e.g. Pendulum's ``act_scale``).
    - Critic targets are ``r + discount_factor * (1 - done) * (min_i Q'_i(s', a') - alpha * log pi(a'|s'))``
      with ``a' ~ pi(s')`` and target critics ``Q'`` moved towards the online ones by ``learn.target_theta``
      after every update. A time-limit cut is not an end (its value is bootstrapped); ``learn.ignore_done``
      bootstraps after real ends as well. With ``model.twin_critic=False`` one critic is used.
    - ``learn.auto_alpha`` tunes the temperature so that the policy's entropy approaches
      ``learn.target_entropy`` (default ``-action_size``), starting from ``learn.alpha``; otherwise alpha
      stays fixed. ``learn.log_space`` optimizes ``log alpha`` (else alpha itself, kept positive).
    - Collection samples from the actor; while fewer than ``random_collect_size`` env steps have been
      collected, actions are uniform in ``[-1, 1]`` (the serial pipeline collects those before any update).
      Evaluation takes the mean action ``tanh(mu)``.

    Example:
        >>> policy = SACPolicy({'model': {'obs_shape': 3, 'action_shape': 1}}, seed=0)
        >>> out = policy.collect_mode.forward({0: np.zeros(3, np.float32)})
        >>> sorted(out[0]), out[0]['action'].shape, bool(abs(out[0]['action'][0]) <= 1)
        (['action'], (1,), True)
        >>> policy.collect_mode.collect_kwargs(0), policy.collect_mode.collect_kwargs(10000)
        ({'random': True}, {'random': False})
    """

    algorithm = "SAC"

    config: ClassVar[dict[str, Any]] = {
        "cuda": False,
        "on_policy": False,
        "priority": False,
        "priority_IS_weight": False,
        "random_collect_size": 10000,
        "model": {
            "twin_critic": True,
            "actor_head_hidden_size": 256,
            "actor_head_layer_num": 2,
            "critic_head_hidden_size": 256,
            "critic_head_layer_num": 2,
            "activation": "relu",
            "encoder_hidden_size_list": None,
            "action_space": "reparameterization",  # DI-engine's name for SAC's tanh-squashed Gaussian actor
        },
        "learn": {
            "update_per_collect": 1,
            "reparameterization": True,  # DI-engine's key: the actor learns through reparameterized samples
            "batch_size": 256,
            "learning_rate_q": 3e-4,
            "learning_rate_policy": 3e-4,
            "learning_rate_alpha": 3e-4,
            "target_theta": 0.005,
            "discount_factor": 0.99,
            "alpha": 0.2,
            "auto_alpha": True,
            "log_space": True,
            "target_entropy": None,
            "ignore_done": False,
            "learner": {
                "hook": {
                    "log_show_after_iter": 1000,
                    "save_ckpt_after_iter": 10000,
                    "save_ckpt_after_run": True,
                    "save_ckpt_after_minutes": None,  # also ckpt/iteration_<N> every that many minutes of wall time
                },
            },
        },
        "collect": {"n_sample": 1, "unroll_len": 1},
        "eval": {"evaluator": {"eval_freq": 5000}},
        # share_frames: store each frame of frame-stack observations once (None: when the env's spec stacks frames)
        # save_in_checkpoint: ckpt/iteration_<N> holds the replay buffer, and resuming from it restores the buffer
        "other": {"replay_buffer": {"replay_buffer_size": 1000000, "share_frames": None, "save_in_checkpoint": False}},
    }

    def __init__(self, cfg: Mapping[str, Any] | None = None, model: nn.Module | None = None, seed: int = 0) -> None:
        super().__init__(cfg)
        config = self._cfg
        self._check_config()
        self._device = policy_device(config.cuda)
        model_cfg = {key: value for key, value in dict(config.model).items() if key != "action_space"}
        built = model if model is not None else qac_from_config(model_cfg)
        if not isinstance(built, QAC):
            raise ConfigError(f"SAC needs a QAC model (actor and critics), got {type(built).__name__}")
        self._model: QAC = built.to(self._device)
        self._target_model = copy.deepcopy(self._model)
        self._target_model.requires_grad_(False)
        learn = config.learn
        self._critic_optimizer = torch.optim.Adam(self._model.critic.parameters(), lr=learn.learning_rate_q)
        self._actor_optimizer = torch.optim.Adam(self._model.actor.parameters(), lr=learn.learning_rate_policy)
        self._auto_alpha = bool(learn.auto_alpha)
        self._log_space = bool(learn.log_space)
        initial = math.log(learn.alpha) if self._log_space else float(learn.alpha)
        self._alpha_param = torch.tensor([initial], dtype=torch.float32, device=self._device, requires_grad=True)
        self._alpha_optimizer = torch.optim.Adam([self._alpha_param], lr=learn.learning_rate_alpha)
        target_entropy = learn.target_entropy
        self._target_entropy = float(-self._model.action_size if target_entropy is None else target_entropy)
        self._gamma = float(learn.discount_factor)
        self._rng = np.random.default_rng(seed)
        self._learn_iter = 0

    @classmethod
    def nstep_rule_of(cls, cfg: Mapping[str, Any]) -> NStepRule:
        """One-step samples discounted by ``learn.discount_factor``."""
        return NStepRule(1, float(cfg["learn"]["discount_factor"]))

    def _check_config(self) -> None:
        cfg = self._cfg
        learn = cfg.learn
        if cfg.priority or cfg.priority_IS_weight:
            raise ConfigError("policy.priority / priority_IS_weight: prioritized replay is not supported; set False")
        if cfg.on_policy:
            raise ConfigError("policy.on_policy: SAC learns off-policy; set on_policy=False")
        if learn.reparameterization is not True:
            raise ConfigError(
                f"policy.learn.reparameterization must be True (SAC's actor learns through reparameterized samples), "
                f"got {learn.reparameterization!r}"
            )
        if cfg.model.action_space != "reparameterization":
            raise ConfigError(
                f"policy.model.action_space must be 'reparameterization' (SAC's tanh-squashed Gaussian actor), got "
                f"{cfg.model.action_space!r}"
            )
        check_number(cfg.random_collect_size, "policy.random_collect_size", integer=True, low=0)
        check_number(learn.update_per_collect, "policy.learn.update_per_collect", integer=True, low=1)
        check_number(learn.batch_size, "policy.learn.batch_size", integer=True, low=1)
        for key in ("learning_rate_q", "learning_rate_policy", "learning_rate_alpha", "alpha"):
            check_number(learn[key], f"policy.learn.{key}", low=0.0, open_low=True)
        check_number(learn.target_theta, "policy.learn.target_theta", low=0.0, high=1.0, open_low=True)
        check_number(learn.discount_factor, "policy.learn.discount_factor", low=0.0, high=1.0, open_low=True)
        if learn.target_entropy is not None:
            check_number(learn.target_entropy, "policy.learn.target_entropy")
        check_number(cfg.collect.n_sample, "policy.collect.n_sample", integer=True, low=1)
        if cfg.collect.unroll_len != 1:
            raise ConfigError(f"policy.collect.unroll_len must be 1 for SAC, got {cfg.collect.unroll_len!r}")

    # ----- modes ---------------------------------------------------------------------------------
    @property
    def model(self) -> QAC:
        return self._model

    @property
    def learn_iter(self) -> int:
        """Updates made so far."""
        return self._learn_iter

    @property
    def alpha(self) -> float:
        """The current entropy temperature."""
        return float(self._alpha().item())

    def _alpha(self) -> torch.Tensor:
        return self._alpha_param.exp() if self._log_space else self._alpha_param.clamp(min=1e-8)

    # ----- acting --------------------------------------------------------------------------------
    def _obs_tensor(self, observations: Sequence[Any]) -> torch.Tensor:
        return obs_tensor(observations, self._device, self._model.obs_shape)

    def _act(self, obs: Mapping[int, Any], deterministic: bool) -> dict[int, dict[str, Any]]:
        if not obs:
            raise ValueError("no observations to act on: the dict {env_id: obs} is empty")
        env_ids = list(obs)
        with torch.no_grad():
            x = self._obs_tensor([obs[env_id] for env_id in env_ids])
            action = self._model.deterministic(x) if deterministic else self._model.sample(x)[0]
        actions = action.cpu().numpy().astype(np.float32)
        return {env_id: {"action": actions[i]} for i, env_id in enumerate(env_ids)}

    def _forward_collect(self, obs: Mapping[int, Any], random: bool = False) -> dict[int, dict[str, Any]]:
        if random:
            if not obs:
                raise ValueError("no observations to act on: the dict {env_id: obs} is empty")
            size = self._model.action_size
            return {env_id: {"action": self._rng.uniform(-1.0, 1.0, size).astype(np.float32)} for env_id in list(obs)}
        return self._act(obs, deterministic=False)

    def _forward_eval(self, obs: Mapping[int, Any]) -> dict[int, dict[str, Any]]:
        return self._act(obs, deterministic=True)

    def _collect_kwargs(self, env_step: int) -> dict[str, Any]:
        return {"random": env_step < int(self._cfg.random_collect_size)}

    def _process_transition(self, obs: Any, output: Mapping[str, Any], timestep: Any) -> dict[str, Any]:
        reward = np.asarray(timestep.reward, dtype=np.float64).reshape(-1)
        if reward.size != 1:
            raise ValueError(f"SAC needs a scalar reward per step, got shape {np.shape(timestep.reward)}")
        return {
            "obs": obs,
            "action": np.asarray(output["action"], dtype=np.float32),
            "reward": float(reward[0]),
            "next_obs": timestep.obs,
            "done": bool(timestep.terminated),
        }

    def _get_train_sample(self, traj: list[dict[str, Any]], episode_over: bool) -> list[dict[str, Any]]:
        return self.nstep_rule_of(self._cfg).samples(traj, episode_over)

    # ----- learning ------------------------------------------------------------------------------
    def _collate(self, batch: Sequence[Mapping[str, Any]]) -> dict[str, torch.Tensor]:
        device = self._device

        def floats(key: str) -> torch.Tensor:
            return torch.tensor([float(sample[key]) for sample in batch], dtype=torch.float32, device=device)

        actions = np.stack([np.asarray(sample["action"], dtype=np.float32).reshape(-1) for sample in batch])
        return {
            "obs": self._obs_tensor([sample["obs"] for sample in batch]),
            "next_obs": self._obs_tensor([sample["next_obs"] for sample in batch]),
            "action": torch.from_numpy(actions).to(device),
            "reward": floats("reward"),
            "done": floats("done"),
            "discount": floats("discount"),
        }

    @staticmethod
    def _min_q(q: torch.Tensor) -> torch.Tensor:
        return q.min(dim=0).values if q.dim() == 2 else q

    def td_target(self, data: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """The soft Q target of a collated batch (no gradient)."""
        done = torch.zeros_like(data["done"]) if self._cfg.learn.ignore_done else data["done"]
        with torch.no_grad():
            next_action, next_log_prob = self._model.sample(data["next_obs"])
            next_q = self._min_q(self._target_model.compute_critic(data["next_obs"], next_action)["q_value"])
            soft_value = next_q - self._alpha() * next_log_prob
            return data["reward"] + data["discount"] * (1.0 - done) * soft_value

    def _forward_learn(self, batch: list[dict[str, Any]]) -> dict[str, float]:
        if not batch:
            raise ValueError("cannot learn from an empty batch")
        data = self._collate(batch)
        model = self._model

        target = self.td_target(data)
        q = model.compute_critic(data["obs"], data["action"])["q_value"]
        q_all = q if q.dim() == 2 else q.unsqueeze(0)
        critic_loss = sum(F.mse_loss(q_i, target) for q_i in q_all)
        assert isinstance(critic_loss, torch.Tensor)
        self._critic_optimizer.zero_grad()
        critic_loss.backward()
        self._critic_optimizer.step()

        action, log_prob = model.sample(data["obs"])
        model.critic.requires_grad_(False)
        try:
            new_q = self._min_q(model.compute_critic(data["obs"], action)["q_value"])
        finally:
            model.critic.requires_grad_(True)
        alpha = self._alpha().detach()
        policy_loss = (alpha * log_prob - new_q).mean()
        self._actor_optimizer.zero_grad()
        policy_loss.backward()
        self._actor_optimizer.step()

        stats = {
            "cur_lr_q": float(self._critic_optimizer.param_groups[0]["lr"]),
            "cur_lr_p": float(self._actor_optimizer.param_groups[0]["lr"]),
            "critic_loss": float(critic_loss.item()),
            "policy_loss": float(policy_loss.item()),
            "q_value": float(q_all.mean().item()),
            "target_q_value": float(target.mean().item()),
            "entropy": float(-log_prob.mean().item()),
        }
        if self._auto_alpha:
            entropy_gap = (log_prob.detach() + self._target_entropy).mean()
            alpha_term = self._alpha_param if self._log_space else self._alpha()
            alpha_loss = -(alpha_term * entropy_gap).sum()
            self._alpha_optimizer.zero_grad()
            alpha_loss.backward()
            self._alpha_optimizer.step()
            if not self._log_space:
                with torch.no_grad():
                    self._alpha_param.clamp_(min=1e-8)
            stats["alpha_loss"] = float(alpha_loss.item())
        self._learn_iter += 1
        self._update_target()
        stats["alpha"] = self.alpha
        stats["total_loss"] = stats["critic_loss"] + stats["policy_loss"] + stats.get("alpha_loss", 0.0)
        return stats

    def _update_target(self) -> None:
        theta = float(self._cfg.learn.target_theta)
        with torch.no_grad():
            for target, online in zip(self._target_model.parameters(), self._model.parameters(), strict=True):
                target.mul_(1.0 - theta).add_(online, alpha=theta)

    # ----- state ---------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Model, target model, optimizers, temperature and update count (what a checkpoint holds)."""
        return {
            "model": self._model.state_dict(),
            "target_model": self._target_model.state_dict(),
            "optimizer_q": self._critic_optimizer.state_dict(),
            "optimizer_policy": self._actor_optimizer.state_dict(),
            "optimizer_alpha": self._alpha_optimizer.state_dict(),
            "alpha_param": self._alpha_param.detach().clone(),
            "learn_iter": self._learn_iter,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`state_dict` gave; only ``model`` is required."""
        self._load_model_only(state)
        if "target_model" in state:
            self._target_model.load_state_dict(state["target_model"])
        else:
            self._target_model.load_state_dict(self._model.state_dict())
        for key, optimizer in (
            ("optimizer_q", self._critic_optimizer),
            ("optimizer_policy", self._actor_optimizer),
            ("optimizer_alpha", self._alpha_optimizer),
        ):
            if key in state:
                optimizer.load_state_dict(state[key])
        if "alpha_param" in state:
            with torch.no_grad():
                self._alpha_param.copy_(torch.as_tensor(state["alpha_param"], dtype=torch.float32))
        self._learn_iter = int(state.get("learn_iter", 0))

    def _load_model_only(self, state: Mapping[str, Any]) -> None:
        if not isinstance(state, Mapping) or "model" not in state:
            raise ValueError("a SAC state dict needs a 'model' entry (the model's state_dict)")
        self._model.load_state_dict(state["model"])
