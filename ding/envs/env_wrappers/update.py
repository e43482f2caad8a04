"""Compose wrapper declarations ahead of time: ``update_shape`` and its full-space companion.

A chain is a list whose items are a registered name (``'frame_stack'``), a ``(name, kwargs)``
pair, or a ``{'type': name, 'kwargs': {...}}`` config dict; a preset name
(``'atari_default'``) stands for a whole chain.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
from gymnasium import spaces

from ding.envs.env_wrappers.base import WRAPPER_REGISTRY, DingWrapper, ShapeTriple
from ding.envs.env_wrappers.presets import PRESETS, preset_chain
from ding.envs.values.spaces import DEFAULT_REWARD_SPACE, EnvSpaces, Shape
from ding.errors import ConfigError, DingError, ShapeRuleError, UnknownNameError

WrapperItem = str | tuple[str, Mapping[str, Any]] | Mapping[str, Any]
WrapperChain = str | Sequence[WrapperItem] | None


@dataclasses.dataclass(frozen=True)
class WrapperStep:
    """One resolved step of a chain: the registered name, its class and its full keyword arguments."""

    name: str
    cls: type[DingWrapper]
    kwargs: Mapping[str, Any]

    def wrap(self, env: gym.Env[Any, Any]) -> DingWrapper:
        return self.cls(env, **self.kwargs)

    def __str__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return f"{self.name}({args})"


def _split_item(item: WrapperItem) -> tuple[str, Mapping[str, Any]]:
    if isinstance(item, str):
        return item, {}
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], Mapping):
        return item[0], item[1]
    if isinstance(item, Mapping):
        extra = set(item) - {"type", "kwargs"}
        if extra or "type" not in item:
            raise ConfigError(f"a wrapper config dict takes the keys 'type' and 'kwargs'; got {sorted(map(str, item))}")
        kwargs = item.get("kwargs") or {}
        if not isinstance(kwargs, Mapping):
            raise ConfigError(f"wrapper {item['type']!r}: 'kwargs' must be a dict, got {type(kwargs).__name__}")
        return str(item["type"]), kwargs
    raise TypeError(
        f"a wrapper chain item must be a name, a (name, kwargs) pair or a {{'type', 'kwargs'}} dict; got {item!r}"
    )


def resolve_wrappers(chain: WrapperChain, *, train: bool = True) -> list[WrapperStep]:
    """Turn a chain (preset name, or list of items) into checked :class:`WrapperStep` s.

    Items may name a wrapper by its registered name or by an alias (its class name, or DI-engine's);
    each step carries the registered name.

    >>> [str(s) for s in resolve_wrappers([('frame_stack', {'n_frames': 2})])]
    ['frame_stack(n_frames=2, fields=None)']
    >>> [s.name for s in resolve_wrappers(['WarpFrame', ('FrameStackWrapper', {'n_frames': 2})])]
    ['warp_frame', 'frame_stack']
    """
    if chain is None:
        return []
    if isinstance(chain, str):
        items: Sequence[WrapperItem] = preset_chain(chain, train=train) if chain in PRESETS else [chain]
    elif isinstance(chain, Mapping):
        items = [chain]
    else:
        items = chain
    steps = []
    for item in items:
        given, kwargs = _split_item(item)
        if given in PRESETS and given not in WRAPPER_REGISTRY:
            raise UnknownNameError(
                f"unknown wrapper {given!r}: {given!r} is a preset, a whole chain, so it cannot be one item of a "
                f"list; give it alone as the chain (env_wrapper={given!r}) or list the wrappers of "
                f"preset_chain({given!r}) instead"
            )
        name = WRAPPER_REGISTRY.canonical(given)
        cls = WRAPPER_REGISTRY.get(name)
        steps.append(WrapperStep(name, cls, cls.bind_arguments((), kwargs)))
    return steps


def _step_error(index: int, step: WrapperStep, err: Exception) -> ShapeRuleError:
    return ShapeRuleError(f"wrapper chain step {index} {step}: {type(err).__name__}: {err}")


def update_shape(obs_shape: Shape, act_shape: Shape, rew_shape: Shape, wrapper_names: WrapperChain) -> ShapeTriple:
    """Compose the wrappers' space rules in order, on DI-engine-style shapes (each wrapper's ``new_shape``).

    Errors are never swallowed: an unknown name raises :class:`~ding.errors.UnknownNameError`,
    a rule that cannot apply raises :class:`~ding.errors.ShapeRuleError` naming the step.

    >>> update_shape((210, 160, 3), 6, (1,), 'atari_default')
    ((4, 84, 84), 6, (1,))
    """
    shapes: ShapeTriple = (obs_shape, act_shape, rew_shape)
    for index, step in enumerate(resolve_wrappers(wrapper_names)):
        try:
            shapes = step.cls.new_shape(*shapes, **step.kwargs)
        except (DingError, TypeError, ValueError, KeyError, IndexError) as err:
            raise _step_error(index, step, err) from err
    return shapes


def trace_spaces(
    spaces_in: EnvSpaces, wrapper_names: WrapperChain, *, train: bool = True
) -> list[tuple[str, EnvSpaces]]:
    """The spaces after each step of a chain, starting with ``('env', spaces_in)``."""
    trace = [("env", spaces_in)]
    current = spaces_in
    for index, step in enumerate(resolve_wrappers(wrapper_names, train=train)):
        try:
            obs, act, rew = step.cls.new_space(*current, **step.kwargs)
        except (DingError, TypeError, ValueError, KeyError, IndexError) as err:
            raise _step_error(index, step, err) from err
        current = EnvSpaces(obs, act, rew)
        trace.append((str(step), current))
    return trace


def update_space(
    obs_space: spaces.Space[Any],
    act_space: spaces.Space[Any],
    rew_space: spaces.Space[Any] | None,
    wrapper_names: WrapperChain,
    *,
    train: bool = True,
) -> EnvSpaces:
    """Propagate full gymnasium spaces (shape, dtype and bounds) through a chain, with no env.

    >>> import numpy as np
    >>> s = update_space(spaces.Box(0, 255, (210, 160, 3), np.uint8), spaces.Discrete(6), None, 'atari_default')
    >>> s.observation.shape, s.observation.dtype
    ((4, 84, 84), dtype('uint8'))
    """
    start = EnvSpaces(obs_space, act_space, rew_space if rew_space is not None else DEFAULT_REWARD_SPACE)
    return trace_spaces(start, wrapper_names, train=train)[-1][1]


def apply_wrappers(env: gym.Env[Any, Any], wrapper_names: WrapperChain, *, train: bool = True) -> gym.Env[Any, Any]:
    """Wrap ``env`` with every step of the chain, innermost first."""
    for step in resolve_wrappers(wrapper_names, train=train):
        env = step.wrap(env)
    return env
