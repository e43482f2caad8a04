"""The ``spec`` mode: an env's wrapper chain as a table of spaces, computed from the config alone.

An env that declares its spaces (``raw_spaces``) is never built. One that does not (DI-engine's
style) is built once in a child process to read them (:func:`ding.envs.probe.spec_trace_of`), and
its row says ``probed by building the env``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.config import compile_config
from ding.envs.probe import spec_trace_of
from ding.envs.registry import env_class
from ding.envs.spaces import EnvSpaces, space_nbytes, space_to_shape


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
    """Compile the config (policy left unvalidated) and trace its env's spaces.

    Declared spaces are traced without building the env; undeclared ones are probed in a child process.
    """
    cfg = compile_config(main_config, create_config, require_policy=False)
    return spec_trace_of(env_class(cfg.env), cfg.env)


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
