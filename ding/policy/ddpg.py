"""DDPG and TD3: a deterministic actor trained through one or two Q critics, with Gaussian exploration noise."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn

from ding.errors import ConfigError
from ding.model.deterministic_qac import DeterministicQAC, deterministic_qac_from_config
from ding.policy.base import check_number
from ding.policy.registry import POLICY_REGISTRY
from ding.policy.replay_actor_critic import ReplayActorCritic
from ding.policy.replay_batch import collate_transitions, transition


@POLICY_REGISTRY.register("ddpg")
class DDPGPolicy(ReplayActorCritic):
    """Deep deterministic policy gradient (DI-engine's ``ddpg`` policy and config keys); :class:`TD3Policy` is the
    same algorithm with TD3's settings.

    - The actor gives an action in ``[-1, 1]`` (the env rescales it, e.g. ``act_scale``). Collection adds Gaussian
      noise of standard deviation ``collect.noise_sigma`` and clips to ``[-1, 1]``; uniform random actions for the
      first ``random_collect_size`` env steps; evaluation takes the actor's action.
    - Critic targets are ``r + discount_factor * (1 - done) * Q'(s', a')`` with ``a'`` the target actor's action
      (with ``learn.noise``: plus Gaussian noise of ``learn.noise_sigma`` clipped to ``learn.noise_range``, then to
      ``[-1, 1]``: target policy smoothing) and ``Q'`` the smaller of the target critics with ``model.twin_critic``.
      A time-limit cut is not an end; ``learn.ignore_done`` bootstraps after real ends as well.
    - The actor climbs the (first) critic every ``learn.actor_update_freq`` updates; the target model moves towards
      the model by ``learn.target_theta`` after every update. ``reward_batch_norm`` standardizes each batch's rewards.

    Example:
        >>> policy = DDPGPolicy({'model': {'obs_shape': 3, 'action_shape': 1}}, seed=0)
        >>> out = policy.collect_mode.forward({0: np.zeros(3, np.float32)})
        >>> out[0]['action'].shape, bool(abs(out[0]['action'][0]) <= 1)
        ((1,), True)
        >>> policy.collect_mode.collect_kwargs(0), policy.collect_mode.collect_kwargs(25000)
        ({'random': True}, {'random': False})
    """

    algorithm = "DDPG"
    critic_rate_key = "learning_rate_critic"
    actor_rate_key = "learning_rate_actor"
    rate_stats = ("cur_lr_critic", "cur_lr_actor")

    config: ClassVar[dict[str, Any]] = {
        "cuda": False,
        "on_policy": False,
        "priority": False,
        "priority_IS_weight": False,
        "random_collect_size": 25000,
        "transition_with_policy_data": False,  # DI-engine's key: transitions keep the action alone
        "action_space": "continuous",  # DI-engine's key; 'hybrid' action spaces are not here
        "reward_batch_norm": False,
        "multi_agent": False,
        "model": {
            "twin_critic": False,
            "action_space": "regression",  # DI-engine's name for the deterministic tanh actor
            "actor_head_hidden_size": 64,
            "actor_head_layer_num": 1,
            "critic_head_hidden_size": 64,
            "critic_head_layer_num": 1,
            "activation": "relu",
            "encoder_hidden_size_list": None,
        },
        "learn": {
            "update_per_collect": 1,
            "batch_size": 256,
            "learning_rate_actor": 1e-3,
            "learning_rate_critic": 1e-3,
            "ignore_done": False,
            "target_theta": 0.005,
            "discount_factor": 0.99,
            "actor_update_freq": 1,
            "noise": False,
            "noise_sigma": 0.2,
            "noise_range": {"min": -0.5, "max": 0.5},
            "learner": {
                "hook": {
                    "log_show_after_iter": 1000,
                    "save_ckpt_after_iter": 10000,
                    "save_ckpt_after_run": True,
                    "save_ckpt_after_minutes": None,  # also ckpt/iteration_<N> every that many minutes of wall time
                },
            },
        },
        "collect": {"n_sample": 1, "unroll_len": 1, "noise_sigma": 0.1},
        "eval": {"evaluator": {"eval_freq": 5000, "fail_after_episode_steps": None}},  # None: unbounded
        "other": {
            # share_frames: store each frame of frame-stack observations once (None: when the env's spec stacks frames)
            # save_in_checkpoint: ckpt/iteration_<N> holds the replay buffer, and resuming from it restores the buffer
            "replay_buffer": {"replay_buffer_size": 100000, "share_frames": None, "save_in_checkpoint": False},
        },
    }

    def _build_model(self, model: nn.Module | None) -> DeterministicQAC:
        model_cfg = {key: value for key, value in dict(self._cfg.model).items() if key != "action_space"}
        built = model if model is not None else deterministic_qac_from_config(model_cfg)
        if not isinstance(built, DeterministicQAC):
            raise ConfigError(
                f"{self.algorithm} needs a DeterministicQAC model (actor and critics), got {type(built).__name__}"
            )
        return built

    def _check_own_config(self) -> None:
        cfg = self._cfg
        learn = cfg.learn
        fixed = {
            "action_space": ("continuous", "the actor gives Box actions"),
            "multi_agent": (False, "single-agent here"),
            "transition_with_policy_data": (False, "transitions keep the action alone"),
        }
        for key, (value, why) in fixed.items():
            if cfg[key] != value:
                raise ConfigError(f"policy.{key} must be {value!r} for {self.algorithm} ({why}), got {cfg[key]!r}")
        if cfg.model.action_space != "regression":
            raise ConfigError(
                f"policy.model.action_space must be 'regression' ({self.algorithm}'s deterministic actor), got "
                f"{cfg.model.action_space!r}"
            )
        check_number(learn.actor_update_freq, "policy.learn.actor_update_freq", integer=True, low=1)
        check_number(learn.noise_sigma, "policy.learn.noise_sigma", low=0.0)
        check_number(cfg.collect.noise_sigma, "policy.collect.noise_sigma", low=0.0)
        noise_range = learn.noise_range
        if not isinstance(noise_range, Mapping) or set(noise_range) != {"min", "max"}:
            raise ConfigError(f"policy.learn.noise_range must be a dict of min and max, got {noise_range!r}")
        check_number(noise_range["min"], "policy.learn.noise_range.min")
        check_number(noise_range["max"], "policy.learn.noise_range.max", low=noise_range["min"])

    @property
    def model(self) -> DeterministicQAC:
        return self._model

    # ----- acting --------------------------------------------------------------------------------
    def _actions(self, obs: Mapping[int, Any], sigma: float) -> dict[int, dict[str, Any]]:
        env_ids = self._env_ids(obs)
        with torch.no_grad():
            action = self._model.compute_actor(self._obs_tensor([obs[env_id] for env_id in env_ids]))["action"]
        actions = action.cpu().numpy().astype(np.float32)
        if sigma > 0:
            noisy = actions + self._rng.normal(0.0, sigma, actions.shape)
            actions = np.clip(noisy, -1.0, 1.0).astype(np.float32)
        return {env_id: {"action": actions[i]} for i, env_id in enumerate(env_ids)}

    def _forward_collect(self, obs: Mapping[int, Any], random: bool = False) -> dict[int, dict[str, Any]]:
        if random:
            return self._uniform_box_actions(obs)
        return self._actions(obs, float(self._cfg.collect.noise_sigma))

    def _forward_eval(self, obs: Mapping[int, Any]) -> dict[int, dict[str, Any]]:
        return self._actions(obs, 0.0)

    def _collect_kwargs(self, env_step: int) -> dict[str, Any]:
        return {"random": env_step < int(self._cfg.random_collect_size)}

    def _process_transition(self, obs: Any, output: Mapping[str, Any], timestep: Any) -> dict[str, Any]:
        return transition(self.algorithm, obs, timestep, action=np.asarray(output["action"], dtype=np.float32))

    # ----- learning ------------------------------------------------------------------------------
    def _collate(self, batch: Sequence[Mapping[str, Any]]) -> dict[str, torch.Tensor]:
        data = collate_transitions(batch, self._obs_tensor, self._device, discrete=False)
        if self._cfg.reward_batch_norm:
            reward = data["reward"]
            data["reward"] = (reward - reward.mean()) / (reward.std(unbiased=False) + 1e-8)
        return data

    def target_action(self, next_obs: torch.Tensor) -> torch.Tensor:
        """The target actor's action at ``next_obs``, smoothed with clipped noise when ``learn.noise`` (no grad)."""
        learn = self._cfg.learn
        with torch.no_grad():
            action = self._target_model.compute_actor(next_obs)["action"]
            if learn.noise:
                noise = torch.randn_like(action) * float(learn.noise_sigma)
                noise = noise.clamp(float(learn.noise_range["min"]), float(learn.noise_range["max"]))
                action = (action + noise).clamp(-1.0, 1.0)
            return action

    def td_target(self, data: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """The Q target of a collated batch (no gradient)."""
        with torch.no_grad():
            next_q = self._target_model.compute_critic(data["next_obs"], self.target_action(data["next_obs"]))
            bootstrap = (1.0 - self._done_mask(data)) * self._smaller_q(next_q["q_value"])
            return data["reward"] + data["discount"] * bootstrap

    def _forward_learn(self, batch: list[dict[str, Any]]) -> dict[str, float]:
        if not batch:
            raise ValueError("cannot learn from an empty batch")
        data = self._collate(batch)
        model = self._model
        target = self.td_target(data)
        critic_loss, q_all = self._fit_critics(model.compute_critic(data["obs"], data["action"])["q_value"], target)
        stats = {
            "critic_loss": critic_loss,
            "q_value": float(q_all.mean().item()),
            "target_q_value": float(target.mean().item()),
        }
        if (self._learn_iter + 1) % int(self._cfg.learn.actor_update_freq) == 0:
            action = model.compute_actor(data["obs"])["action"]
            with self._critic_frozen():
                q_first = model.compute_critic(data["obs"], action)["q_value"]
            actor_loss = -(q_first[0] if model.twin_critic else q_first).mean()
            self._step(self._actor_optimizer, actor_loss)
            stats["actor_loss"] = float(actor_loss.item())
        return self._end_update(stats)
