"""SAC: soft actor-critic for continuous actions in [-1, 1], with twin critics and a tuned temperature."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from ding.config.policy_registry import POLICY_REGISTRY
from ding.config.policy_sections import NO_PRIORITY, evaluator_section, learner_section, replay_buffer_section
from ding.errors import ConfigError
from ding.model.qac import QAC, qac_from_config
from ding.policy.model_keys import ACTIVATION, layers, width
from ding.policy.replay_batch import collate_transitions, transition
from ding.policy.soft_actor_critic import SOFT_ACTOR_CRITIC_LEARN, SoftActorCritic
from ding.utils.accepts import count, fixed, optional, sizes


@POLICY_REGISTRY.register("sac")
class SACPolicy(SoftActorCritic):
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
        "on_policy": fixed(False, note="SAC learns off-policy"),
        "priority": fixed(False, note=NO_PRIORITY),
        "priority_IS_weight": fixed(False, note=NO_PRIORITY),
        "random_collect_size": count(10000, low=0),
        "model": {
            "twin_critic": True,
            "actor_head_hidden_size": width(256),
            "actor_head_layer_num": layers(1),  # after a first layer, as DI-engine counts: 2 hidden layers
            "critic_head_hidden_size": width(256),
            "critic_head_layer_num": layers(1),
            "activation": ACTIVATION,
            "encoder_hidden_size_list": optional(sizes()),
            "action_space": fixed("reparameterization", note="DI-engine's name for SAC's tanh-squashed Gaussian actor"),
        },
        "learn": {
            "update_per_collect": count(1),
            "reparameterization": fixed(True, note="the actor learns through reparameterized samples"),
            "batch_size": count(256),
            **SOFT_ACTOR_CRITIC_LEARN,
            **learner_section(log_show_after_iter=1000),
        },
        "collect": {"n_sample": count(1), "unroll_len": fixed(1, note="samples are one step each")},
        "eval": evaluator_section(eval_freq=5000),
        "other": {"replay_buffer": replay_buffer_section(1000000)},
    }

    @classmethod
    def action_kinds(cls, cfg: Mapping[str, Any]) -> tuple[type, ...]:
        """A tanh-squashed Gaussian over a ``Box``."""
        return (spaces.Box,)

    def _build_model(self, model: nn.Module | None) -> QAC:
        model_cfg = {key: value for key, value in dict(self._cfg.model).items() if key != "action_space"}
        built = model if model is not None else qac_from_config(model_cfg)
        if not isinstance(built, QAC):
            raise ConfigError(f"SAC needs a QAC model (actor and critics), got {type(built).__name__}")
        return built

    def _default_target_entropy(self) -> float:
        return -float(self._model.action_size)

    @property
    def model(self) -> QAC:
        return self._model

    def _alpha(self) -> torch.Tensor:
        return self._temperature.tensor()

    # ----- acting --------------------------------------------------------------------------------
    def _act(self, obs: Mapping[int, Any], deterministic: bool) -> dict[int, dict[str, Any]]:
        env_ids = self._env_ids(obs)
        with torch.no_grad():
            x = self._obs_tensor([obs[env_id] for env_id in env_ids])
            action = self._model.deterministic(x) if deterministic else self._model.sample(x)[0]
        actions = action.cpu().numpy().astype(np.float32)
        return {env_id: {"action": actions[i]} for i, env_id in enumerate(env_ids)}

    def _forward_collect(self, obs: Mapping[int, Any], random: bool = False) -> dict[int, dict[str, Any]]:
        if random:
            return self._uniform_box_actions(obs)
        return self._act(obs, deterministic=False)

    def _forward_eval(self, obs: Mapping[int, Any]) -> dict[int, dict[str, Any]]:
        return self._act(obs, deterministic=True)

    def _collect_kwargs(self, env_step: int) -> dict[str, Any]:
        return {"random": env_step < int(self._cfg.random_collect_size)}

    def _process_transition(self, obs: Any, output: Mapping[str, Any], timestep: Any) -> dict[str, Any]:
        return transition(self.algorithm, obs, timestep, action=np.asarray(output["action"], dtype=np.float32))

    # ----- learning ------------------------------------------------------------------------------
    def _collate(self, batch: Sequence[Mapping[str, Any]]) -> dict[str, torch.Tensor]:
        return collate_transitions(batch, self._obs_tensor, self._device, discrete=False)

    def td_target(self, data: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """The soft Q target of a collated batch (no gradient)."""
        done = self._done_mask(data)
        with torch.no_grad():
            next_action, next_log_prob = self._model.sample(data["next_obs"])
            next_q = self._smaller_q(self._target_model.compute_critic(data["next_obs"], next_action)["q_value"])
            soft_value = next_q - self._alpha() * next_log_prob
            return data["reward"] + data["discount"] * (1.0 - done) * soft_value

    def _forward_learn(self, batch: list[dict[str, Any]]) -> dict[str, float]:
        if not batch:
            raise ValueError("cannot learn from an empty batch")
        data = self._collate(batch)
        model = self._model

        target = self.td_target(data)
        critic_loss, q_all = self._fit_critics(model.compute_critic(data["obs"], data["action"])["q_value"], target)

        action, log_prob = model.sample(data["obs"])
        with self._critic_frozen():
            new_q = self._smaller_q(model.compute_critic(data["obs"], action)["q_value"])
        policy_loss = (self._alpha().detach() * log_prob - new_q).mean()
        self._step(self._actor_optimizer, policy_loss)

        stats = {
            "critic_loss": critic_loss,
            "policy_loss": float(policy_loss.item()),
            "q_value": float(q_all.mean().item()),
            "target_q_value": float(target.mean().item()),
            "entropy": float(-log_prob.mean().item()),
        }
        return self._finish_update(stats, (log_prob.detach() + self._target_entropy).mean())
