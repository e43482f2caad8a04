"""DQN: double DQN with an optionally dueling model, n-step returns and an epsilon-greedy schedule."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import torch
from easydict import EasyDict
from gymnasium import spaces
from torch import nn

from ding.config.policy_registry import POLICY_REGISTRY
from ding.config.policy_sections import PRIORITY_KEYS, evaluator_section, learner_section, replay_buffer_section
from ding.errors import ConfigError
from ding.model.dqn import model_from_config
from ding.model.noisy import resample_noise, set_noise
from ding.policy.base import Policy
from ding.policy.device import policy_device
from ding.policy.exploration import eps_section, epsilon_from_config
from ding.policy.model_keys import ACTIVATION, built_within_memory, layers, width, widths
from ding.policy.nstep import NStepRule, double_dqn_target
from ding.policy.obs_batch import obs_tensor
from ding.policy.replay_batch import IS_WEIGHT, collate_transitions, done_mask, soft_update, transition
from ding.utils.accepts import count, fixed, fraction, optional, plain_defaults, positive


@POLICY_REGISTRY.register("dqn")
class DQNPolicy(Policy):
    """Deep Q-learning for discrete actions (DI-engine's ``dqn`` policy and config keys).

    - Targets are double-DQN n-step returns: the online model picks the next action, a target model
      values it; ``nstep`` rewards are summed with ``discount_factor``. A time-limit cut is not an
      end (its value is bootstrapped); ``learn.ignore_done`` bootstraps after real ends as well.
    - The target model is copied from the online one every ``learn.target_update_freq`` updates or,
      when ``learn.target_theta`` is set, moved towards it by that fraction after every update.
    - Collection is epsilon-greedy; ``other.eps`` gives the schedule over collected env steps.
    - ``noisy_net`` with ``model.noise`` (DI-engine's keys) makes a noisy network: the head's layers carry learned
      Gaussian weight noise, drawn afresh before every update and on while collecting and learning (off in
      evaluation); collection acts on the noise of the latest update.
    - ``priority`` (DI-engine's prioritized replay): the replay buffer draws samples in proportion to their priority
      (``other.replay_buffer``'s ``alpha``, ``beta``, ``anneal_step``), each update returns every sample's loss as
      its new priority, and ``priority_IS_weight`` weighs each sample's loss by its importance-sampling weight.
    - A multi-discrete action (``model.action_shape`` a list) has one Q head per branch; each branch acts greedily
      on its own Q-values (one epsilon draw per env decides whether every branch acts at random) and its TD error is
      averaged over the branches.
    - ``cuda=True`` runs on the first CUDA device (on the CPU, with a warning, where there is none).

    Example:
        >>> policy = DQNPolicy({'model': {'obs_shape': 4, 'action_shape': 2}}, seed=0)
        >>> out = policy.collect_mode.forward({0: np.zeros(4, np.float32)}, eps=1.0)
        >>> sorted(out[0]), out[0]['action'] in (0, 1)
        (['action', 'logit'], True)
        >>> round(policy.collect_mode.collect_kwargs(10000)['eps'], 4)
        0.4127
    """

    algorithm = "DQN"

    config: ClassVar[dict[str, Any]] = {
        "cuda": False,
        "on_policy": fixed(False, note="DQN and its variants learn off-policy"),
        "priority": False,  # the replay buffer draws by priority (other.replay_buffer: alpha, beta, anneal_step)
        "priority_IS_weight": False,  # each sample's loss weighed by its importance-sampling weight (needs priority)
        "noisy_net": False,  # noise on in the model's noisy layers (model.noise) while collecting and learning
        "discount_factor": fraction(0.97),
        "nstep": count(1),
        "random_collect_size": count(0, low=0),  # env steps of uniform random actions collected before the first update
        "model": {
            "encoder_hidden_size_list": widths([128, 128, 64]),
            "dueling": True,
            "head_hidden_size": optional(width()),
            "head_layer_num": layers(1),
            "activation": ACTIVATION,
            "noise": False,
        },
        "learn": {
            "update_per_collect": count(3),
            "batch_size": count(64),
            "learning_rate": positive(0.001),
            "target_update_freq": count(100),
            "target_theta": optional(fraction()),  # set: a soft update by this share after every update
            "ignore_done": False,
            **learner_section(log_show_after_iter=100),
        },
        "collect": {"n_sample": count(8), "unroll_len": fixed(1, note="samples are one step each")},
        "eval": evaluator_section(eval_freq=1000),
        "other": {
            "eps": eps_section(0.95, 0.1, 10000),
            "replay_buffer": {**replay_buffer_section(10000), **PRIORITY_KEYS},
        },
    }

    @classmethod
    def action_kinds(cls, cfg: Mapping[str, Any]) -> tuple[type, ...]:
        """DQN's Q-network scores each of ``Discrete(n)``'s actions."""
        return (spaces.Discrete,)

    def __init__(self, cfg: Mapping[str, Any] | None = None, model: nn.Module | None = None, seed: int = 0) -> None:
        super().__init__(cfg)
        config = self._cfg
        self._device = policy_device(config.cuda)
        built = model if model is not None else built_within_memory(lambda: self._model_from_config(dict(config.model)))
        self._check_model(built)
        self._model = built.to(self._device)
        self._target_model = copy.deepcopy(self._model)
        self._target_model.requires_grad_(False)
        self._optimizer = torch.optim.Adam(self._model.parameters(), lr=config.learn.learning_rate)
        self._nstep_rule = self.nstep_rule_of(config)
        self._rng = np.random.default_rng(seed)
        self._epsilon = epsilon_from_config(config.other.eps)
        self._learn_iter = 0

    @staticmethod
    def _model_from_config(model_cfg: dict[str, Any]) -> nn.Module:
        """The model a ``policy.model`` section describes (each DQN variant builds its own)."""
        return model_from_config(model_cfg)

    def _check_model(self, model: nn.Module) -> None:
        """Refuse a model given to the policy that cannot serve it (any module serves DQN)."""
        return None

    @classmethod
    def nstep_rule_of(cls, cfg: Mapping[str, Any]) -> NStepRule:
        """``nstep`` rewards discounted by ``discount_factor``."""
        return NStepRule(int(cfg["nstep"]), float(cfg["discount_factor"]))

    @classmethod
    def check_config(cls, cfg: EasyDict) -> None:
        """A noisy network needs ``noisy_net`` and ``model.noise`` alike; importance-sampling weights and the priority
        keys need prioritized replay."""
        if cfg.noisy_net != cfg.model.noise:
            raise ConfigError(
                f"policy.noisy_net is {cfg.noisy_net!r} but policy.model.noise is {cfg.model.noise!r}: a noisy network "
                "needs both (model.noise builds the noisy layers, noisy_net turns their noise on); set both or neither"
            )
        if cfg.priority_IS_weight and not cfg.priority:
            raise ConfigError(
                "policy.priority_IS_weight is True but policy.priority is False: importance-sampling weights correct "
                "prioritized sampling; set priority=True or priority_IS_weight=False"
            )
        if not cfg.priority:
            defaults = plain_defaults(PRIORITY_KEYS)
            changed = [key for key, value in defaults.items() if cfg.other.replay_buffer[key] != value]
            if changed:
                raise ConfigError(
                    f"policy.other.replay_buffer.{changed[0]} is {cfg.other.replay_buffer[changed[0]]!r} but "
                    "policy.priority is False: it applies to prioritized replay only; set priority=True or leave "
                    f"{changed[0]} out"
                )

    # ----- modes ---------------------------------------------------------------------------------
    @property
    def model(self) -> nn.Module:
        return self._model

    @property
    def learn_iter(self) -> int:
        """Updates made so far."""
        return self._learn_iter

    # ----- acting --------------------------------------------------------------------------------
    def _obs_tensor(self, observations: Sequence[Any]) -> torch.Tensor:
        return obs_tensor(observations, self._device)

    def _q_values(self, obs: Mapping[int, Any], noise: bool) -> tuple[list[int], list[np.ndarray]]:
        """The env ids and, per action branch (one unless the action is multi-discrete), their Q-values."""
        if not obs:
            raise ValueError("no observations to act on: the dict {env_id: obs} is empty")
        env_ids = list(obs)
        if self._cfg.noisy_net:
            set_noise(self._model, noise)
        with torch.no_grad():
            logit = self._model(self._obs_tensor([obs[env_id] for env_id in env_ids]))["logit"]
        return env_ids, [q.cpu().numpy() for q in branches(logit)]

    def _forward_collect(self, obs: Mapping[int, Any], eps: float = 0.0) -> dict[int, dict[str, Any]]:
        env_ids, qs = self._q_values(obs, noise=True)
        explore = self._rng.random(len(env_ids)) < eps
        actions = [np.where(explore, self._rng.integers(0, q.shape[-1], len(env_ids)), q.argmax(axis=-1)) for q in qs]
        return _outputs(env_ids, actions, qs)

    def _forward_eval(self, obs: Mapping[int, Any]) -> dict[int, dict[str, Any]]:
        env_ids, qs = self._q_values(obs, noise=False)
        return _outputs(env_ids, [q.argmax(axis=-1) for q in qs], qs)

    def _collect_kwargs(self, env_step: int) -> dict[str, Any]:
        """The epsilon at ``env_step``: 1 (uniform random actions) for the first ``random_collect_size`` steps."""
        if env_step < int(self._cfg.get("random_collect_size") or 0):
            return {"eps": 1.0}
        return {"eps": self._epsilon(env_step)}

    def _process_transition(self, obs: Any, output: Mapping[str, Any], timestep: Any) -> dict[str, Any]:
        return transition(self.algorithm, obs, timestep, action=output["action"])

    def _get_train_sample(self, traj: list[dict[str, Any]], episode_over: bool) -> list[dict[str, Any]]:
        return self._nstep_rule.samples(traj, episode_over)

    # ----- learning ------------------------------------------------------------------------------
    def _collate(self, batch: Sequence[Mapping[str, Any]]) -> dict[str, torch.Tensor]:
        return collate_transitions(batch, self._obs_tensor, self._device, discrete=True)

    def td_target(self, data: Mapping[str, torch.Tensor]) -> torch.Tensor:
        """The n-step double-DQN target of a collated batch (no gradient): ``(batch,)``, or ``(batch, branches)`` for
        a multi-discrete action."""
        done = self._done_mask(data)
        with torch.no_grad():
            next_online = branches(self._model(data["next_obs"])["logit"])
            next_target = branches(self._target_model(data["next_obs"])["logit"])
            targets = [
                double_dqn_target(data["reward"], data["discount"], done, online, target)
                for online, target in zip(next_online, next_target, strict=True)
            ]
        return targets[0] if len(targets) == 1 else torch.stack(targets, dim=-1)

    def _done_mask(self, data: Mapping[str, torch.Tensor]) -> torch.Tensor:
        return done_mask(data, bool(self._cfg.learn.ignore_done))

    def _target_output_of_best_action(self, next_obs: torch.Tensor, key: str) -> torch.Tensor:
        """The target model's ``key`` output for the next action the online model rates best (double DQN's choice),
        one row per sample (no gradient)."""
        with torch.no_grad():
            best = self._model(next_obs)["logit"].argmax(dim=-1)
            return self._target_model(next_obs)[key][torch.arange(len(best), device=best.device), best]

    def _forward_learn(self, batch: list[dict[str, Any]]) -> dict[str, Any]:
        """One update. With ``priority`` the statistics also hold ``priority``: each sample's loss, its new
        priority (DI-engine's)."""
        if not batch:
            raise ValueError("cannot learn from an empty batch")
        self._renew_noise()
        data = self._collate(batch)
        per_sample, q_value, target_value = self._loss(data)
        loss = (per_sample * self._sample_weights(batch)).mean()
        self._optimizer.zero_grad()
        loss.backward()
        self._optimizer.step()
        self._learn_iter += 1
        self._update_target()
        stats: dict[str, Any] = {
            "cur_lr": float(self._optimizer.param_groups[0]["lr"]),
            "total_loss": float(loss.item()),
            "q_value": q_value,
            "target_q_value": target_value,
        }
        if self._cfg.priority:
            stats["priority"] = per_sample.detach().abs().cpu().tolist()
        return stats

    def _sample_weights(self, batch: Sequence[Mapping[str, Any]]) -> torch.Tensor:
        """Each sample's weight in the loss: its importance-sampling weight with ``priority_IS_weight``, else 1."""
        if not self._cfg.priority_IS_weight:
            return torch.ones(len(batch), device=self._device)
        try:
            weights = [float(sample[IS_WEIGHT]) for sample in batch]
        except KeyError:
            raise ValueError(
                f"policy.priority_IS_weight is True but a sample has no {IS_WEIGHT!r} weight: draw the batch from a "
                "prioritized replay buffer (policy.priority=True)"
            ) from None
        return torch.tensor(weights, dtype=torch.float32, device=self._device)

    def _loss(self, data: Mapping[str, torch.Tensor]) -> tuple[torch.Tensor, float, float]:
        """Each sample's loss (``(batch,)``, weighed and averaged by :meth:`_forward_learn`), with the mean value of
        the taken actions and of their targets (logged). DQN: the squared error of the taken actions' Q-values against
        :meth:`td_target` (averaged over the branches of a multi-discrete action)."""
        target = self.td_target(data)
        qs = branches(self._model(data["obs"])["logit"])
        action = data["action"] if data["action"].dim() > 1 else data["action"].unsqueeze(-1)
        q_taken = torch.stack([q.gather(-1, action[:, [b]]).squeeze(-1) for b, q in enumerate(qs)], dim=-1)
        target = target if target.dim() > 1 else target.unsqueeze(-1)
        per_sample = (q_taken - target).pow(2).mean(dim=-1)
        return per_sample, float(q_taken.mean().item()), float(target.mean().item())

    def _renew_noise(self) -> None:
        """Before an update of a noisy network: noise on in the online and target models, freshly drawn for each."""
        if self._cfg.noisy_net:
            for model in (self._model, self._target_model):
                set_noise(model, True)
                resample_noise(model)

    def _update_target(self) -> None:
        theta = self._cfg.learn.target_theta
        if theta is not None:
            soft_update(self._target_model, self._model, float(theta))
        elif self._learn_iter % int(self._cfg.learn.target_update_freq) == 0:
            self._target_model.load_state_dict(self._model.state_dict())

    # ----- state ---------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Model, target model, optimizer and update count (what a checkpoint holds)."""
        return {
            "model": self._model.state_dict(),
            "target_model": self._target_model.state_dict(),
            "optimizer": self._optimizer.state_dict(),
            "learn_iter": self._learn_iter,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`state_dict` gave; only ``model`` is required."""
        self._load_model_only(state)
        if "target_model" in state:
            self._target_model.load_state_dict(state["target_model"])
        else:
            self._target_model.load_state_dict(self._model.state_dict())
        if "optimizer" in state:
            self._optimizer.load_state_dict(state["optimizer"])
        self._learn_iter = int(state.get("learn_iter", 0))

    def _load_model_only(self, state: Mapping[str, Any]) -> None:
        if not isinstance(state, Mapping) or "model" not in state:
            raise ValueError(f"a {self.algorithm} state dict needs a 'model' entry (the model's state_dict)")
        self._model.load_state_dict(state["model"])


def branches(logit: torch.Tensor | Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """A model's ``logit`` as one tensor per action branch (a multi-discrete model gives a list).

    >>> [tuple(q.shape) for q in branches(torch.zeros(2, 3))], len(branches([torch.zeros(2, 3), torch.zeros(2, 4)]))
    ([(2, 3)], 2)
    """
    return [logit] if isinstance(logit, torch.Tensor) else list(logit)


def _outputs(env_ids: list[int], actions: list[np.ndarray], qs: list[np.ndarray]) -> dict[int, dict[str, Any]]:
    """Per env, its action (an int, or one int per branch of a multi-discrete action) and Q-values."""
    if len(qs) == 1:
        return {env_id: {"action": int(actions[0][i]), "logit": qs[0][i]} for i, env_id in enumerate(env_ids)}
    return {
        env_id: {"action": np.array([a[i] for a in actions], np.int64), "logit": [q[i] for q in qs]}
        for i, env_id in enumerate(env_ids)
    }
