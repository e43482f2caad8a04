"""DI-engine's env implementation checks, run on ding's conformance rules.

The functions and signatures are DI-engine's (``from ding.envs.env import check_all``); the rules
they apply are those of :mod:`ding.envs.checks.env_checker` (values in their spaces with exact shapes and
dtypes, ``eval_episode_return`` at an episode's end). A broken rule raises
:class:`~ding.errors.EnvConformanceError`, an ``AssertionError`` as in DI-engine; an
argument of the wrong type (a value that is not an array or a dict / sequence of arrays, a space
that is not a space) raises ``TypeError``. Loops that wait for episodes to end stop with an
``EnvConformanceError`` after ``max_steps`` steps instead of running forever.

Example:
    >>> from ding.envs import DingEnvWrapper
    >>> env = DingEnvWrapper(cfg={'env_id': 'CartPole-v1'})
    >>> check_all(env)
    >>> check_array_space(np.zeros(2, np.float64), spaces.Box(0, 1, (2,)), 'obs')
    Traceback (most recent call last):
    ...
    ding.errors.EnvConformanceError: obs: dtype float64, declared float32
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.conformance import check_value_in_space, episode_end_problem, space_dtype_problem
from ding.errors import EnvConformanceError

MAX_STEPS = 100_000
"""Default bound on the steps a check plays while it waits for episodes to end."""


def _require_env(env: Any, check: str) -> None:
    if not (callable(getattr(env, "reset", None)) and callable(getattr(env, "step", None))):
        raise TypeError(f"{check} takes an env with reset() and step(), got {type(env).__name__} {env!r}")


def _action(env: Any) -> Any:
    random_action = getattr(env, "random_action", None)
    return random_action() if callable(random_action) else env.action_space.sample()


def _as_space(space: Any, name: str) -> spaces.Space[Any]:
    """A gymnasium space from a space, or from a dict / list / tuple of spaces (DI-engine passes those too)."""
    if isinstance(space, spaces.Space):
        return space
    if isinstance(space, Mapping):
        return spaces.Dict({key: _as_space(sub, f"{name}.{key}") for key, sub in space.items()})
    if isinstance(space, (list, tuple)):
        return spaces.Tuple(tuple(_as_space(sub, f"{name}[{i}]") for i, sub in enumerate(space)))
    raise TypeError(f"the space of {name} must be a gymnasium space, or a dict / list of them; got {space!r}")


def _require_arrays(value: Any, name: str) -> None:
    """Raise TypeError unless ``value`` is an ndarray or a dict / sequence nesting ndarrays."""
    if isinstance(value, np.ndarray):
        return
    if isinstance(value, Mapping):
        for key, sub in value.items():
            _require_arrays(sub, f"{name}.{key}")
        return
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        for i, sub in enumerate(value):
            _require_arrays(sub, f"{name}[{i}]")
        return
    raise TypeError(f"{name} must be an np.ndarray or a dict / sequence of them, got {type(value).__name__} {value!r}")


def check_space_dtype(env: Any) -> None:
    """Reset ``env``, then check its observation, action and reward spaces: floats float32, integers int64."""
    _require_env(env, "check_space_dtype")
    env.reset()
    for name, space in (("obs", env.observation_space), ("act", env.action_space), ("rew", env.reward_space)):
        reason = space_dtype_problem(space, f"{name} space")
        if reason:
            raise EnvConformanceError(f"{type(env).__name__}: {reason}")


def check_array_space(ndarray: Any, space: Any, name: str) -> None:
    """Check that ``ndarray`` (an array, or a dict / sequence of arrays) lies in ``space``.

    ``space`` is a gymnasium space, or a dict / list of spaces matching the value's nesting. Each
    array must have the declared shape and dtype exactly and lie within the bounds.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__} {name!r}")
    checked_space = _as_space(space, name)
    _require_arrays(ndarray, name)
    reason = check_value_in_space(ndarray, checked_space, name)
    if reason:
        raise EnvConformanceError(reason)


def check_reset(env: Any) -> None:
    """Reset ``env`` and check the observation against its observation space."""
    _require_env(env, "check_reset")
    check_array_space(env.reset(), env.observation_space, "obs")


