"""DI-engine's policy keys that any policy section may carry, and their fates in ding (compatibility).

DI-engine's ``compile_config`` writes some keys into every policy section, and its configs carry them. ``load_path``
is one of ding's own keys (:data:`ding.config.policy_sections.COMMON_CONFIG`); the others are read into ding's terms
here, before ding compiles the section:

- ``collect.env_num`` / ``eval.env_num`` (and ``collect.collector_env_num`` / ``eval.evaluator_env_num``, which some
  of DI-engine's configs carry and DI-engine ignores): the numbers of envs, which ding reads from
  ``env.collector_env_num`` / ``env.evaluator_env_num``; dropped.
- ``collect.collector.collect_print_freq``: how often DI-engine's collector logs; ding's status line keeps its own
  cadence; dropped (with the ``collector`` section when nothing else is in it).
- ``multi_gpu`` (in the policy section or its ``learn``) and ``learn.resume_training``: False is ding's behaviour and
  is dropped; True is refused (ding trains on one device; ``--load-path`` resumes a run).
- ``learn.discount_factor`` and ``learn.epoch_per_collect`` where the policy has no such key (DI-engine's A2C
  configs carry them; its A2C reads neither): dropped.
- ``env.exp_name`` (some of DI-engine's MuJoCo configs): dropped; the run's name is the top-level ``exp_name``.

Every key dropped this way is named in one log line (``ding.config``, warning level) saying that ding ignores it.
- An empty section the policy does not have (``other=dict()``, ``command=dict()``) sets nothing and is dropped.
- ``model.activation`` given as a torch module (``nn.Tanh()``) is recorded by its name (``'tanh'``).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import Any

from ding.errors import ConfigError

_ENV_COUNT_KEYS = {"collect": ("env_num", "collector_env_num"), "eval": ("env_num", "evaluator_env_num")}
"""Env counts DI-engine's configs repeat in a policy section (ding reads them from the env section)."""

LOGGER = logging.getLogger("ding.config")
_UNREAD_LEARN_KEYS = ("discount_factor", "epoch_per_collect")
"""``policy.learn`` keys of DI-engine's configs that its policies without them do not read."""
IGNORED_ENV_KEYS = ("exp_name",)
"""``env`` keys of DI-engine's configs that its envs do not read."""

_REFUSED_WHEN_TRUE = {
    "multi_gpu": "ding trains on one device; set multi_gpu=False",
    "resume_training": "ding resumes a run from a checkpoint given as --load-path (serial_pipeline(load_path=...)); "
    "set resume_training=False",
}


ACTIVATION_MODULES = {"ReLU": "relu", "Tanh": "tanh", "GELU": "gelu", "SiLU": "silu"}
"""torch activation modules by class name, and the names ding's model configs use for them."""


def without_inert_keys(user: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the user's policy section in ding's terms: DI-engine's keys that change nothing in ding dropped, an
    activation module named (see the module). A key the policy's own ``defaults`` declare is the policy's and is kept.

    >>> without_inert_keys({'collect': {'n_sample': 8, 'env_num': 4}, 'other': {}}, {'collect': {}})
    {'collect': {'n_sample': 8}}
    >>> without_inert_keys({'collect': {'collector_env_num': 1}, 'eval': {'evaluator_env_num': 8}}, {})
    {}
    >>> without_inert_keys({'collect': {'n_sample': 8, 'collector': {'collect_print_freq': 100}}}, {'collect': {}})
    {'collect': {'n_sample': 8}}
    >>> without_inert_keys({'learn': {'multi_gpu': True}}, {'learn': {}})
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: policy.learn.multi_gpu is True: ding trains on one device; set multi_gpu=False
    """
    section = copy.deepcopy(dict(user))
    ignored: list[str] = []
    if "multi_gpu" in section and "multi_gpu" not in defaults:
        if section["multi_gpu"]:
            raise ConfigError(f"policy.multi_gpu is {section['multi_gpu']!r}: {_REFUSED_WHEN_TRUE['multi_gpu']}")
        ignored.append(f"policy.multi_gpu={section.pop('multi_gpu')!r}")
    for part, names in _ENV_COUNT_KEYS.items():
        sub = section.get(part)
        if isinstance(sub, Mapping):
            dropped = {name for name in names if name in sub and name not in (defaults.get(part) or {})}
            ignored.extend(f"policy.{part}.{name}={sub[name]!r}" for name in sorted(dropped))
            section[part] = {key: value for key, value in sub.items() if key not in dropped}
    collect = section.get("collect")
    collector = collect.get("collector") if isinstance(collect, Mapping) else None
    own = defaults.get("collect", {})
    if isinstance(collect, Mapping) and isinstance(collector, Mapping) and "collector" not in own:
        kept = {key: value for key, value in collector.items() if key != "collect_print_freq"}
        if "collect_print_freq" in collector:
            ignored.append(f"policy.collect.collector.collect_print_freq={collector['collect_print_freq']!r}")
        section["collect"] = {key: value for key, value in collect.items() if key != "collector"}
        if kept:
            section["collect"]["collector"] = kept
    learn = section.get("learn")
    if isinstance(learn, Mapping):
        own = defaults.get("learn") or {}
        for key, why in _REFUSED_WHEN_TRUE.items():
            if key in learn and key not in own:
                if learn[key]:
                    raise ConfigError(f"policy.learn.{key} is {learn[key]!r}: {why}")
                ignored.append(f"policy.learn.{key}={learn[key]!r}")
                section["learn"] = {k: v for k, v in section["learn"].items() if k != key}
        for key in _UNREAD_LEARN_KEYS:
            if key in learn and key not in own:
                ignored.append(f"policy.learn.{key}={learn[key]!r}")
                section["learn"] = {k: v for k, v in section["learn"].items() if k != key}
    for key in [key for key, value in section.items() if value == {} and key not in defaults]:
        del section[key]  # an empty section (DI-engine's other=dict(), command=dict()) sets nothing
    report_ignored(ignored)
    model = section.get("model")
    if isinstance(model, Mapping) and type(model.get("activation")).__name__ in ACTIVATION_MODULES:
        section["model"] = {**model, "activation": ACTIVATION_MODULES[type(model["activation"]).__name__]}
    return section


def without_ignored_env_keys(user_env: Mapping[str, Any], declared: Mapping[str, Any]) -> dict[str, Any]:
    """The user's ``env`` section without DI-engine's env keys that change nothing (``exp_name``), each reported.

    >>> without_ignored_env_keys({'env_id': 'Hopper-v5', 'exp_name': 'hc'}, {'env_id': None})
    {'env_id': 'Hopper-v5'}
    """
    dropped = [key for key in IGNORED_ENV_KEYS if key in user_env and key not in declared]
    report_ignored([f"env.{key}={user_env[key]!r}" for key in dropped])
    return {key: value for key, value in user_env.items() if key not in dropped}


def report_ignored(keys: list[str]) -> None:
    """One log line naming DI-engine's keys (``path=value``) that ding ignores, when there are any."""
    if keys:
        LOGGER.warning("ding ignores %s: DI-engine keys that change nothing here", ", ".join(keys))
