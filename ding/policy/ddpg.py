"""DDPG and TD3: a deterministic actor trained through one or two Q critics, with Gaussian exploration noise."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import torch
from easydict import EasyDict
from torch import nn

from ding.config.policy_registry import POLICY_REGISTRY
from ding.config.policy_sections import NO_PRIORITY, evaluator_section, learner_section, replay_buffer_section
from ding.errors import ConfigError
from ding.model.deterministic_qac import DeterministicQAC, deterministic_qac_from_config
from ding.policy.model_keys import ACTIVATION, layers, width
from ding.policy.replay_actor_critic import ReplayActorCritic
from ding.policy.replay_batch import collate_transitions, transition
from ding.utils.accepts import count, fixed, fraction, non_negative, number, optional, positive, sizes


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
        "on_policy": fixed(False, note="DDPG and TD3 learn off-policy"),
        "priority": fixed(False, note=NO_PRIORITY),
        "priority_IS_weight": fixed(False, note=NO_PRIORITY),
        "random_collect_size": count(25000, low=0),
        "transition_with_policy_data": fixed(False, note="transitions keep the action alone"),
        "action_space": fixed("continuous", note="the actor gives Box actions; 'hybrid' action spaces are not here"),
        "reward_batch_norm": False,
        "multi_agent": fixed(False, note="single-agent here"),
        "model": {
            "twin_critic": False,
            "action_space": fixed("regression", note="DI-engine's name for the deterministic tanh actor"),
            "actor_head_hidden_size": width(64),
            "actor_head_layer_num": layers(1),
            "critic_head_hidden_size": width(64),
            "critic_head_layer_num": layers(1),
            "activation": ACTIVATION,
            "encoder_hidden_size_list": optional(sizes()),
        },
        "learn": {
            "update_per_collect": count(1),
            "batch_size": count(256),
            "learning_rate_actor": positive(1e-3),
            "learning_rate_critic": positive(1e-3),
            "ignore_done": False,
            "target_theta": fraction(0.005),
            "discount_factor": fraction(0.99),
            "actor_update_freq": count(1),
            "noise": False,
            "noise_sigma": non_negative(0.2),
            "noise_range": {"min": number(-0.5), "max": number(0.5)},
            **learner_section(log_show_after_iter=1000),
        },
        "collect": {
            "n_sample": count(1),
            "unroll_len": fixed(1, note="samples are one step each"),
            "noise_sigma": non_negative(0.1),
        },
        "eval": evaluator_section(eval_freq=5000),
        "other": {"replay_buffer": replay_buffer_section(100000)},
    }

    @classmethod
    def check_config(cls, cfg: EasyDict) -> None:
        """Target policy smoothing clips its noise to ``learn.noise_range``, whose ``min`` cannot exceed its ``max``."""
        noise_range = cfg.learn.noise_range
        if noise_range["min"] > noise_range["max"]:
            raise ConfigError(
                f"policy.learn.noise_range.min {noise_range['min']!r} exceeds policy.learn.noise_range.max "
                f"{noise_range['max']!r}"
            )

    def _build_model(self, model: nn.Module | None) -> DeterministicQAC:
        model_cfg = {key: value for key, value in dict(self._cfg.model).items() if key != "action_space"}
        built = model if model is not None else deterministic_qac_from_config(model_cfg)
        if not isinstance(built, DeterministicQAC):
            raise ConfigError(
                f"{self.algorithm} needs a DeterministicQAC model (actor and critics), got {type(built).__name__}"
            )
        return built

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