def check_step(env: Any, *, max_steps: int = MAX_STEPS) -> None:
    """Play random actions until three episodes end, checking every observation, reward and last ``info``."""
    _require_env(env, "check_step")
    env.reset()
    episodes = 0
    for _ in range(max_steps):
        obs, rew, done, info = env.step(_action(env))
        check_array_space(obs, env.observation_space, "obs")
        check_array_space(rew, env.reward_space, "rew")
        if done:
            reason = episode_end_problem(info)
            if reason:
                raise EnvConformanceError(f"{type(env).__name__}: episode end: {reason}")
            episodes += 1
            if episodes == 3:
                return
            env.reset()
    raise EnvConformanceError(f"{type(env).__name__}: {episodes} of 3 episodes ended within {max_steps} steps")


def check_different_memory(array1: Any, array2: Any, step_times: int) -> None:
    """Check that two observations (arrays, or dicts / sequences of them) share no memory.

    An env must hand out a new observation each step, not overwrite the previous one in place.
    """
    where = f"in step {step_times}"
    if type(array1) is not type(array2):
        raise EnvConformanceError(
            f"{where}, the last and this observation differ in type: {type(array1).__name__} and "
            f"{type(array2).__name__}"
        )
    if isinstance(array1, np.ndarray):
        if array1 is array2 or np.shares_memory(array1, array2):
            raise EnvConformanceError(f"{where}, the last and this observation share memory (copy observations)")
    elif isinstance(array1, Mapping):
        if array1.keys() != array2.keys():
            raise EnvConformanceError(
                f"{where}, the last and this observation have different keys: {sorted(array1)} and {sorted(array2)}"
            )
        for key in array1:
            check_different_memory(array1[key], array2[key], step_times)
    elif isinstance(array1, Sequence) and not isinstance(array1, (str, bytes)):
        if len(array1) != len(array2):
            raise EnvConformanceError(
                f"{where}, the last and this observation have lengths {len(array1)} and {len(array2)}"
            )
        for first, second in zip(array1, array2, strict=True):
            check_different_memory(first, second, step_times)
    else:
        raise TypeError(
            f"observations must be np.ndarrays or dicts / sequences of them, got {type(array1).__name__} "
            f"{array1!r} and {type(array2).__name__} {array2!r}"
        )


def check_obs_deepcopy(env: Any, *, max_steps: int = MAX_STEPS) -> None:
    """Play one episode and check that each step's observation shares no memory with the previous one."""
    _require_env(env, "check_obs_deepcopy")
    last = env.reset()
    for step in range(1, max_steps + 1):
        obs, _, done, _ = env.step(_action(env))
        check_different_memory(last, obs, step)
        if done:
            return
        last = obs
    raise EnvConformanceError(f"{type(env).__name__}: no episode ended within {max_steps} steps")


def check_all(env: Any) -> None:
    """Run :func:`check_space_dtype`, :func:`check_reset`, :func:`check_step` and :func:`check_obs_deepcopy`."""
    check_space_dtype(env)
    check_reset(env)
    check_step(env)
    check_obs_deepcopy(env)


def demonstrate_correct_procedure(env_fn: Callable[[Any], Any], *, max_steps: int = MAX_STEPS) -> None:
    """Use an env the way collectors do: build with a config, seed, reset, step with random actions.

    Builds ``env_fn({})``, seeds it with 4 (the env must record it as ``_seed``), plays three
    episodes (each last ``info`` holds ``eval_episode_return``; resets keep ``_seed``) and closes it.
    DI-engine also requires that the simulator be built only on the first reset; ding does not
    (its envs may build the simulator in ``__init__``, to check their declared spaces).
    """
    if not callable(env_fn):
        raise TypeError(f"env_fn must be callable (an env class or factory), got {type(env_fn).__name__}")
    env = env_fn({})
    _require_env(env, "demonstrate_correct_procedure")
    try:
        env.seed(4)
        if getattr(env, "_seed", None) != 4:
            raise EnvConformanceError(f"{type(env).__name__}: seed(4) did not record the seed as _seed")
        env.reset()
        episodes = 0
        for _ in range(max_steps):
            _, _, done, info = env.step(_action(env))
            if done:
                reason = episode_end_problem(info)
                if reason:
                    raise EnvConformanceError(f"{type(env).__name__}: episode end: {reason}")
                episodes += 1
                env.reset()
                if getattr(env, "_seed", None) != 4:
                    raise EnvConformanceError(f"{type(env).__name__}: reset changed _seed from 4")
                if episodes == 3:
                    return
        raise EnvConformanceError(f"{type(env).__name__}: {episodes} of 3 episodes ended within {max_steps} steps")
    finally:
        env.close()


__all__ = [
    "check_all",
    "check_array_space",
    "check_different_memory",
    "check_obs_deepcopy",
    "check_reset",
    "check_space_dtype",
    "check_step",
    "demonstrate_correct_procedure",
]
