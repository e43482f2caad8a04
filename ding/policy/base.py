"""``Policy``: the interface the serial pipeline's workers call, grouped into DI-engine's three modes.

- ``learn_mode``: ``forward(batch) -> stats`` (one update from a list of samples), ``state_dict()``,
  ``load_state_dict(state)``, ``batch_size``, ``update_per_collect``;
- ``collect_mode``: ``forward(obs, **collect_kwargs) -> {env_id: {'action': ...}}``,
  ``process_transition(obs, output, timestep) -> transition``,
  ``get_train_sample(traj, episode_over) -> samples`` (one sample per leading transition of
  ``traj`` that is ready), ``collect_kwargs(env_step)`` (e.g. the current epsilon) and ``n_sample``;
- ``eval_mode``: ``forward(obs) -> {env_id: {'action': ...}}`` (greedy) and ``load_state_dict``.

``obs`` is always a dict ``{env_id: observation}``, as an env manager's ``ready_obs``.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from easydict import EasyDict

from ding.config.policy_sections import common_declarations
from ding.config.shapes import MODEL_SPEC_KEYS, with_model_spec_keys
from ding.errors import ConfigError
from ding.policy.nstep import NStepRule
from ding.utils.accepts import check_values, plain_defaults
from ding.utils.merge import deep_merge_dicts

NAME_KEYS = ("type", "import_names")


@dataclasses.dataclass(frozen=True)
class LearnMode:
    forward: Callable[[list[dict[str, Any]]], dict[str, float]]
    state_dict: Callable[[], dict[str, Any]]
    load_state_dict: Callable[[Mapping[str, Any]], None]
    batch_size: int
    update_per_collect: int
    prepare_epoch: Callable[[list[dict[str, Any]], int], None]
    """Called before each pass over a collection's samples with the pass's index (0: a new collection); on-policy
    methods may rewrite the samples in place (PPO's ``recompute_adv``)."""


@dataclasses.dataclass(frozen=True)
class CollectMode:
    forward: Callable[..., dict[int, dict[str, Any]]]
    process_transition: Callable[[Any, Mapping[str, Any], Any], dict[str, Any]]
    get_train_sample: Callable[[list[dict[str, Any]], bool], list[dict[str, Any]]]
    collect_kwargs: Callable[[int], dict[str, Any]]
    n_sample: int


@dataclasses.dataclass(frozen=True)
class EvalMode:
    forward: Callable[[Mapping[int, Any]], dict[int, dict[str, Any]]]
    load_state_dict: Callable[[Mapping[str, Any]], None]


class Policy(ABC):
    """Base of registered policies: a declared ``config`` and the three modes (see the module doc).

    ``config`` holds each key's default and what it accepts (:mod:`ding.utils.accepts`); :meth:`default_config`
    gives the plain values. ``cfg`` is the ``policy`` section of a compiled config (or any part of it: it is merged
    into :meth:`default_config` strictly, so an unknown key is a :class:`~ding.errors.ConfigError`, and every value
    is held to what its key accepts).
    """

    config: ClassVar[dict[str, Any]] = {}
    """Declared defaults: plain values and :mod:`ding.utils.accepts` declarations."""
    algorithm: ClassVar[str] = "policy"
    """The algorithm's name in messages (subclasses of a policy name their own algorithm)."""

    @classmethod
    def default_config(cls) -> dict[str, Any]:
        """The policy's full default config: plain values (a fresh copy)."""
        return plain_defaults(cls.config)

    @classmethod
    def merge_config(cls, cfg: Mapping[str, Any] | None = None) -> EasyDict:
        """``cfg`` (a ``policy`` section) merged into :meth:`default_config` strictly and held to what each key
        accepts: the config an instance runs.

        ``cfg`` is in ding's terms, as a compiled config's section is; a section in DI-engine's layout is read into
        them by ``ding.config.compile_config`` (:mod:`ding.config.di_engine.layout`)."""
        if cfg is not None and not isinstance(cfg, Mapping):
            raise ConfigError(f"policy config must be a dict, got {type(cfg).__name__} {cfg!r}")
        user = {key: value for key, value in dict(cfg or {}).items() if key not in NAME_KEYS}
        declared = cls.declared_for(user)
        defaults = plain_defaults(declared)
        merged = deep_merge_dicts(defaults, user, strict=True, path="policy")
        check_values(declared, merged, "policy")
        config = EasyDict(merged)
        cls.check_config(config)
        return config

    @classmethod
    def check_config(cls, cfg: EasyDict) -> None:
        """Refuse what ``config`` cannot declare key by key: keys that must agree (none by default).

        ``cfg`` is merged and every value is one its key accepts.
        """
        return None

    @classmethod
    def declared_for(cls, user: Mapping[str, Any]) -> dict[str, Any]:
        """The declared config a user's ``policy`` section ``user`` is merged into and held to: ``config``, its
        ``model`` with every key filled from the env's spaces (None until the config is compiled with its env), and
        DI-engine's keys every policy section has.

        A policy whose model depends on the section (PPO's ``multi_agent``) overrides :meth:`model_spec_keys`.
        """
        declared = with_model_spec_keys(dict(cls.config), cls.model_spec_keys(user))
        return {**declared, **common_declarations(declared)}

    @classmethod
    def defaults_for(cls, user: Mapping[str, Any]) -> dict[str, Any]:
        """The plain defaults a user's ``policy`` section ``user`` merges into (see :meth:`declared_for`)."""
        return plain_defaults(cls.declared_for(user))

    @classmethod
    def model_spec_keys(cls, user: Mapping[str, Any]) -> tuple[str, ...]:
        """The ``policy.model`` keys the env's spaces fill for the section ``user``."""
        return MODEL_SPEC_KEYS

    @classmethod
    def action_kinds(cls, cfg: Mapping[str, Any]) -> tuple[type, ...] | None:
        """The gymnasium space classes whose actions the policy configured by ``cfg`` takes (None: any); the config
        is refused for an env whose action space is none of them."""
        return None

    @classmethod
    def nstep_rule_of(cls, cfg: Mapping[str, Any]) -> NStepRule | None:
        """The n-step rule by which the policy's ``get_train_sample`` builds samples for the merged config ``cfg``.

        None (the default): its samples are not n-step transitions, so a buffer of transitions cannot rebuild them.
        """
        return None

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        self._cfg = self.merge_config(cfg)

    @property
    def nstep_rule(self) -> NStepRule | None:
        """:meth:`nstep_rule_of` this policy's config."""
        return self.nstep_rule_of(self._cfg)

    @property
    def cfg(self) -> EasyDict:
        return self._cfg

    # ----- the three modes, built from the hooks every policy implements ----------------------------
    @property
    def learn_mode(self) -> LearnMode:
        return LearnMode(
            forward=self._forward_learn,
            state_dict=self.state_dict,
            load_state_dict=self.load_state_dict,
            batch_size=int(self._cfg.learn.batch_size),
            update_per_collect=self._update_per_collect(),
            prepare_epoch=self._prepare_epoch,
        )

    @property
    def collect_mode(self) -> CollectMode:
        return CollectMode(
            forward=self._forward_collect,
            process_transition=self._process_transition,
            get_train_sample=self._get_train_sample,
            collect_kwargs=self._collect_kwargs,
            n_sample=int(self._cfg.collect.n_sample),
        )

    @property
    def eval_mode(self) -> EvalMode:
        return EvalMode(forward=self._forward_eval, load_state_dict=self._load_model_only)

    def _update_per_collect(self) -> int:
        """Learner passes per collection (``learn.update_per_collect``; on-policy methods count epochs)."""
        return int(self._cfg.learn.update_per_collect)

    def _prepare_epoch(self, samples: list[dict[str, Any]], epoch: int) -> None:
        """Before pass ``epoch`` over a collection's ``samples``: nothing, unless a policy needs it."""
        return None

    @abstractmethod
    def _forward_learn(self, batch: list[dict[str, Any]]) -> dict[str, float]: ...

    @abstractmethod
    def state_dict(self) -> dict[str, Any]: ...

    @abstractmethod
    def load_state_dict(self, state: Mapping[str, Any]) -> None: ...

    @abstractmethod
    def _load_model_only(self, state: Mapping[str, Any]) -> None: ...

    @abstractmethod
    def _forward_collect(self, *args: Any, **kwargs: Any) -> dict[int, dict[str, Any]]: ...

    @abstractmethod
    def _forward_eval(self, obs: Mapping[int, Any]) -> dict[int, dict[str, Any]]: ...

    @abstractmethod
    def _collect_kwargs(self, env_step: int) -> dict[str, Any]: ...

    @abstractmethod
    def _process_transition(self, obs: Any, output: Mapping[str, Any], timestep: Any) -> dict[str, Any]: ...

    @abstractmethod
    def _get_train_sample(self, traj: list[dict[str, Any]], episode_over: bool) -> list[dict[str, Any]]: ...
