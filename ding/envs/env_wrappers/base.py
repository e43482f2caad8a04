"""The wrapper base class and the registry that configs name wrappers through.

A registered wrapper states its space rule once, as a static, pure ``space_rule(obs_space,
act_space, rew_space, *, <keyword arguments>)``; the rule's keyword parameters (names, annotations,
defaults) are the declaration of the wrapper's keyword arguments. :class:`DingWrapper` derives the
rest from it: the constructor ``Wrapper(env, *args, **kwargs)`` (arguments bound in declaration
order, checked against their annotations, stored as attributes), its signature, the spaces it
sets, and the two class-level interfaces ``new_space`` (full spaces) and ``new_shape`` (DI-engine-style
shapes, through placeholder spaces). The ahead-of-time path (:func:`~ding.envs.env_wrappers.update_shape`,
:func:`~ding.envs.env_wrappers.update_space`) and the runtime path are therefore one piece of code.

An episode may begin inside ``step``: a wrapper below resets its env there (``non_episodic`` does) and returns
the new episode's first observation. Such a step says so in its info (:data:`RESET_INFO`, read with
:func:`episode_began`); a wrapper whose output depends on the episode starts the episode afresh there as its
``reset`` would (``task_id``, ``frame_stack``, the history wrappers, ``transformers``, ...).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import gymnasium as gym
from gymnasium import spaces

from ding.envs.env_wrappers.arguments import RuleParameter, check_argument, rule_parameters
from ding.envs.values.spaces import DEFAULT_REWARD_SPACE, Shape, reward_space_of, shape_to_space, space_to_shape
from ding.errors import ConfigError, did_you_mean
from ding.utils.registry import Registry

RESET_INFO = "reset_info"
"""The info key of a step inside which a new episode began: that episode's reset info (the step's observation is
its first)."""

SpaceTriple = tuple[spaces.Space[Any], spaces.Space[Any], spaces.Space[Any]]
ShapeTriple = tuple[Shape, Shape, Shape]
W = TypeVar("W", bound="DingWrapper")


class DingWrapper(gym.Wrapper[Any, Any, Any, Any]):
    """Base of ding's wrappers: a gymnasium wrapper with a ``reward_space``, built from its space rule.

    A subclass states ``space_rule`` (a staticmethod) and, for runtime state, ``_setup``. Example of
    a complete wrapper:

        >>> import numpy as np
        >>> from ding.envs.env_wrappers.arguments import PositiveInt
        >>> class Repeat(DingWrapper):
        ...     # each observation ``times`` times over: (n,) -> (times * n,)
        ...     @staticmethod
        ...     def space_rule(obs_space, act_space, rew_space, *, times: PositiveInt = 2):
        ...         low, high = np.tile(obs_space.low, times), np.tile(obs_space.high, times)
        ...         return spaces.Box(low, high, dtype=obs_space.dtype), act_space, rew_space
        ...     def reset(self, **kwargs):
        ...         obs, info = self.env.reset(**kwargs)
        ...         return np.tile(obs, self.times), info
        ...     def step(self, action):
        ...         obs, *rest = self.env.step(action)
        ...         return np.tile(obs, self.times), *rest
        >>> from gymnasium.envs.classic_control import CartPoleEnv
        >>> Repeat(CartPoleEnv(), 3).observation_space.shape, Repeat.new_shape((4,), 2, (1,), times=5)
        ((12,), ((20,), 2, (1,)))
        >>> import inspect; inspect.signature(Repeat)
        <Signature (env: 'gym.Env[Any, Any]', times: 'PositiveInt' = 2)>
    """

    registered_name: ClassVar[str] = ""
    #: Other names accepted for keyword arguments (alias -> argument), e.g. DI-engine's spelling. Configs,
    #: chains and the constructor rename an alias to its argument.
    argument_aliases: ClassVar[Mapping[str, str]] = {}
    #: The keyword arguments, read from ``space_rule`` when the class is created.
    parameters: ClassVar[Mapping[str, RuleParameter]] = {}

    if TYPE_CHECKING:
        # Each subclass states its rule with its own keyword parameters, and gets them as attributes.
        space_rule: ClassVar[Callable[..., SpaceTriple]]

        def __getattr__(self, name: str) -> Any: ...

    else:

        @staticmethod
        def space_rule(obs_space, act_space, rew_space):
            """Spaces unchanged. Every registered wrapper states its own rule."""
            return obs_space, act_space, rew_space

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        rule = cls.__dict__.get("space_rule")
        if rule is None:
            return
        if not isinstance(rule, staticmethod):
            raise TypeError(f"{cls.__name__}.space_rule must be a staticmethod (a pure function of spaces and kwargs)")
        cls.parameters = rule_parameters(rule.__func__, cls.__name__)
        for alias, target in cls.argument_aliases.items():
            if target not in cls.parameters:
                raise TypeError(f"{cls.__name__}: argument alias {alias!r} stands for {target!r}, which is no argument")
        cls.__signature__ = _constructor_signature(rule.__func__, cls.argument_aliases)  # type: ignore[attr-defined]

    def __init__(self, env: gym.Env[Any, Any], *args: Any, **kwargs: Any) -> None:
        super().__init__(env)
        cls = type(self)
        #: The wrapper's keyword arguments, every one filled in and checked.
        self.arguments: dict[str, Any] = cls.check_arguments(cls.bind_arguments(args, kwargs))
        for name, value in self.arguments.items():
            if not hasattr(cls, name):  # never shadow a method (ram's ``render`` argument)
                setattr(self, name, value)
        obs, act, rew = cls.space_rule(env.observation_space, env.action_space, reward_space_of(env), **self.arguments)
        self.observation_space = obs
        self.action_space = act
        self.reward_space: spaces.Space[Any] = rew
        self._setup()

    def _setup(self) -> None:
        """Build runtime state (buffers, layouts, lookups) once the arguments and spaces are set."""

    @classmethod
    def wrapper_name(cls) -> str:
        """The registered name, or the class name of an unregistered wrapper (for errors)."""
        return cls.registered_name or cls.__name__

    @classmethod
    def bind_arguments(cls, args: tuple[Any, ...] = (), kwargs: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Every keyword argument of the wrapper from positional ``args`` (in declaration order) and ``kwargs``
        (aliases renamed), defaults filled in; not yet checked against the annotations."""
        who, params = cls.wrapper_name(), cls.parameters
        if len(args) > len(params):
            raise TypeError(
                f"wrapper {who!r} takes {len(params)} positional arguments after env ({', '.join(params) or 'none'}); "
                f"got {len(args)}"
            )
        given = dict(zip(params, args, strict=False))
        for key, value in (kwargs or {}).items():
            if key in cls.argument_aliases:
                name = cls.argument_aliases[key]
                if value is None:
                    continue
                if given.get(name) is not None:
                    raise ConfigError(f"{who} got both {name}={given[name]!r} and its alias {key}={value!r}; give one")
            elif key not in params:
                raise ConfigError(
                    f"wrapper {who!r} got unknown argument {key!r}; accepted: "
                    f"{', '.join(params) or '(none)'}.{did_you_mean(key, params)}"
                )
            else:
                name = key
                if name in given:
                    raise TypeError(f"wrapper {who!r} got argument {name!r} twice (by position and by keyword)")
            given[name] = value
        bound = {}
        for name, param in params.items():
            if name in given:
                bound[name] = given[name]
            elif param.required:
                raise ConfigError(f"wrapper {who!r} needs argument {name!r}; accepted: {', '.join(params)}")
            else:
                bound[name] = param.default
        return bound

    @classmethod
    def check_arguments(cls, bound: Mapping[str, Any]) -> dict[str, Any]:
        """``bound`` (as :meth:`bind_arguments` returns it) with each value checked against its annotation."""
        params = cls.parameters
        return {
            name: check_argument(cls.wrapper_name(), name, value, params[name].annotation)
            for name, value in bound.items()
        }

    @classmethod
    def new_space(
        cls,
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any] | None,
        *args: Any,
        **kwargs: Any,
    ) -> SpaceTriple:
        """The wrapper's rule applied to full spaces (``rew_space`` None: DI-engine's default reward space)."""
        values = cls.check_arguments(cls.bind_arguments(args, kwargs))
        rew = DEFAULT_REWARD_SPACE if rew_space is None else rew_space
        return cls.space_rule(obs_space, act_space, rew, **values)

    @classmethod
    def new_shape(cls, obs_shape: Shape, act_shape: Shape, rew_shape: Shape, *args: Any, **kwargs: Any) -> ShapeTriple:
        """The wrapper's rule applied to DI-engine-style shapes, through placeholder spaces built from them."""
        obs, act, rew = cls.new_space(
            shape_to_space(obs_shape), shape_to_space(act_shape), shape_to_space(rew_shape), *args, **kwargs
        )
        return space_to_shape(obs), space_to_shape(act), space_to_shape(rew)


