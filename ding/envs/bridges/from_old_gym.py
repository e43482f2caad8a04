"""Envs written for gym's APIs, run through gymnasium's.

gym's envs come in three shapes, all run through :class:`OldGymAPIAdapter`:

- gym 0.21 and earlier: ``seed(n)`` seeds, ``reset()`` returns the observation alone and ``step``
  ``(obs, reward, done, info)`` (``info['TimeLimit.truncated']`` marks a time-limit cut);
- gym 0.22 to 0.25: ``reset(seed=..., return_info=...)``, ``step`` still four values;
- gym 0.26: ``reset(seed=..., options=...)`` returns ``(obs, info)``, ``step`` five values
  ``(obs, reward, terminated, truncated, info)``.

Each call is read from what the env states and what it returns, never guessed: a seed goes to
``reset`` when ``reset`` takes ``seed`` (looking through gym's wrappers, which forward ``**kwargs``),
else to ``seed()``, and an env with neither refuses a seed rather than dropping it; ``step``'s four
or five values tell its form. Such an env may be any object with ``step`` and ``reset``, or a
``gymnasium.Env`` subclass that still implements the old methods; the latter is recognised by
``reset``'s signature, never by calling it, so a real gymnasium env is never taken for an old one.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import load_env_creator
from gymnasium.wrappers import OrderEnforcing, PassiveEnvChecker, TimeLimit

from ding.errors import ConfigError, DingError

T = TypeVar("T")

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


def _layers(env: Any) -> list[Any]:
    """``env`` and the envs inside it, following ``.env`` as gym's wrappers nest them."""
    layers: list[Any] = []
    while env is not None and all(env is not seen for seen in layers):
        layers.append(env)
        env = getattr(env, "env", None)
    return layers


def reset_keywords(env: Any) -> frozenset[str] | None:
    """The keyword arguments ``env.reset`` takes (None: any), read through wrappers that forward ``**kwargs``.

    gym's wrappers declare ``reset(self, **kwargs)`` and pass everything to ``self.env``, so what a
    wrapped env takes is what the env inside takes. A ``**kwargs`` with no ``env`` inside takes anything.

    >>> class Old:
    ...     def reset(self): ...
    >>> class Forward:
    ...     def __init__(self, env): self.env = env
    ...     def reset(self, **kwargs): ...
    >>> reset_keywords(Forward(Old())), sorted(reset_keywords(gym.Env()))
    (frozenset(), ['options', 'seed'])
    """
    taken: set[str] = set()
    for layer in _layers(env):
        if not callable(getattr(layer, "reset", None)):
            break
        try:
            parameters = list(inspect.signature(type(layer).reset).parameters.values())[1:]  # after self
        except (TypeError, ValueError):  # a builtin without a signature: assume the current API
            return None
        taken.update(p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
        if not any(p.kind is p.VAR_KEYWORD for p in parameters):
            return frozenset(taken)
    return None  # **kwargs with nothing inside to pass them to: takes anything


def _is_gym_env_checker(layer: Any) -> bool:
    return type(layer).__name__ == "PassiveEnvChecker" and type(layer).__module__.startswith("gym.")


class OldGymAPIAdapter(gym.Env[Any, Any]):
    """Run an env with one of gym's APIs (0.21, 0.22-0.25 or 0.26) through the gymnasium API.

    ``reset(seed=...)`` passes the seed to the env's ``reset`` when it takes ``seed``, else calls
    its ``seed()``; an env with neither raises ``TypeError`` for a seed (pass ``seed_api=False`` to
    ``DingEnvWrapper`` to run it unseeded). ``reset`` may return the observation alone or
    ``(obs, info)``; ``step`` four values (``done`` becomes ``terminated``, or ``truncated`` where
    ``info['TimeLimit.truncated']`` marks a time-limit cut) or five.

    Example:
        >>> class Old:  # gym 0.21's API
        ...     observation_space, action_space = spaces.Discrete(3), spaces.Discrete(2)
        ...     def seed(self, seed): self.seeded = seed
        ...     def reset(self): return 0
        ...     def step(self, action): return 1, 1.0, True, {'TimeLimit.truncated': True}
        >>> env = OldGymAPIAdapter(Old())
        >>> env.reset(seed=7), env.old_env.seeded
        ((0, {}), 7)
        >>> env.step(0)
        (1, 1.0, False, True, {'TimeLimit.truncated': True})
    """

    def __init__(self, env: Any) -> None:
        if not (callable(getattr(env, "step", None)) and callable(getattr(env, "reset", None))):
            raise TypeError(f"OldGymAPIAdapter needs an object with step() and reset(), got {type(env).__name__}")
        if int(np.__version__.split(".")[0]) >= 2 and any(_is_gym_env_checker(layer) for layer in _layers(env)):
            raise TypeError(
                f"{type(env).__name__} holds gym's PassiveEnvChecker, which fails under numpy {np.__version__} "
                "(it uses np.bool8); make the env with gym.make(..., disable_env_checker=True)"
            )
        self.old_env = env
        keywords = reset_keywords(env)
        self.reset_takes_seed = keywords is None or "seed" in keywords
        """Seeds go to ``reset(seed=...)`` (gym 0.22 and later); else to ``seed()``."""
        self._reset_takes_options = keywords is None or "options" in keywords
        self._return_info = keywords is not None and "return_info" in keywords  # gym 0.22-0.25
        self._step_size: int | None = None  # 4 or 5, from the first step
        self.observation_space = convert_space(env.observation_space)
        self.action_space = convert_space(env.action_space)
        self.metadata = dict(getattr(env, "metadata", {}) or {})
        self.render_mode = getattr(env, "render_mode", None)
        self.spec = getattr(env, "spec", None) if isinstance(env, gym.Env) else None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        name = type(self.old_env).__name__
        kwargs: dict[str, Any] = {}
        if seed is not None:
            if self.reset_takes_seed:
                kwargs["seed"] = seed
            elif callable(getattr(self.old_env, "seed", None)):
                self.old_env.seed(seed)
            else:
                raise TypeError(
                    f"cannot seed {name} with {seed}: its reset takes no seed and it has no seed() method; "
                    "run it unseeded (DingEnvWrapper(..., seed_api=False))"
                )
        if options is not None:
            if not self._reset_takes_options:
                raise TypeError(f"{name}.reset takes no options, got options={options!r}")
            kwargs["options"] = options
        if self._return_info:
            kwargs["return_info"] = True
        return self._split_reset(self.old_env.reset(**kwargs))

    def _split_reset(self, result: Any) -> tuple[Any, dict[str, Any]]:
        """``(obs, info)`` from what ``reset`` returned: that pair, or the observation alone.

        A pair is a 2-tuple whose second item is a dict, unless the observation space itself holds such
        tuples (a ``Tuple`` of two spaces, the second a ``Dict``); there the first item decides: an
        observation of that space is a 2-tuple itself.
        """
        if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict)):
            return result, {}
        space = self.observation_space
        pair_like = (
            isinstance(space, spaces.Tuple) and len(space.spaces) == 2 and isinstance(space.spaces[1], spaces.Dict)
        )
        if pair_like and not (isinstance(result[0], tuple) and len(result[0]) == 2):
            return result, {}
        return result[0], dict(result[1])

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        result = tuple(self.old_env.step(action))
        size = len(result)
        if size not in (4, 5) or size != (self._step_size or size):
            before = f", after {self._step_size} before" if self._step_size else ""
            raise ValueError(
                f"{type(self.old_env).__name__}.step returned {size} values{before}; expected 4 "
                "(obs, reward, done, info: gym 0.21-0.25) or 5 (obs, reward, terminated, truncated, info: gym 0.26)"
            )
        self._step_size = size
        if size == 5:
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


