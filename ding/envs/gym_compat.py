"""Envs written for the old gym API, run through gymnasium's.

The old API: ``reset()`` without ``seed`` returns the observation alone, ``step`` returns
``(obs, reward, done, info)`` and ``seed(n)`` seeds. Such an env may be any object with ``step``
and ``reset``, or a ``gymnasium.Env`` subclass that still implements the old methods; both are
recognised by ``reset``'s signature (neither a ``seed`` parameter nor ``**kwargs``), never by
calling it, so a real gymnasium env is never taken for an old one.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import load_env_creator
from gymnasium.wrappers import OrderEnforcing, PassiveEnvChecker, TimeLimit

MAKE_WRAPPERS = (PassiveEnvChecker, OrderEnforcing, TimeLimit)
"""The wrappers ``gymnasium.make`` adds; an old-API env inside only these is unwrapped and adapted."""

ENV_ID_PLUGINS = ("ale_py",)
"""Installed packages that register gymnasium ids when imported (ALE's ``Pong-v4``, ``ALE/Pong-v5``, ...).

gym registered the Atari ids itself; gymnasium needs ``ale_py`` imported first. An id that is not
registered is looked up again after importing these."""

_plugins_imported = False


def convert_space(space: Any) -> spaces.Space[Any]:
    """Convert a gym (or gymnasium) space to the equivalent gymnasium space, by its kind.

    Old gym spaces are recognised by class name and attributes, so gym itself need not be installed.
    """
    if isinstance(space, spaces.Space):
        return space
    kind = type(space).__name__
    if kind == "Box":
        return spaces.Box(np.asarray(space.low), np.asarray(space.high), dtype=np.dtype(space.dtype))
    if kind == "Discrete":
        return spaces.Discrete(int(space.n), start=int(getattr(space, "start", 0)))
    if kind == "MultiDiscrete":
        return spaces.MultiDiscrete(np.asarray(space.nvec))
    if kind == "MultiBinary":
        return spaces.MultiBinary(space.n)
    if kind == "Dict":
        return spaces.Dict({key: convert_space(sub) for key, sub in space.spaces.items()})
    if kind == "Tuple":
        return spaces.Tuple(tuple(convert_space(sub) for sub in space.spaces))
    raise TypeError(
        f"cannot convert space {space!r}; supported: Box, Discrete, MultiDiscrete, MultiBinary, Dict, Tuple"
    )


def reset_takes_seed(reset: Any) -> bool:
    """True when a ``reset`` method accepts ``seed`` (a ``seed`` parameter or ``**kwargs``): the new API.

    >>> class Old:
    ...     def reset(self): ...
    >>> reset_takes_seed(Old.reset), reset_takes_seed(gym.Env.reset)
    (False, True)
    """
    try:
        parameters = inspect.signature(reset).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: assume the current API
        return True
    return any(p.name == "seed" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def is_old_api_class(cls: Any) -> bool:
    """True for a class whose ``reset`` does not take ``seed`` (the old gym API), gymnasium subclass or not."""
    reset = getattr(cls, "reset", None)
    return isinstance(cls, type) and callable(reset) and not reset_takes_seed(reset)


def is_old_api_env(env: Any) -> bool:
    """True for an env that needs :class:`OldGymAPIAdapter`: not a gymnasium env, or one with the old ``reset``.

    An object with ``step``/``reset`` that is not a ``gymnasium.Env`` counts (gym's envs, old or 0.26);
    a ``gymnasium.Env`` counts when its unwrapped class implements the old ``reset``.
    """
    if isinstance(env, gym.Env):
        return is_old_api_class(type(env.unwrapped))
    return callable(getattr(env, "step", None)) and callable(getattr(env, "reset", None))


class OldGymAPIAdapter(gym.Env[Any, Any]):
    """Run an env with gym's API (old, or gym 0.26's) through the gymnasium API.

    Old API (``reset`` without ``seed``): ``reset(seed=...)`` calls the env's ``seed`` first when it
    has one; ``done`` becomes ``terminated`` unless ``info['TimeLimit.truncated']`` marks a time-limit
    cut, which becomes ``truncated``. An env whose ``reset`` takes ``seed`` (gym 0.26) is passed
    through: ``reset`` returns ``(obs, info)`` and ``step`` five values.
    """

    def __init__(self, env: Any) -> None:
        if not (callable(getattr(env, "step", None)) and callable(getattr(env, "reset", None))):
            raise TypeError(f"OldGymAPIAdapter needs an object with step() and reset(), got {type(env).__name__}")
        self.old_env = env
        self.new_api = reset_takes_seed(type(env).reset)
        self.observation_space = convert_space(env.observation_space)
        self.action_space = convert_space(env.action_space)
        self.metadata = dict(getattr(env, "metadata", {}) or {})
        self.render_mode = getattr(env, "render_mode", None)
        self.spec = getattr(env, "spec", None) if isinstance(env, gym.Env) else None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        if self.new_api:
            obs, info = self.old_env.reset(seed=seed, options=options)
            return obs, dict(info or {})
        if seed is not None and callable(getattr(self.old_env, "seed", None)):
            self.old_env.seed(seed)
        return self.old_env.reset(), {}

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        result = self.old_env.step(action)
        expected = 5 if self.new_api else 4
        if len(result) != expected:
            shape = "(obs, reward, terminated, truncated, info)" if self.new_api else "(obs, reward, done, info)"
            raise ValueError(
                f"{'gym 0.26' if self.new_api else 'old'}-API env {type(self.old_env).__name__}.step returned "
                f"{len(result)} values; expected {shape}"
            )
        if self.new_api:
            obs, reward, terminated, truncated, info = result
            return obs, reward, bool(terminated), bool(truncated), dict(info or {})
        obs, reward, done, info = result
        info = dict(info or {})
        truncated = bool(done) and bool(info.get("TimeLimit.truncated", False))
        return obs, reward, bool(done) and not truncated, truncated, info

    def render(self) -> Any:
        return self.old_env.render()

    def close(self) -> None:
        close = getattr(self.old_env, "close", None)
        if callable(close):
            close()


def as_gymnasium(env: Any) -> gym.Env[Any, Any]:
    """``env`` itself if it speaks the gymnasium API, else adapted (see :class:`OldGymAPIAdapter`).

    A ``gymnasium.Env`` with the old API inside only the wrappers ``gymnasium.make`` adds (the env
    checker, order enforcing, a time limit) is unwrapped, adapted and given its time limit back;
    inside other wrappers it cannot be adapted, and that raises ``TypeError`` naming the wrapper.
    """
    if not is_old_api_env(env):
        if isinstance(env, gym.Env):
            return env
        raise TypeError(f"expected a gymnasium env or an old-gym-API env (step/reset), got {type(env).__name__}")
    if not isinstance(env, gym.Wrapper):
        return OldGymAPIAdapter(env)
    max_steps: int | None = None
    layer: Any = env
    while isinstance(layer, gym.Wrapper):
        if not isinstance(layer, MAKE_WRAPPERS):
            raise TypeError(
                f"{type(env.unwrapped).__name__} implements the old gym API (reset without seed) and is wrapped in "
                f"{type(layer).__name__}, which calls the gymnasium API; pass the env unwrapped (ding adapts it) "
                "and give wrappers through cfg.env_wrapper"
            )
        if isinstance(layer, TimeLimit):
            max_steps = layer._max_episode_steps if max_steps is None else min(max_steps, layer._max_episode_steps)
        layer = layer.env
    adapted = OldGymAPIAdapter(layer)
    return TimeLimit(adapted, max_steps) if max_steps is not None else adapted


def registered_spec(env_id: str) -> Any:
    """``gymnasium.spec(env_id)``, looked up again after importing :data:`ENV_ID_PLUGINS` if it is not found."""
    global _plugins_imported
    try:
        return gym.spec(env_id)
    except gym.error.NameNotFound:
        if _plugins_imported:
            raise
    _plugins_imported = True
    for name in ENV_ID_PLUGINS:
        if importlib.util.find_spec(name) is not None:
            gym.register_envs(importlib.import_module(name))
    return gym.spec(env_id)


def make_env(env_id: str, **kwargs: Any) -> gym.Env[Any, Any]:
    """``gymnasium.make(env_id, **kwargs)``, also for ids whose env class implements the old gym API.

    The id is found as :func:`registered_spec` finds it (Atari ids too). The registered class is
    looked at before it is made: an old-API class is made without gymnasium's env checker (which
    rejects that API) and adapted by :func:`as_gymnasium`, keeping the registration's time limit.

    >>> make_env('CartPole-v1').spec.max_episode_steps
    500
    """
    spec = registered_spec(env_id)
    creator = spec.entry_point if callable(spec.entry_point) else load_env_creator(str(spec.entry_point))
    if is_old_api_class(creator):
        kwargs = {"disable_env_checker": True, **kwargs}
    return as_gymnasium(gym.make(env_id, **kwargs))
