"""DI-engine's ``create_config`` sections for the serial pipeline's workers, and the components ding does not have
(compatibility).

DI-engine's configs name a learner, collector, evaluator and replay buffer in ``create_config``; ding's serial pipeline
always runs its own (:data:`PIPELINE_WORKERS`), so such a section may only name that one (or a DI-engine type that
works as ding's does), and is then dropped: :func:`without_worker_sections`. DI-engine's reward and world models
are refused (:data:`NOT_IN_DING`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ding.errors import ConfigError


@dataclasses.dataclass(frozen=True)
class PipelineWorker:
    """A DI-engine component that ding's serial pipeline always provides itself, from ``ding.worker``."""

    type: str
    class_name: str
    settings: str
    same_as: tuple[str, ...] = ()
    """DI-engine's types that name a component working as ding's does (so ding's is run for them)."""

    def message(self, given: str) -> str:
        """Why ``given`` (where the config names this component, and how) is refused, and what ding does instead."""
        return (
            f"{given}: ding's serial pipeline always runs its own ding.worker.{self.class_name} "
            f"(type {self.type!r}), set up under main_config.{self.settings}; name that, or leave it out"
        )


PIPELINE_WORKERS: dict[str, PipelineWorker] = {
    "learner": PipelineWorker("base", "BaseLearner", "policy.learn.learner"),
    "collector": PipelineWorker("sample", "SampleSerialCollector", "policy.collect"),
    "evaluator": PipelineWorker("interaction", "InteractionSerialEvaluator", "policy.eval.evaluator"),
    "replay_buffer": PipelineWorker(
        "naive", "NaiveReplayBuffer", "policy.other.replay_buffer", same_as=("deque",)
    ),  # DI-engine's deque buffer: first in first out, uniform samples without repeats, as ding's
}
"""DI-engine's ``create_config`` sections that may only name ding's own worker (and then change nothing)."""

NOT_IN_DING: dict[str, str] = {
    "reward_model": "ding has no reward models: policies learn from the reward the env returns",
    "world_model": "ding has no world models: its policies are model-free",
}
"""DI-engine components ding does not have, and what it does instead."""


def check_worker_section(name: str, section: Any) -> None:
    """Accept a ``create_config`` section of :data:`PIPELINE_WORKERS` that names ding's own worker (or a DI-engine
    type that works as it does); refuse anything else, saying what ding runs instead.

    >>> check_worker_section('replay_buffer', {'type': 'deque', 'import_names': ['ding.data.buffer.deque_buffer']})
    >>> check_worker_section('learner', {'type': 'my_learner'})
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: create_config.learner.type 'my_learner': ding's serial pipeline always runs its own \
ding.worker.BaseLearner (type 'base'), set up under main_config.policy.learn.learner; name that, or leave it out
    """
    worker = PIPELINE_WORKERS[name]
    if section is None:
        return
    if not isinstance(section, Mapping) or set(section) - {"type", "import_names"}:
        raise ConfigError(worker.message(f"create_config.{name} {section!r}"))
    given = section.get("type", worker.type)
    if given != worker.type and given not in worker.same_as:
        raise ConfigError(worker.message(f"create_config.{name}.type {section['type']!r}"))
    if section.get("import_names") and given == worker.type:  # DI-engine's own types may name their modules
        raise ConfigError(worker.message(f"create_config.{name} {dict(section)!r}"))


def without_worker_sections(create_config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``create_config`` without its worker sections, each checked first (:func:`check_worker_section`); a reward
    or world model is refused.

    >>> without_worker_sections({'env': {'type': 'cartpole'}, 'replay_buffer': {'type': 'naive'}, 'learner': None})
    {'env': {'type': 'cartpole'}}
    >>> without_worker_sections({'reward_model': {'type': 'gail'}})
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: create_config.reward_model {'type': 'gail'}: ding has no reward models: policies learn \
from the reward the env returns; leave it out
    """
    if not isinstance(create_config, Mapping):
        return create_config  # type: ignore[return-value]  # compile_config refuses what is not a dict
    kept: dict[str, Any] = {}
    for name, section in create_config.items():
        if name in PIPELINE_WORKERS:
            check_worker_section(name, section)
        elif name in NOT_IN_DING and section is not None:
            raise ConfigError(f"create_config.{name} {section!r}: {NOT_IN_DING[name]}; leave it out")
        elif name not in NOT_IN_DING:
            kept[name] = section
    return kept
