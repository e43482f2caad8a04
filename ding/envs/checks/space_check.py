"""Real values against their predicted spaces, at every step of an env's wrapper chain (``ding -m spec --check``).

:class:`SpaceCheckedEnv` holds a built env and its spec trace (the spaces predicted after each step of the chain).
Where the env runs its chain as gymnasium wrappers (``env.env``, as ``DingEnvWrapper`` and ``ChainedEnv`` do), each
layer is watched: the action it receives is checked against its step's action space, the observations and rewards it
returns against its step's observation and reward spaces; the innermost layer is step 0, the env itself. The values
the env returns (after its conversions) are checked against the last step. Each way a value leaves a space is a
:class:`Finding`, counted, with the env step it first happened at; :meth:`SpaceCheckedEnv.space_findings` returns
them, wherever the env runs (``manager.call_envs('space_findings')``).

Observations must have the space's exact shape, dtype and bounds (:func:`~ding.envs.conformance.check_value_in_space`).
An action passed between layers may have another dtype of the same kind (float64 for float32), and a reward between
layers is a number: they are checked for shape and bounds.

Example:
    >>> from functools import partial
    >>> from ding.envs import DingEnvWrapper
    >>> from ding.envs.probe import spec_trace_of
    >>> cfg = {'env_id': 'CartPole-v1', 'env_wrapper': [('frame_stack', {'n_frames': 2})]}
    >>> fn = CheckedEnvFn.of(DingEnvWrapper, cfg)
    >>> env = fn()
    >>> env.seed(0)
    >>> _ = env.reset()
    >>> _ = [env.step(env.random_action()) for _ in range(5)]
    >>> env.space_findings()
    []
    >>> env.close()
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ding.envs.base_env import BaseEnv
from ding.envs.conformance import check_value_in_space
from ding.envs.env_manager.env_fn import declared_spaces
from ding.envs.env_wrappers import resolve_wrappers
from ding.envs.probe import SpecTrace, spec_trace_of
from ding.envs.spaces import EnvSpaces
from ding.envs.timestep import BaseEnvTimestep

LAYER, OUTPUT, INPUT = "returned by this step", "returned by the env", "received by this step"
"""Where a value was seen: a layer's output, the env's output after its conversions, an action a layer receives."""


@dataclasses.dataclass(frozen=True)
class Finding:
    """One way values left a predicted space: at which step of the trace, where, why, how often and first when."""

    step: int
    step_name: str
    where: str
    reason: str
    count: int
    first_at: int
    """How many steps that env had taken when it first happened (0: at its first reset)."""

    @property
    def kind(self) -> tuple[int, str, str, str]:
        """What tells findings apart: the step, the place, the value (observation, reward, action) and the problem."""
        what, _, detail = self.reason.partition(": ")
        return self.step, self.where, what, detail.split(" ")[0]

    def merged(self, other: Finding) -> Finding:
        """This finding and another of the same kind (from another env) as one."""
        return dataclasses.replace(self, count=self.count + other.count, first_at=min(self.first_at, other.first_at))

    def line(self) -> str:
        """The finding on one line.

        >>> Finding(0, 'env', LAYER, 'observation: dtype float64, declared float32', 12, 0).line()
        'step 0 env: observation: dtype float64, declared float32 (returned by this step; 12 times, first at reset)'
        """
        first = "reset" if self.first_at == 0 else f"env step {self.first_at}"
        return f"step {self.step} {self.step_name}: {self.reason} ({self.where}; {self.count} times, first at {first})"


def merge_findings(groups: list[list[Finding]]) -> list[Finding]:
    """Findings of several envs, one per kind, ordered by step (inner first), value and place."""
    merged: dict[tuple[int, str, str, str], Finding] = {}
    for group in groups:
        for finding in group:
            merged[finding.kind] = merged[finding.kind].merged(finding) if finding.kind in merged else finding
    return sorted(merged.values(), key=lambda f: (f.step, f.reason.partition(":")[0], f.where))


class FindingLog:
    """Collects findings by kind: the first reason of each kind is kept, and how often it recurs."""

    def __init__(self, trace: SpecTrace) -> None:
        self._trace = trace
        self._found: dict[tuple[int, str, str, str], Finding] = {}

    def check(self, step: int, where: str, what: str, value: Any, at: int) -> None:
        """Check ``value`` (``what``: observation, reward or action) against step ``step``'s space of that kind."""
        step_spaces = self._trace[step][1]
        space = {"observation": step_spaces.observation, "reward": step_spaces.reward, "action": step_spaces.action}
        target = space[what]
        if where != OUTPUT and what in ("reward", "action"):
            value = _as_space_kind(value, target)
        reason = check_value_in_space(value, target, what)
        if reason is not None:
            finding = Finding(step, self._trace[step][0], where, reason, 1, at)
            known = self._found.get(finding.kind)
            self._found[finding.kind] = finding if known is None else known.merged(finding)

    def findings(self) -> list[Finding]:
        return merge_findings([list(self._found.values())])


