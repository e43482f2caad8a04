"""Discrete SAC: soft actor-critic over a categorical policy, with twin critics giving one Q-value per action."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from gymnasium import spaces
from torch import nn

from ding.config.policy_registry import POLICY_REGISTRY
from ding.config.policy_sections import NO_PRIORITY, evaluator_section, learner_section, replay_buffer_section
from ding.errors import ConfigError
from ding.model.discrete_qac import DiscreteQAC, discrete_qac_from_config
from ding.policy.exploration import eps_section, epsilon_from_config
from ding.policy.model_keys import ACTIVATION, layers, width
from ding.policy.replay_batch import collate_transitions, transition
from ding.policy.soft_actor_critic import SOFT_ACTOR_CRITIC_LEARN, SoftActorCritic
from ding.utils.accepts import count, fixed, optional, sizes


@POLICY_REGISTRY.register("discrete_sac")
class DiscreteSACPolicy(SoftActorCritic):
    """Soft actor-critic for ``Discrete(n)`` actions (DI-engine's ``discrete_sac`` policy and config keys).

    - The actor gives a categorical policy ``pi(.|s)``; the critics give ``Q(s, .)`` for every action, so
      expectations over actions are exact sums rather than samples.
    - Critic targets are ``r + discount_factor * (1 - done) * sum_a pi(a|s') (min_i Q'_i(s', a) - alpha log pi(a|s'))``
      with target critics ``Q'`` moved towards the online ones by ``learn.target_theta`` after every update. A
      time-limit cut is not an end; ``learn.ignore_done`` bootstraps after real ends as well.
    - The actor minimizes ``sum_a pi(a|s) (alpha log pi(a|s) - min_i Q_i(s, a))``.
    - ``learn.auto_alpha`` tunes the temperature towards ``learn.target_entropy`` (default ``-n``, as in
      DI-engine, which lets alpha fall steadily; the discrete SAC paper uses ``0.98 * log(n)``).
    - Collection samples from the policy, and with probability epsilon (``other.eps``, over collected env steps)
      takes a uniform random action instead; uniform random actions for the first ``random_collect_size`` steps.
      Evaluation takes the most likely action.

    Example:
        >>> policy = DiscreteSACPolicy({'model': {'obs_shape': 4, 'action_shape': 2}}, seed=0)
        >>> out = policy.collect_mode.forward({0: np.zeros(4, np.float32)}, eps=0.0)
        >>> sorted(out[0]), out[0]['action'] in (0, 1), out[0]['logit'].shape
        (['action', 'logit'], True, (2,))
        >>> policy.collect_mode.collect_kwargs(0)
        {'eps': 1.0}
    """

    algorithm = "discrete SAC"

    config: ClassVar[dict[str, Any]] = {
        "cuda": False,
        "on_policy": fixed(False, note="discrete SAC learns off-policy"),
        "priority": fixed(False, note=NO_PRIORITY),
        "priority_IS_weight": fixed(False, note=NO_PRIORITY),
        "random_collect_size": count(10000, low=0),
        "multi_agent": fixed(False, note="discrete SAC here is single-agent"),
        "transition_with_policy_data": fixed(
            True, note="DI-engine's value for discrete SAC; ding learns from the actions alone"
        ),
        "model": {
            "twin_critic": True,
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
            **SOFT_ACTOR_CRITIC_LEARN,
            **learner_section(log_show_after_iter=1000),
        },
        "collect": {"n_sample": count(1), "unroll_len": fixed(1, note="samples are one step each")},
        "eval": evaluator_section(eval_freq=5000),
        "other": {"eps": eps_section(0.95, 0.1, 50000), "replay_buffer": replay_buffer_section(1000000)},
    }

    @classmethod
    def action_kinds(cls, cfg: Mapping[str, Any]) -> tuple[type, ...]:
        """A categorical actor over ``Discrete(n)``."""
        return (spaces.Discrete,)

    def __init__(self, cfg: Mapping[str, Any] | None = None, model: nn.Module | None = None, seed: int = 0) -> None:
        super().__init__(cfg, model, seed)
        self._epsilon = epsilon_from_config(self._cfg.other.eps)
        self._sampler = torch.Generator().manual_seed(seed)

    def _build_model(self, model: nn.Module | None) -> DiscreteQAC:
        built = model if model is not None else discrete_qac_from_config(dict(self._cfg.model))
        if not isinstance(built, DiscreteQAC):
            raise ConfigError(f"discrete SAC needs a DiscreteQAC model (actor and critics), got {type(built).__name__}")
        return built

    def _default_target_entropy(self) -> float:
        return -float(self._model.action_num)

    @property
    def model(self) -> DiscreteQAC:
        return self._model

    # ----- acting --------------------------------------------------------------------------------
    def _logits(self, obs: Mapping[int, Any]) -> tuple[list[int], torch.Tensor]:
        env_ids = self._env_ids(obs)
        with torch.no_grad():
            return env_ids, self._model.compute_actor(self._obs_tensor([obs[env_id] for env_id in env_ids]))["logit"]

    def _forward_collect(self, obs: Mapping[int, Any], eps: float = 0.0) -> dict[int, dict[str, Any]]:
        env_ids, logits = self._logits(obs)
        sampled = torch.multinomial(F.softmax(logits, dim=-1).cpu(), 1, generator=self._sampler).squeeze(-1).numpy()
        explore = self._rng.random(len(env_ids)) < eps
        actions = np.where(explore, self._rng.integers(0, logits.shape[-1], len(env_ids)), sampled)
        logit = logits.cpu().numpy()
        return {env_id: {"action": int(actions[i]), "logit": logit[i]} for i, env_id in enumerate(env_ids)}

    def _forward_eval(self, obs: Mapping[int, Any]) -> dict[int, dict[str, Any]]:
        env_ids, logits = self._logits(obs)
        logit = logits.cpu().numpy()
        return {env_id: {"action": int(logit[i].argmax()), "logit": logit[i]} for i, env_id in enumerate(env_ids)}

    def _collect_kwargs(self, env_step: int) -> dict[str, Any]:
        """The epsilon at ``env_step``: 1 (uniform random actions) for the first ``random_collect_size`` steps."""
        if env_step < int(self._cfg.random_collect_size):
            return {"eps": 1.0}
        return {"eps": self._epsilon(env_step)}

    def _process_transition(self, obs: Any, output: Mapping[str, Any], timestep: Any) -> dict[str, Any]:
        return transition(self.algorithm, obs, timestep, action=int(output["action"]))

    # ----- learning ------------------------------------------------------------------------------
    def td_target(self, data: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """The soft Q target of a collated batch (no gradient): the next state's soft value, exact over actions."""
        done = self._done_mask(data)
        with torch.no_grad():
            next_logits = self._model.compute_actor(data["next_obs"])["logit"]
            next_prob, next_log_prob = F.softmax(next_logits, dim=-1), F.log_softmax(next_logits, dim=-1)
            next_q = self._smaller_q(self._target_model.compute_critic(data["next_obs"])["q_value"])
            soft_value = (next_prob * (next_q - self._temperature.tensor() * next_log_prob)).sum(dim=-1)
            return data["reward"] + data["discount"] * (1.0 - done) * soft_value

    def _forward_learn(self, batch: list[dict[str, Any]]) -> dict[str, float]:
        if not batch:
            raise ValueError("cannot learn from an empty batch")
        data = collate_transitions(batch, self._obs_tensor, self._device, discrete=True)
        model = self._model

        target = self.td_target(data)
        q = model.compute_critic(data["obs"])["q_value"]
        taken = data["action"].view(*[1] * (q.dim() - 2), -1, 1).expand(*q.shape[:-1], 1)
        critic_loss, q_taken = self._fit_critics(q.gather(-1, taken).squeeze(-1), target)

        logits = model.compute_actor(data["obs"])["logit"]
        prob, log_prob = F.softmax(logits, dim=-1), F.log_softmax(logits, dim=-1)
        with torch.no_grad():
            new_q = self._smaller_q(model.compute_critic(data["obs"])["q_value"])
        alpha = self._temperature.tensor().detach()
        policy_loss = (prob * (alpha * log_prob - new_q)).sum(dim=-1).mean()
        self._step(self._actor_optimizer, policy_loss)

        entropy = -(prob * log_prob).sum(dim=-1).detach()
        stats = {
            "critic_loss": critic_loss,
            "policy_loss": float(policy_loss.item()),
            "q_value": float(q_taken.mean().item()),
            "target_q_value": float(target.mean().item()),
            "entropy": float(entropy.mean().item()),
        }
        return self._finish_update(stats, self._target_entropy - entropy.mean())
