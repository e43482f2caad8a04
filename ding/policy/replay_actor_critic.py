"""What the replay actor-critics (DDPG, TD3, SAC, discrete SAC) share: the model's actor and critic parts with an
Adam optimizer each, target critics moved after every update, the checks of their common keys, one-step samples, and
the checkpoint state."""

from __future__ import annotations

import contextlib
import copy
from abc import abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from gymnasium import spaces
from torch import nn

from ding.policy.base import Policy
from ding.policy.device import policy_device
from ding.policy.model_keys import built_within_memory
from ding.policy.nstep import NStepRule
from ding.policy.obs_batch import obs_tensor
from ding.policy.replay_batch import done_mask, soft_update


class ReplayActorCritic(Policy):
    """Base of the replay actor-critics: a model with ``actor`` and ``critic`` parts, each with its Adam optimizer
    (the learning rates under :attr:`critic_rate_key` and :attr:`actor_rate_key` of ``learn``), and a target copy
    moved towards the model by ``learn.target_theta`` after every update.

    Subclasses declare their keys (``config``), build the model (:meth:`_build_model`), act, and learn (ending each
    update with :meth:`_end_update`); :meth:`_extra_state` / :meth:`_load_extra_state` carry more state in
    checkpoints.
    """

    critic_rate_key: ClassVar[str] = "learning_rate_q"
    actor_rate_key: ClassVar[str] = "learning_rate_policy"
    rate_stats: ClassVar[tuple[str, str]] = ("cur_lr_q", "cur_lr_p")
    """The names the critic's and the actor's learning rates are logged under."""

    @classmethod
    def action_kinds(cls, cfg: Mapping[str, Any]) -> tuple[type, ...]:
        """A deterministic actor over a ``Box``."""
        return (spaces.Box,)

    def __init__(self, cfg: Mapping[str, Any] | None = None, model: nn.Module | None = None, seed: int = 0) -> None:
        super().__init__(cfg)
        config = self._cfg
        self._device = policy_device(config.cuda)
        built: Any = (
            self._build_model(model) if model is not None else built_within_memory(lambda: self._build_model(None))
        ).to(self._device)
        self._model: Any = built
        self._target_model: Any = copy.deepcopy(built)
        self._target_model.requires_grad_(False)
        learn = config.learn
        self._critic_optimizer = torch.optim.Adam(built.critic.parameters(), lr=learn[self.critic_rate_key])
        self._actor_optimizer = torch.optim.Adam(built.actor.parameters(), lr=learn[self.actor_rate_key])
        self._rng = np.random.default_rng(seed)
        self._learn_iter = 0

    @abstractmethod
    def _build_model(self, model: nn.Module | None) -> nn.Module:
        """``model``, checked, or the one ``policy.model`` describes."""

    @classmethod
    def nstep_rule_of(cls, cfg: Mapping[str, Any]) -> NStepRule:
        """One-step samples discounted by ``learn.discount_factor``."""
        return NStepRule(1, float(cfg["learn"]["discount_factor"]))

    @property
    def learn_iter(self) -> int:
        """Updates made so far."""
        return self._learn_iter

    def _obs_tensor(self, observations: Sequence[Any]) -> torch.Tensor:
        return obs_tensor(observations, self._device, self._model.obs_shape)

    @staticmethod
    def _env_ids(obs: Mapping[int, Any]) -> list[int]:
        if not obs:
            raise ValueError("no observations to act on: the dict {env_id: obs} is empty")
        return list(obs)

    def _uniform_box_actions(self, obs: Mapping[int, Any]) -> dict[int, dict[str, Any]]:
        """A uniform random action in ``[-1, 1]`` for every env (the warm-up of ``random_collect_size`` steps)."""
        size = self._model.action_size
        return {
            env_id: {"action": self._rng.uniform(-1.0, 1.0, size).astype(np.float32)} for env_id in self._env_ids(obs)
        }

    def _get_train_sample(self, traj: list[dict[str, Any]], episode_over: bool) -> list[dict[str, Any]]:
        return self.nstep_rule_of(self._cfg).samples(traj, episode_over)

    def _done_mask(self, data: Mapping[str, torch.Tensor]) -> torch.Tensor:
        return done_mask(data, bool(self._cfg.learn.ignore_done))

    # ----- learning ------------------------------------------------------------------------------
    @staticmethod
    def _step(optimizer: torch.optim.Optimizer, loss: torch.Tensor) -> None:
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    def _smaller_q(self, q: torch.Tensor) -> torch.Tensor:
        """The smaller of twin critics' values (stacked on the first axis); a single critic's values unchanged."""
        return q.min(dim=0).values if self._model.twin_critic else q

    def _fit_critics(self, q: torch.Tensor, target: torch.Tensor) -> tuple[float, torch.Tensor]:
        """One critic step on the summed squared errors of each critic's ``q`` (stacked on the first axis with twin
        critics) against ``target``; the loss and the values as ``(critics, batch)``."""
        q_all = q if self._model.twin_critic else q.unsqueeze(0)
        loss = torch.stack([F.mse_loss(q_i, target) for q_i in q_all]).sum()
        self._step(self._critic_optimizer, loss)
        return float(loss.item()), q_all

    @contextlib.contextmanager
    def _critic_frozen(self) -> Iterator[None]:
        """The critics' parameters take no gradient inside (the actor learns through them)."""
        self._model.critic.requires_grad_(False)
        try:
            yield
        finally:
            self._model.critic.requires_grad_(True)

    def _end_update(self, stats: dict[str, float]) -> dict[str, float]:
        """Count the update and move the target model; ``stats`` with the learning rates and ``total_loss`` (the sum
        of the ``*_loss`` entries)."""
        self._learn_iter += 1
        soft_update(self._target_model, self._model, float(self._cfg.learn.target_theta))
        critic_stat, actor_stat = self.rate_stats
        stats[critic_stat] = float(self._critic_optimizer.param_groups[0]["lr"])
        stats[actor_stat] = float(self._actor_optimizer.param_groups[0]["lr"])
        stats["total_loss"] = sum(value for key, value in stats.items() if key.endswith("_loss"))
        return stats

    # ----- state ---------------------------------------------------------------------------------
    def _extra_state(self) -> dict[str, Any]:
        return {}

    def _load_extra_state(self, state: Mapping[str, Any]) -> None:
        return None

    def state_dict(self) -> dict[str, Any]:
        """Model, target model, optimizers and update count (what a checkpoint holds)."""
        return {
            "model": self._model.state_dict(),
            "target_model": self._target_model.state_dict(),
            "optimizer_q": self._critic_optimizer.state_dict(),
            "optimizer_policy": self._actor_optimizer.state_dict(),
            **self._extra_state(),
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
        self._load_extra_state(state)
        self._learn_iter = int(state.get("learn_iter", 0))

    def _load_model_only(self, state: Mapping[str, Any]) -> None:
        if not isinstance(state, Mapping) or "model" not in state:
            raise ValueError(f"a {self.algorithm} state dict needs a 'model' entry (the model's state_dict)")
        self._model.load_state_dict(state["model"])
