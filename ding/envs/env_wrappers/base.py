"""The wrapper base class and the registry that configs name wrappers through.

Every registered wrapper declares a static ``new_shape(obs_shape, act_shape, rew_shape, **kwargs)``.
Wrappers whose output spaces differ from their input in more than nothing at all (shape,
dtype or bounds) also declare ``new_space`` — built on ``new_shape`` — and their ``__init__``
sets its spaces by calling that same rule through :meth:`DingWrapper._declare_spaces`. The
ahead-of-time path (:func:`ding.envs.env_wrappers.update_shape`) and the runtime path are
therefore one piece of code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import gymnasium as gym
from gymnasium import spaces

from ding.envs.spaces import Shape, reward_space_of, space_to_shape
from ding.errors import ConfigError, ShapeRuleError
from ding.utils.registry import Registry

SpaceTriple = tuple[spaces.Space[Any], spaces.Space[Any], spaces.Space[Any]]
ShapeTriple = tuple[Shape, Shape, Shape]
W = TypeVar("W", bound="DingWrapper")


class DingWrapper(gym.Wrapper[Any, Any, Any, Any]):
    """Base of ding's wrappers: a gymnasium wrapper that also carries a ``reward_space``.

    Subclasses must declare a static ``new_shape`` (checked at registration) and, when they
    change any space, a ``new_space`` classmethod or staticmethod.
    """

    registered_name: ClassVar[str] = ""
    #: Other names accepted for keyword arguments (alias -> argument), e.g. DI-engine's spelling. Configs
    #: and chains rename an alias to its argument; ``__init__`` takes the alias as a keyword too.
    argument_aliases: ClassVar[Mapping[str, str]] = {}

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self.reward_space: spaces.Space[Any] = reward_space_of(env)

    def _declare_spaces(self, **kwargs: Any) -> None:
        """Set this wrapper's three spaces with its own static rule, as ``update_space`` would."""
        obs, act, rew = type(self).new_space(
            self.env.observation_space, self.env.action_space, reward_space_of(self.env), **kwargs
        )
        self.observation_space = obs
        self.action_space = act
        self.reward_space = rew

    if TYPE_CHECKING:
        # Each registered subclass declares these rules with its own keyword parameters.
        new_shape: ClassVar[Callable[..., ShapeTriple]]
        new_space: ClassVar[Callable[..., SpaceTriple]]
    else:

        @classmethod
        def new_space(cls, obs_space, act_space, rew_space, **kwargs):
            """Space rule of wrappers that leave every space as it is.

            Verifies that the wrapper's ``new_shape`` agrees (keeps the shapes) and returns the input.
            """
            shapes = (space_to_shape(obs_space), space_to_shape(act_space), space_to_shape(rew_space))
            new = tuple(cls.new_shape(*shapes, **kwargs))
            if new != shapes:
                raise ShapeRuleError(
                    f"{cls.__name__}.new_shape changes shapes {shapes} -> {new}, "
                    "so the class must also declare new_space"
                )
            return obs_space, act_space, rew_space


def _check_wrapper_class(name: str, cls: type) -> None:
    if not (isinstance(cls, type) and issubclass(cls, gym.Wrapper)):
        raise TypeError(f"wrapper {name!r} must be a gymnasium.Wrapper subclass, got {cls!r}")
    rule = cls.__dict__.get("new_shape")
    if not isinstance(rule, staticmethod):
        raise TypeError(
            f"wrapper class {cls.__name__} (registered as {name!r}) must declare its own static "
            "new_shape(obs_shape, act_shape, rew_shape, **kwargs); without a shape rule it cannot be registered"
        )
    if not hasattr(cls, "new_space"):
        raise TypeError(f"wrapper class {cls.__name__} (registered as {name!r}) has no new_space rule")
    cls.registered_name = name  # type: ignore[attr-defined]


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
        ...     def new_shape(obs_shape, act_shape, rew_shape):
        ...         return obs_shape, act_shape, rew_shape
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


def aliased_argument(wrapper: str, name: str, value: Any, alias: str, alias_value: Any) -> Any:
    """The value of argument ``name`` when it may also be given as keyword ``alias`` (None: not given).

    >>> aliased_argument('time_limit', 'max_episode_steps', None, 'max_limit', 300)
    300
    """
    if alias_value is None:
        return value
    if value is not None:
        raise ConfigError(f"{wrapper} got both {name}={value!r} and its alias {alias}={alias_value!r}; give one")
    return alias_value


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