def episode_began(info: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The reset info of the episode that began inside the step that returned ``info``, or None.

    >>> episode_began({"reset_info": {"task_id": 1}}), episode_began({"task_id": 0})
    ({'task_id': 1}, None)
    """
    began = info.get(RESET_INFO)
    return began if isinstance(began, Mapping) else None


def _constructor_signature(rule: Callable[..., Any], aliases: Mapping[str, str]) -> inspect.Signature:
    """``(env, <the rule's keyword parameters>, *, <aliases>)``: what the derived constructor takes."""
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = [inspect.Parameter("env", kind, annotation="gym.Env[Any, Any]")]
    params += [p.replace(kind=kind) for p in list(inspect.signature(rule).parameters.values())[3:]]
    params += [inspect.Parameter(alias, inspect.Parameter.KEYWORD_ONLY, default=None) for alias in aliases]
    return inspect.Signature(params)


def _check_wrapper_class(name: str, cls: type) -> None:
    if not (isinstance(cls, type) and issubclass(cls, DingWrapper)):
        raise TypeError(f"wrapper {name!r} must be a DingWrapper subclass, got {cls!r}")
    if not isinstance(cls.__dict__.get("space_rule"), staticmethod):
        raise TypeError(
            f"wrapper class {cls.__name__} (registered as {name!r}) must declare its own static "
            "space_rule(obs_space, act_space, rew_space, *, <keyword arguments>); without a rule it cannot be "
            "registered"
        )
    cls.registered_name = name


WRAPPER_REGISTRY: Registry[type[DingWrapper]] = Registry(
    "wrapper", validator=_check_wrapper_class, alias_kind="class names"
)


def register_wrapper(name: str) -> Callable[[type[W]], type[W]]:
    """Class decorator registering a wrapper under ``name`` (its config ``type``).

    The class name becomes an alias of ``name`` (so configs may name the wrapper by class, as
    DI-engine does) unless that class name already stands for another wrapper, which keeps it.

    Example:
        >>> @register_wrapper('doc_identity')
        ... class DocIdentity(DingWrapper):
        ...     @staticmethod
        ...     def space_rule(obs_space, act_space, rew_space):
        ...         return obs_space, act_space, rew_space
        >>> WRAPPER_REGISTRY.get('doc_identity') is WRAPPER_REGISTRY.get('DocIdentity') is DocIdentity
        True
    """

    def decorate(cls: type[W]) -> type[W]:
        WRAPPER_REGISTRY.register(name)(cls)
        if WRAPPER_REGISTRY.is_free(cls.__name__):
            WRAPPER_REGISTRY.add_alias(cls.__name__, name)
        return cls

    return decorate


def wrapper_alias(alias: str, cls: type[W]) -> type[W]:
    """Make ``alias`` another config name of the registered wrapper class ``cls``; returns ``cls``.

    Bind the result under the same name, so the Python name and the config name are one statement:
    ``WarpFrame = wrapper_alias("WarpFrame", WarpFrameWrapper)``.
    """
    if not cls.registered_name:
        raise TypeError(f"{cls.__name__} is not a registered wrapper, so {alias!r} cannot stand for it")
    WRAPPER_REGISTRY.add_alias(alias, cls.registered_name)
    return cls


class DingObservationWrapper(DingWrapper):
    """A wrapper that only transforms observations: subclasses implement ``observation``."""

    def observation(self, obs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement observation(obs)")

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return self.observation(obs), info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self.observation(obs), reward, terminated, truncated, info


class DingRewardWrapper(DingWrapper):
    """A wrapper that only transforms rewards: subclasses implement ``reward``."""

    def reward(self, reward: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement reward(reward)")

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, self.reward(reward), terminated, truncated, info


class DingActionWrapper(DingWrapper):
    """A wrapper that only transforms actions on their way in: subclasses implement ``action``."""

    def action(self, action: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement action(action)")

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        return self.env.step(self.action(action))
