"""PPO: on-policy actor-critic with GAE advantages and the clipped surrogate objective (DI-engine's ``ppo``)."""

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
from ding.config.policy_sections import NO_PRIORITY, evaluator_section, learner_section
from ding.config.shapes import MODEL_SPEC_KEYS
from ding.errors import ConfigError
from ding.model.mavac import MULTI_AGENT_SHAPE_KEYS, mavac_from_config
from ding.model.vac import ACTION_SPACES, vac_from_config
from ding.policy.base import Policy
from ding.policy.device import policy_device
from ding.policy.model_keys import ACTIVATION, SIGMA_INIT, built_within_memory, layers, width, widths
from ding.policy.obs_batch import obs_tensor
from ding.policy.ppo_math import KL_TYPES, gae_advantages, kl_estimate, ppo_loss
from ding.policy.ppo_samples import ReturnScale, recompute_advantages
from ding.utils.accepts import count, fixed, fraction, non_negative, one_of, optional, positive, satisfying, unit
from ding.utils.checkpoint_files import CheckpointError, read_checkpoint
from ding.utils.value_rules import PositiveFloat, UnitFloat, conforms

__all__ = ["PPOPolicy", "gae_advantages", "ppo_loss"]

GRAD_CLIP_TYPES = ("clip_norm", "clip_value", None)
"""``learn.grad_clip_type``: clip the gradients' norm or each value at ``grad_clip_value``, or not at all."""

MODEL_ACTION_SPACE = one_of(*ACTION_SPACES, None, default=None, note="it must agree with policy.action_space")
"""``model.action_space``: DI-engine's configs repeat the policy's ``action_space`` in the model section."""

LR_SCHEDULE = satisfying(
    "a dict {'epoch_num': n > 0, 'min_lr_lambda': x in [0, 1]}",
    lambda v: (
        isinstance(v, Mapping)
        and set(v) == {"epoch_num", "min_lr_lambda"}
        and conforms(PositiveFloat, v["epoch_num"])
        and conforms(UnitFloat, v["min_lr_lambda"])
    ),
    note="the learning rate falls linearly per collection to min_lr_lambda times itself over epoch_num collections",
)
"""``learn.lr_scheduler``: DI-engine's linear schedule of the learning rate."""


