"""What SAC and discrete SAC share: the target critics, the optimizers, the temperature, the checks of their common
keys, one-step samples, and the checkpoint state."""

from __future__ import annotations

import copy
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from ding.errors import ConfigError
from ding.policy.base import Policy, check_number
from ding.policy.device import policy_device
from ding.policy.nstep import NStepRule
from ding.policy.obs_batch import obs_tensor
from ding.policy.replay_batch import soft_update
from ding.policy.temperature import Temperature


class SoftActorCritic(Policy):
    """Base of the soft actor-critic policies: a model with ``actor`` and ``critic`` parts (each with its Adam
    optimizer, at ``learn.learning_rate_policy`` and ``learn.learning_rate_q``), target critics moved by
    ``learn.target_theta`` after every update, and the temperature (:class:`~ding.policy.temperature.Temperature`).

    Subclasses build the model (:meth:`_build_model`), say what an unset ``learn.target_entropy`` means
    (:meth:`_default_target_entropy`), check their own keys (:meth:`_check_own_config`), act, and learn (ending each
    update with :meth:`_finish_update`).
    """

    def __init__(self, cfg: Mapping[str, Any] | None = None, model: nn.Module | None = None, seed: int = 0) -> None:
        super().__init__(cfg)
        config = self._cfg
        self._check_config()
        self._device = policy_device(config.cuda)
        built: Any = self._build_model(model).to(self._device)
        self._model: Any = built
        self._target_model: Any = copy.deepcopy(built)
        self._target_model.requires_grad_(False)
        learn = config.learn
        self._critic_optimizer = torch.optim.Adam(built.critic.parameters(), lr=learn.learning_rate_q)
        self._actor_optimizer = torch.optim.Adam(built.actor.parameters(), lr=learn.learning_rate_policy)
        self._temperature = Temperature(
            learn.alpha, learn.auto_alpha, learn.log_space, learn.learning_rate_alpha, self._device
        )
        target_entropy = learn.target_entropy
        self._target_entropy = float(self._default_target_entropy() if target_entropy is None else target_entropy)
        self._rng = np.random.default_rng(seed)
        self._learn_iter = 0

    @abstractmethod
    def _build_model(self, model: nn.Module | None) -> nn.Module:
        """``model``, checked, or the one ``policy.model`` describes."""

    @abstractmethod
    def _default_target_entropy(self) -> float: ...

    @abstractmethod
    def _check_own_config(self) -> None: ...

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
            raise ConfigError(f"policy.on_policy: {self.algorithm} learns off-policy; set on_policy=False")
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
            raise ConfigError(
                f"policy.collect.unroll_len must be 1 for {self.algorithm}, got {cfg.collect.unroll_len!r}"
            )
        self._check_own_config()

    # ----- properties ----------------------------------------------------------------------------
    @property
    def learn_iter(self) -> int:
        """Updates made so far."""
        return self._learn_iter

    @property
    def alpha(self) -> float:
        """The current entropy temperature."""
        return self._temperature.value

    def _obs_tensor(self, observations: Sequence[Any]) -> torch.Tensor:
        return obs_tensor(observations, self._device, self._model.obs_shape)

    def _get_train_sample(self, traj: list[dict[str, Any]], episode_over: bool) -> list[dict[str, Any]]:
        return self.nstep_rule_of(self._cfg).samples(traj, episode_over)

    # ----- learning ------------------------------------------------------------------------------
    @staticmethod
    def _step(optimizer: torch.optim.Optimizer, loss: torch.Tensor) -> None:
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    def _finish_update(self, stats: dict[str, float], entropy_gap: torch.Tensor) -> dict[str, float]:
        """After the critic and actor steps: tune the temperature on ``entropy_gap`` (the batch's mean of
        ``log pi + target_entropy``), count the update, move the target critics; ``stats`` with the learning rates,
        ``alpha`` and ``total_loss``."""
        if self._temperature.auto:
            stats["alpha_loss"] = self._temperature.update(entropy_gap)
        self._learn_iter += 1
        soft_update(self._target_model, self._model, float(self._cfg.learn.target_theta))
        stats["cur_lr_q"] = float(self._critic_optimizer.param_groups[0]["lr"])
        stats["cur_lr_p"] = float(self._actor_optimizer.param_groups[0]["lr"])
        stats["alpha"] = self.alpha
        stats["total_loss"] = stats["critic_loss"] + stats["policy_loss"] + stats.get("alpha_loss", 0.0)
        return stats

    # ----- state ---------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Model, target model, optimizers, temperature and update count (what a checkpoint holds)."""
        return {
            "model": self._model.state_dict(),
            "target_model": self._target_model.state_dict(),
            "optimizer_q": self._critic_optimizer.state_dict(),
            "optimizer_policy": self._actor_optimizer.state_dict(),
            **self._temperature.state_dict(),
            "learn_iter": self._learn_iter,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`state_dict` gave; only ``model`` is required."""
        self._load_model_only(state)
        if "target_model" in state:
            self._target_model.load_state_dict(state["target_model"])
        else:
            self._target_model.load_state_dict(self._model.state_dict())
        for key, optimizer in (("optimizer_q", self._critic_optimizer), ("optimizer_policy", self._actor_optimizer)):
            if key in state:
                optimizer.load_state_dict(state[key])
        self._temperature.load_state_dict(state)
        self._learn_iter = int(state.get("learn_iter", 0))

    def _load_model_only(self, state: Mapping[str, Any]) -> None:
        if not isinstance(state, Mapping) or "model" not in state:
            raise ValueError(f"a {self.algorithm} state dict needs a 'model' entry (the model's state_dict)")
        self._model.load_state_dict(state["model"])
