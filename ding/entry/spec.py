"""The ``spec`` mode: an env's wrapper chain as a table of spaces, and what its data costs, from the config alone.

An env that declares its spaces (``raw_spaces``) is never built. One that does not (DI-engine's
style) is built once in a child process to read them (:func:`ding.envs.probe.spec_trace_of`), and
its row says ``probed by building the env``.

:func:`spec_report` adds three byte counts to the table: one env step (observation, action and reward), one
shared-memory batch of the configured envs (the layout an env manager allocates,
:meth:`~ding.envs.env_manager.core.shm.BufferLayout.plan`), and one transition in the replay buffer the serial
pipeline would build (:func:`~ding.worker.buffer_plan.plan_replay_buffer`; ``n/a`` for on-policy configs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from easydict import EasyDict
from gymnasium import spaces

from ding.config.builtin_policies import BUILTIN_POLICY_MODULES, with_builtin_import
from ding.config.compiler import compile_config
from ding.config.di_engine.layout import in_ding_terms
from ding.config.di_engine.workers import without_worker_sections
from ding.config.policy_registry import POLICY_REGISTRY
from ding.config.sections import resolve_components
from ding.envs.env_manager.core.shm import BufferLayout
from ding.envs.from_config import env_class
from ding.envs.probe import SpecTrace, spec_trace_of
from ding.envs.spaces import EnvSpaces, space_nbytes, space_to_shape
from ding.policy.base import Policy
from ding.worker.buffer_plan import human_bytes, plan_replay_buffer


def describe_space(space: spaces.Space[Any]) -> str:
    """A compact one-line description: shape and dtype for Box, ``Discrete(n)`` etc., nested for Dict/Tuple.

    >>> describe_space(spaces.Dict({'a': spaces.Box(0, 1, (2, 3)), 'b': spaces.Discrete(4)}))
    '{a: (2, 3) float32, b: Discrete(4)}'
    """
    if isinstance(space, spaces.Dict):
        return "{" + ", ".join(f"{key}: {describe_space(sub)}" for key, sub in space.spaces.items()) + "}"
    if isinstance(space, spaces.Tuple):
        return "(" + ", ".join(describe_space(sub) for sub in space.spaces) + ")"
    if isinstance(space, spaces.Discrete):
        return f"Discrete({int(space.n)})"
    if isinstance(space, spaces.MultiDiscrete):
        return f"MultiDiscrete({space_to_shape(space)})"
    return f"{tuple(space.shape or ())} {np.dtype(space.dtype).name}"


def step_bytes(env_spaces: EnvSpaces) -> int:
    """Bytes one env step moves: observation + action + reward."""
    return sum(space_nbytes(space) for space in env_spaces)


def spec_trace_from_config(
    main_config: Mapping[str, Any], create_config: Mapping[str, Any]
) -> list[tuple[str, EnvSpaces]]:
    """Compile the config (:func:`compiled_for_spec`) and trace its env's spaces.

    Declared spaces are traced without building the env; undeclared ones are probed in a child process.
    """
    cfg = compiled_for_spec(main_config, create_config)
    return spec_trace_of(env_class(cfg.env), cfg.env)


def compiled_for_spec(main_config: Mapping[str, Any], create_config: Mapping[str, Any]) -> EasyDict:
    """The config compiled for ``ding -m spec``: a config naming one of ding's policies is compiled as a run compiles
    it, so a value the run would refuse is refused here too; another policy's section is left unvalidated. A config
    in DI-engine's layout is read into ding's terms first, as a run reads it."""
    policy = resolve_components(main_config, without_worker_sections(create_config))["policy"]
    builtin = policy.type in BUILTIN_POLICY_MODULES
    main, create = in_ding_terms(main_config, create_config, require_policy=builtin)
    return compile_config(main, create, require_policy=builtin)


def spec_report(main_config: Mapping[str, Any], create_config: Mapping[str, Any]) -> str:
    """What ``ding -m spec`` prints: the spec table of the config's env, then :func:`byte_counts`."""
    cfg = compiled_for_spec(main_config, create_config)
    trace = spec_trace_of(env_class(cfg.env), cfg.env)
    return format_spec_table(trace) + "\n\n" + "\n".join(byte_counts(cfg, trace))


def byte_counts(cfg: EasyDict, trace: SpecTrace) -> list[str]:
    """Bytes per env step, per shared-memory batch and per stored transition, for a compiled config and its trace."""
    final = trace[-1][1]
    parts = " + ".join(
        f"{name} {space_nbytes(space):,}" for name, space in zip(("obs", "action", "reward"), final, strict=True)
    )
    env_cls = env_class(cfg.env)
    declares = getattr(env_cls, "declares_spaces", None)
    declared = bool(declares is not None and declares())
    manager = cfg.env.manager
    batches = ", ".join(
        f"{BufferLayout.plan(final, int(cfg.env[key]), declared=declared).nbytes:,} for {int(cfg.env[key])} {who} envs"
        for key, who in (("collector_env_num", "collector"), ("evaluator_env_num", "evaluator"))
    )
    return [
        f"bytes per env step: {step_bytes(final):,} ({parts})",
        f"bytes per shared-memory batch: {batches} "
        f"({manager.type} manager, shared_memory={manager.get('shared_memory')})",
        f"bytes per stored transition: {stored_transition(cfg, trace)}",
    ]


def stored_transition(cfg: EasyDict, trace: SpecTrace) -> str:
    """Bytes per stored transition of the replay buffer the serial pipeline builds, with its kind; or ``n/a``."""
    policy_type = (cfg.get("policy") or {}).get("type")
    if policy_type is None:
        return "n/a (the config names no policy)"
    POLICY_REGISTRY.import_names(with_builtin_import(policy_type, cfg.policy.get("import_names")))
    policy_cls = POLICY_REGISTRY.get(policy_type)
    if not (isinstance(policy_cls, type) and issubclass(policy_cls, Policy)):
        return f"n/a (policy {policy_type!r} is not a ding Policy)"
    merged = policy_cls.merge_config(cfg.policy)
    if merged.get("on_policy"):
        return f"n/a ({policy_type} learns on-policy: no replay buffer)"
    plan = plan_replay_buffer(merged, policy_cls.nstep_rule_of(merged), trace)
    return (
        f"{plan.transition_nbytes:,}, {plan.kind} replay buffer ({plan.reason}); "
        f"{plan.capacity:,} transitions: {human_bytes(plan.nbytes)}"
    )


def format_spec_table(trace: list[tuple[str, EnvSpaces]]) -> str:
    """Render a spec trace as a markdown table."""
    header = ["#", "step", "observation", "action", "reward", "bytes/step"]
    rows = [
        [
            str(i),
            name,
            describe_space(s.observation),
            describe_space(s.action),
            describe_space(s.reward),
            str(step_bytes(s)),
        ]
        for i, (name, s) in enumerate(trace)
    ]
    widths = [max(len(row[c]) for row in [header, *rows]) for c in range(len(header))]
    lines = [
        "| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) + " |" for row in [header, *rows]
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)