@POLICY_REGISTRY.register("ppo")
class PPOPolicy(Policy):
    """Proximal policy optimization for discrete or continuous actions, one agent or many (DI-engine's ``ppo``).

    - Collection samples actions from the current policy and records their log-probabilities and the
      critic's values. A trajectory becomes training samples when its episode ends or when the
      on-policy pipeline cuts it at the end of a collection; advantages are GAE
      (``collect.discount_factor``, ``collect.gae_lambda``), bootstrapped with the value of the last
      next observation unless the episode terminated (a time-limit cut is bootstrapped; ``learn.ignore_done``
      bootstraps after real ends too). ``recompute_adv`` recomputes them before every epoch with the critic as
      it is then; ``learn.value_norm`` has the critic predict returns divided by their running standard deviation.
    - Each collection is learned ``learn.epoch_per_collect`` times in shuffled minibatches of
      ``learn.batch_size`` (the pipeline does the shuffling); one update is one minibatch:
      clipped surrogate (``clip_ratio``), value loss (``value_weight``), entropy bonus
      (``entropy_weight``), advantages normalized per minibatch when ``adv_norm``, gradients clipped by
      ``grad_clip_type`` (``'clip_norm'``, ``'clip_value'`` or None) at ``grad_clip_value``; with
      ``pretrained_model_path`` a KL penalty towards that model (``kl_beta``, estimator ``kl_type``), and
      ``lr_scheduler`` (``{'epoch_num': n, 'min_lr_lambda': x}``) lowers the learning rate linearly per collection.
    - ``action_space`` is ``'discrete'`` (categorical) or ``'continuous'`` (Gaussian with a
      state-independent log std; the sampled action is passed to the env unclipped). Evaluation is
      greedy: the most likely action, or the mean.
    - ``multi_agent`` (MAPPO): the model is :class:`~ding.model.mavac.MAVAC`, one actor and critic shared by the
      agents of DI-engine's multi-agent observation dict; each agent has its own log-probability, value and
      advantage, the team reward (or each agent's, with one reward per agent) drives them all.

    Example:
        >>> policy = PPOPolicy({'model': {'obs_shape': 4, 'action_shape': 2}}, seed=0)
        >>> out = policy.collect_mode.forward({0: np.zeros(4, np.float32)})
        >>> sorted(out[0]), out[0]['action'] in (0, 1)
        (['action', 'logit', 'logp', 'value'], True)
    """

    algorithm = "PPO"

    config: ClassVar[dict[str, Any]] = {
        "cuda": False,
        "on_policy": fixed(True, note="PPO learns on-policy"),
        "priority": fixed(False, note=NO_PRIORITY),
        "priority_IS_weight": fixed(False, note=NO_PRIORITY),
        "recompute_adv": True,
        "action_space": one_of(*ACTION_SPACES, default="discrete"),
        "nstep_return": fixed(False, note="advantages are GAE"),
        "multi_agent": False,
        "transition_with_policy_data": fixed(True, note="samples keep the policy's log-probabilities and values"),
        "model": {
            "encoder_hidden_size_list": widths([64, 64, 128]),
            "actor_head_hidden_size": width(128),
            "actor_head_layer_num": layers(1),
            "critic_head_hidden_size": width(128),
            "critic_head_layer_num": layers(1),
            "share_encoder": True,
            "activation": ACTIVATION,
            "sigma_init": SIGMA_INIT,
            "sigma_type": fixed("independent", note="a state-independent log std"),
            "bound_type": one_of("tanh", None, default=None, note="'tanh' squashes the mean into [-1, 1]"),
            "action_space": MODEL_ACTION_SPACE,  # the policy's action_space; given here, it must agree
        },
        "learn": {
            "epoch_per_collect": count(10),
            "update_per_collect": optional(count(), note="DI-engine's key; on-policy PPO counts epoch_per_collect"),
            "batch_size": count(64),
            "learning_rate": positive(0.0003),
            "lr_scheduler": optional(LR_SCHEDULE),
            "value_weight": non_negative(0.5),
            "entropy_weight": non_negative(0.0),
            "clip_ratio": positive(0.2),
            "adv_norm": True,
            "value_norm": True,
            "ppo_param_init": True,
            "grad_clip_type": one_of(*GRAD_CLIP_TYPES, default="clip_norm"),
            "grad_clip_value": optional(positive(0.5), note="None: no clipping"),
            "ignore_done": False,
            "kl_type": one_of(*KL_TYPES, default="k1"),
            "kl_beta": non_negative(0.0),
            "pretrained_model_path": optional(str, note="a checkpoint of the same model"),
            **learner_section(log_show_after_iter=100),
        },
        "collect": {
            "n_sample": count(64),
            "unroll_len": fixed(1, note="samples are one step each"),
            "discount_factor": fraction(0.99),
            "gae_lambda": unit(0.95),
        },
        "eval": evaluator_section(eval_freq=1000),
    }

    MULTI_AGENT_MODEL: ClassVar[dict[str, Any]] = {
        "actor_head_hidden_size": width(256),
        "actor_head_layer_num": layers(2),
        "critic_head_hidden_size": width(512),
        "critic_head_layer_num": layers(1),
        "activation": ACTIVATION,
        "sigma_init": SIGMA_INIT,
        "action_space": MODEL_ACTION_SPACE,
    }
    """The model defaults with ``multi_agent`` (DI-engine's ``mavac``)."""

    @classmethod
    def action_kinds(cls, cfg: Mapping[str, Any]) -> tuple[type, ...] | None:
        """A categorical actor over ``Discrete(n)`` (``action_space='discrete'``) or a Gaussian over a ``Box``
        (``'continuous'``); a multi-agent section's spaces are checked per agent."""
        if cfg.get("multi_agent"):
            return None
        return (spaces.Box,) if cfg.get("action_space") == "continuous" else (spaces.Discrete,)

    @classmethod
    def declared_for(cls, user: Mapping[str, Any]) -> dict[str, Any]:
        """PPO's declared config; with ``multi_agent`` the model section is MAVAC's."""
        declared = super().declared_for(user)
        if user.get("multi_agent"):
            declared["model"] = {**dict.fromkeys(MULTI_AGENT_SHAPE_KEYS), **cls.MULTI_AGENT_MODEL}
        return declared

    @classmethod
    def model_spec_keys(cls, user: Mapping[str, Any]) -> tuple[str, ...]:
        return MULTI_AGENT_SHAPE_KEYS if user.get("multi_agent") else MODEL_SPEC_KEYS

    def __init__(self, cfg: Mapping[str, Any] | None = None, model: nn.Module | None = None, seed: int = 0) -> None:
        super().__init__(cfg)
        config = self._cfg
        self._device = policy_device(config.cuda)
        self._continuous = config.action_space == "continuous"
        self._multi_agent = bool(config.get("multi_agent", False))
        self._model = (model if model is not None else built_within_memory(self._build_model)).to(self._device)
        self._optimizer = torch.optim.Adam(self._model.parameters(), lr=config.learn.learning_rate)
        self._gamma = float(config.collect.discount_factor)
        self._lambda = float(config.collect.gae_lambda)
        self._generator = torch.Generator().manual_seed(seed)
        self._learn_iter = 0
        self._traj_count = 0
        learn = config.learn
        self._return_scale = ReturnScale() if learn.get("value_norm", False) else None
        self._reference = self._load_reference(learn.get("pretrained_model_path"))
        self._lr_scheduler = self._make_lr_scheduler(learn.get("lr_scheduler"))

    def _build_model(self) -> nn.Module:
        config = self._cfg
        model_cfg = {key: value for key, value in dict(config.model).items() if key != "action_space"}
        model: nn.Module = (
            mavac_from_config(model_cfg, config.action_space)
            if self._multi_agent
            else vac_from_config(model_cfg, config.action_space)
        )
        if not config.learn.get("ppo_param_init", True):  # PyTorch's own initialization instead of orthogonal
            for module in model.modules():
                if isinstance(module, nn.Linear):
                    module.reset_parameters()
        return model

    def _load_reference(self, path: str | None) -> nn.Module | None:
        """The frozen model of ``learn.pretrained_model_path`` that the KL penalty compares with (None: no penalty)."""
        if path is None:
            return None
        try:
            state = read_checkpoint(path)
        except CheckpointError as err:
            raise ConfigError(f"policy.learn.pretrained_model_path {path!r} cannot be loaded: {err}") from err
        if isinstance(state, Mapping) and "model" in state:
            state = state["model"]
        reference = copy.deepcopy(self._model)
        try:
            reference.load_state_dict(state)
        except (RuntimeError, TypeError) as err:
            raise ConfigError(f"policy.learn.pretrained_model_path {path!r} does not fit the model: {err}") from err
        reference.eval()
        for parameter in reference.parameters():
            parameter.requires_grad_(False)
        return reference

    def _make_lr_scheduler(self, schedule: Mapping[str, Any] | None) -> torch.optim.lr_scheduler.LambdaLR | None:
        if schedule is None:
            return None
        epoch_num, min_lambda = float(schedule["epoch_num"]), float(schedule["min_lr_lambda"])
        return torch.optim.lr_scheduler.LambdaLR(
            self._optimizer, lambda n: max(1.0 - n * (1.0 - min_lambda) / epoch_num, min_lambda)
        )

    @classmethod
    def check_config(cls, cfg: EasyDict) -> None:
        """DI-engine configs repeat ``action_space`` in the model section; it must agree with the policy's."""
        model_space = cfg.model.get("action_space")
        if model_space is not None and model_space != cfg.action_space:
            raise ConfigError(
                f"policy.model.action_space is {model_space!r} but policy.action_space is {cfg.action_space!r}; "
                "they must agree (or leave the model's out)"
            )

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
        flat = probs.reshape(-1, probs.shape[-1])
        drawn = torch.multinomial(flat, 1, generator=self._generator).reshape(probs.shape[:-1])
        return drawn.to(self._device)

    def _action_value(self, action: torch.Tensor, index: int) -> Any:
        if self._continuous:
            return action[index].cpu().numpy().astype(np.float32)
        if self._multi_agent:
            return action[index].cpu().numpy().astype(np.int64)
        return int(action[index])

    # ----- acting --------------------------------------------------------------------------------
    def _obs_tensor(self, observations: Sequence[Any]) -> Any:
        if self._multi_agent:  # DI-engine's multi-agent dict: one batch per entry
            return {key: obs_tensor([obs[key] for obs in observations], self._device) for key in observations[0]}
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

    def _value_scale(self) -> float:
        return 1.0 if self._return_scale is None else self._return_scale.std

    def _forward_collect(self, obs: Mapping[int, Any]) -> dict[int, dict[str, Any]]:
        env_ids, out = self._run_model(obs)
        action = self._sample(out["logit"])
        logp = self._distribution(out["logit"]).log_prob(action)
        value = out["value"] * self._value_scale()  # on the returns' scale
        return {
            env_id: {
                "action": self._action_value(action, i),
                "logit": self._logit_numpy(out["logit"], i),
                "logp": _numbers(logp[i]),
                "value": _numbers(value[i]),
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
        agents = np.shape(output["value"])
        if reward.size != 1 and not (self._multi_agent and reward.shape == agents):
            accepted = f"1 or one per agent {agents}" if self._multi_agent else "1"
            raise ValueError(
                f"{self.algorithm} needs a reward of size {accepted} per step, got shape {np.shape(timestep.reward)}"
            )
        return {
            "obs": obs,
            "action": output["action"],
            "logp": output["logp"],
            "value": output["value"],
            "reward": float(reward[0]) if reward.size == 1 else reward,
            "next_obs": timestep.obs,
            "done": bool(timestep.terminated) and not self._cfg.learn.get("ignore_done", False),
        }

    def _values_of(self, observations: list[Any]) -> np.ndarray:
        """The critic's values of ``observations`` on the returns' scale, in chunks."""
        chunks = []
        with torch.no_grad():
            for begin in range(0, len(observations), 1024):
                batch = self._obs_tensor(observations[begin : begin + 1024])
                chunks.append((self._model(batch)["value"] * self._value_scale()).cpu().numpy().astype(np.float64))
        return np.concatenate(chunks)

    def _get_train_sample(self, traj: list[dict[str, Any]], episode_over: bool) -> list[dict[str, Any]]:
        """Nothing until the trajectory is over (the episode ended or the pipeline cut it); then all of it."""
        if not episode_over or not traj:
            return []
        last = traj[-1]
        value = np.array([t["value"] for t in traj], dtype=np.float64)
        bootstrap = np.zeros_like(value[-1])
        if not last["done"]:
            bootstrap = self._values_of([last["next_obs"]])[0]
        next_value = np.concatenate([value[1:], bootstrap[None]])
        done = np.array([t["done"] for t in traj], dtype=np.float64)
        reward = np.array([t["reward"] for t in traj])
        advantage = gae_advantages(reward, value, next_value, done, self._gamma, self._lambda)
        self._traj_count += 1
        samples = [
            {
                "obs": t["obs"],
                "action": t["action"],
                "logp": t["logp"],
                "value": t["value"],
                "adv": _numbers(advantage[i]),
                "return": _numbers(advantage[i] + value[i]),
                "traj": self._traj_count,
                "reward": t["reward"],
                "done": t["done"],
            }
            for i, t in enumerate(traj)
        ]
        samples[-1]["bootstrap_obs"] = None if last["done"] else last["next_obs"]
        return samples

    # ----- learning ------------------------------------------------------------------------------
    def _prepare_epoch(self, samples: list[dict[str, Any]], epoch: int) -> None:
        """Before each epoch: recompute advantages (``recompute_adv``) and update the return scale; a new
        collection also steps the learning-rate schedule."""
        if epoch == 0 and self._lr_scheduler is not None and self._learn_iter > 0:
            self._lr_scheduler.step()
        if not samples:
            return
        if self._cfg.get("recompute_adv", False) and all("traj" in sample for sample in samples):
            recompute_advantages(samples, self._values_of, self._gamma, self._lambda)
        if self._return_scale is not None and (epoch == 0 or self._cfg.get("recompute_adv", False)):
            self._return_scale.update(np.array([sample["return"] for sample in samples], dtype=np.float64))

    def _collate(self, batch: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        device = self._device

        def floats(key: str) -> torch.Tensor:
            values = np.array([sample[key] for sample in batch], dtype=np.float32)
            return torch.from_numpy(values).to(device)

        if self._continuous:
            actions = np.stack([np.asarray(sample["action"], dtype=np.float32) for sample in batch])
            action = torch.from_numpy(actions).to(device)
        else:
            action = torch.from_numpy(np.array([sample["action"] for sample in batch], dtype=np.int64)).to(device)
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
        alive = self._alive(data["obs"])
        live = advantage if alive is None else advantage[alive > 0]
        if learn.adv_norm and live.numel() > 1:
            advantage = (advantage - live.mean()) / (live.std() + 1e-8)
        out = self._model(data["obs"])
        dist = self._distribution(out["logit"])
        logp = dist.log_prob(data["action"])
        losses = ppo_loss(
            logp,
            data["logp"],
            advantage,
            out["value"],
            data["return"] / self._value_scale(),
            dist.entropy(),
            float(learn.clip_ratio),
            float(learn.value_weight),
            float(learn.entropy_weight),
            alive,
        )
        total = losses["total_loss"]
        if self._reference is not None:
            with torch.no_grad():
                reference_logit = self._reference(data["obs"])["logit"]
            reference_logp = self._distribution(reference_logit).log_prob(data["action"])
            losses["kl_div"] = kl_estimate(logp - reference_logp, learn.get("kl_type", "k1"))
            total = total + float(learn.get("kl_beta", 0.0)) * losses["kl_div"]
        self._optimizer.zero_grad()
        total.backward()
        self._clip_gradients()
        self._optimizer.step()
        self._learn_iter += 1
        losses["total_loss"] = total
        return {
            "cur_lr": float(self._optimizer.param_groups[0]["lr"]),
            **{key: float(value.item()) for key, value in losses.items()},
            "value_mean": float(out["value"].mean().item()) * self._value_scale(),
        }

    def _alive(self, obs: Any) -> torch.Tensor | None:
        """Multi-agent: which agents were in the episode when they acted (DI-engine's ``alive``); others add no loss."""
        if not (self._multi_agent and isinstance(obs, Mapping) and "alive" in obs):
            return None
        return obs["alive"].float()

    def _clip_gradients(self) -> None:
        learn = self._cfg.learn
        clip_type, limit = learn.get("grad_clip_type", "clip_norm"), learn.grad_clip_value
        if clip_type is None or limit is None:
            return
        if clip_type == "clip_norm":
            nn.utils.clip_grad_norm_(self._model.parameters(), float(limit))
        else:
            nn.utils.clip_grad_value_(self._model.parameters(), float(limit))

    # ----- state ---------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Model, optimizer, update count and the return scale (what a checkpoint holds)."""
        state: dict[str, Any] = {
            "model": self._model.state_dict(),
            "optimizer": self._optimizer.state_dict(),
            "learn_iter": self._learn_iter,
        }
        if self._return_scale is not None:
            state["return_scale"] = self._return_scale.state_dict()
        return state

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
        if self._return_scale is not None and "return_scale" in state:  # the critic's values are on its scale
            self._return_scale.load_state_dict(state["return_scale"])


def _numbers(row: torch.Tensor | np.ndarray | float) -> Any:
    """One env's entry of a batch: a float, or (several agents) a float32 array."""
    array = row.detach().cpu().numpy() if isinstance(row, torch.Tensor) else np.asarray(row)
    return float(array) if array.ndim == 0 else array.astype(np.float32)