def call_with_env_kwargs(
    factory: Callable[..., T], name: str, env_kwargs: Mapping[str, Any], *args: Any, **extra: Any
) -> T:
    """``factory(*args, **env_kwargs, **extra)``: an env that refuses the arguments a config gave it (``env_kwargs``)
    raises a :class:`~ding.errors.ConfigError` naming them and ``name``, the env, rather than its own exception.

    >>> def grid(size: int = 3) -> list[int]:
    ...     return list(range(size))
    >>> call_with_env_kwargs(grid, 'grid', {'size': 2})
    [0, 1]
    >>> call_with_env_kwargs(grid, 'grid', {'gravity': 1.0})
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: env 'grid' does not take the arguments {'gravity': 1.0} (env.env_kwargs): TypeError: \
grid() got an unexpected keyword argument 'gravity'
    """
    if not env_kwargs:
        return factory(*args, **extra)
    try:
        return factory(*args, **env_kwargs, **extra)
    except DingError:
        raise
    except (TypeError, ValueError, AssertionError) as err:  # what constructors raise for arguments they refuse
        raise ConfigError(
            f"env {name!r} does not take the arguments {dict(env_kwargs)!r} (env.env_kwargs): {type(err).__name__}: "
            f"{err}"
        ) from err


def make_env(env_id: str, /, **kwargs: Any) -> gym.Env[Any, Any]:
    """``gymnasium.make(env_id, **kwargs)``, also for ids whose env class implements the old gym API.

    The id is found as :func:`registered_spec` finds it (Atari ids too). The registered class is
    looked at before it is made: an old-API class is made without gymnasium's env checker (which
    rejects that API) and adapted by :func:`as_gymnasium`, keeping the registration's time limit.
    ``kwargs`` go to ``gymnasium.make`` as they are, ``env_id`` included (``GymV26Environment-v0`` takes the gym
    id to wrap as ``env_id``); ``id`` is ``gymnasium.make``'s own name for ``env_id`` and is refused.

    >>> make_env('CartPole-v1').spec.max_episode_steps
    500
    """
    if "id" in kwargs:
        raise ConfigError(
            f"env_kwargs key 'id' ({kwargs['id']!r}) is gymnasium.make's name for the env id, which is env_id "
            f"({env_id!r}); an env that takes an argument called id cannot be made by gymnasium.make"
        )
    spec = registered_spec(env_id)
    creator = spec.entry_point if callable(spec.entry_point) else load_env_creator(str(spec.entry_point))
    if is_old_api_class(creator):
        kwargs = {"disable_env_checker": True, **kwargs}
    return as_gymnasium(gym.make(env_id, **kwargs))