def _as_space_kind(value: Any, space: spaces.Space[Any]) -> Any:
    """A reward or action between layers in the space's form: a number as an array of the space's shape, another
    dtype of the same kind as the space's dtype. What does not fit is left for the check to report."""
    if not isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
        return value
    arr = np.asarray(value)
    dtype = np.dtype(space.dtype)
    if arr.dtype.kind == dtype.kind or (arr.dtype.kind in "iub" and dtype.kind in "iu"):
        arr = arr.astype(dtype)
    if arr.shape != space.shape and arr.size == int(np.prod(space.shape)):
        arr = arr.reshape(space.shape)
    return arr


class SpaceCheckedEnv(BaseEnv):
    """A built env whose values are checked against its spec trace at every step of its chain (see the module)."""

    def __init__(self, env: Any, trace: SpecTrace, chain: tuple[type[gym.Wrapper[Any, Any, Any, Any]], ...]) -> None:
        self._env = env
        self._log = FindingLog(trace)
        self._last = len(trace) - 1
        self._env_step = 0
        self._watched = self._watch_layers(chain) if len(chain) == self._last else False

    def layers_watched(self) -> bool:
        """Whether each step of the chain is watched (else only the env's own values are checked)."""
        return self._watched

    def _watch_layers(self, chain: tuple[type[gym.Wrapper[Any, Any, Any, Any]], ...]) -> bool:
        layer = getattr(self._env, "env", None)
        if not isinstance(layer, gym.Env):
            return False
        found: list[gym.Env[Any, Any]] = []
        for wrapper_cls in reversed(chain):  # the outermost layer is the chain's last step
            if not isinstance(layer, wrapper_cls):
                return False
            found.append(layer)
            layer = layer.env
        found.append(layer)
        for step, watched in zip(range(self._last, -1, -1), found, strict=True):
            self._watch(watched, step)
        return True

    def _watch(self, layer: gym.Env[Any, Any], step: int) -> None:
        log, step_fn, reset_fn = self._log, layer.step, layer.reset

        def checked_step(action: Any) -> Any:
            log.check(step, INPUT, "action", action, self._env_step)
            result = step_fn(action)
            log.check(step, LAYER, "observation", result[0], self._env_step)
            log.check(step, LAYER, "reward", result[1], self._env_step)
            return result

        def checked_reset(**kwargs: Any) -> Any:
            obs, info = reset_fn(**kwargs)
            log.check(step, LAYER, "observation", obs, self._env_step)
            return obs, info

        layer.step = checked_step  # type: ignore[method-assign]
        layer.reset = checked_reset  # type: ignore[method-assign]

    # ----- the env interface, the held env's ------------------------------------------------------
    def reset(self) -> Any:
        obs = self._env.reset()
        self._log.check(self._last, OUTPUT, "observation", obs, self._env_step)
        return obs

    def step(self, action: Any) -> BaseEnvTimestep:
        self._env_step += 1
        timestep: BaseEnvTimestep = self._env.step(action)
        self._log.check(self._last, OUTPUT, "observation", timestep.obs, self._env_step)
        self._log.check(self._last, OUTPUT, "reward", timestep.reward, self._env_step)
        return timestep

    def seed(self, seed: int, dynamic_seed: bool | None = None) -> None:  # type: ignore[override]
        if dynamic_seed is None:
            self._env.seed(seed)
        else:
            self._env.seed(seed, dynamic_seed=dynamic_seed)

    def close(self) -> None:
        self._env.close()

    def space_findings(self) -> list[Finding]:
        """Every way this env's values left their predicted spaces so far."""
        return self._log.findings()

    def _space(self, kind: str) -> spaces.Space[Any]:
        return getattr(self._env, f"{kind}_space")  # type: ignore[no-any-return]

    def random_action(self) -> Any:
        return self._env.random_action()

    def render(self) -> Any:
        return self._env.render()

    def enable_save_replay(self, replay_path: str) -> None:
        self._env.enable_save_replay(replay_path)

    def __getattr__(self, name: str) -> Any:  # other methods a manager may call (reward_shaping, ...)
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._env, name)


@dataclasses.dataclass(frozen=True)
class CheckedEnvFn:
    """An env constructor whose env is built as a :class:`SpaceCheckedEnv`; picklable to any worker.

    ``env_spaces`` are the spaces the constructor declares (None when it declares none), so a manager treats it as it
    treats ``env_fn`` (:func:`~ding.envs.env_manager.env_fn.declared_spaces` reads them).
    """

    env_fn: Callable[[], Any]
    trace: SpecTrace
    chain: tuple[type[gym.Wrapper[Any, Any, Any, Any]], ...]
    env_spaces: EnvSpaces | None

    @classmethod
    def of(cls, env_cls: type[BaseEnv], cfg: Mapping[str, Any]) -> CheckedEnvFn:
        """The checked constructor of ``env_cls(cfg=cfg)``, with the trace and chain that class and config predict."""
        env_fn = functools.partial(env_cls, cfg=cfg)
        trace = spec_trace_of(env_cls, cfg)
        full = env_cls.merge_config(cfg)
        chain = tuple(step.cls for step in resolve_wrappers(env_cls.wrapper_chain(full), train=bool(full.is_train)))
        return cls(env_fn, trace, chain, declared_spaces(env_fn))

    def __call__(self) -> SpaceCheckedEnv:
        return SpaceCheckedEnv(self.env_fn(), self.trace, self.chain)


__all__ = ["INPUT", "LAYER", "OUTPUT", "CheckedEnvFn", "Finding", "FindingLog", "SpaceCheckedEnv", "merge_findings"]
