"""``transformers``: state, reward and action transformers that see the current episode's history.

A transformer is a callable ``transformer(value, history)``: it gets the observation, reward or action and the
:class:`~ding.envs.env_wrappers.episode_history.EpisodeHistory` of the episode so far, and returns the value to
pass on; a ``reset()`` method, if it has one, is called at every episode start (a transformer may keep state).
Each is given as a :class:`TransformedSpace`, which states the space of what it produces, so the wrapper's space
rule knows the spaces before any step and composes with ``update_shape`` like any other rule.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from gymnasium import spaces

from ding.envs.conformance import check_value_in_space
from ding.envs.conversion import reward_converter
from ding.envs.env_wrappers.arguments import PositiveInt
from ding.envs.env_wrappers.base import DingWrapper, SpaceTriple, episode_began, register_wrapper
from ding.envs.env_wrappers.episode_history import EpisodeHistory, check_recordable
from ding.envs.spaces import reward_space_of
from ding.errors import ConfigError, EnvConformanceError

Transformer = Callable[[Any, EpisodeHistory], Any]
SpaceRule = Callable[[spaces.Space[Any]], spaces.Space[Any]]
_ROLES = ("state_transformer", "reward_transformer", "action_transformer")


def _name(thing: Any) -> str:
    return getattr(thing, "__qualname__", None) or type(thing).__qualname__


@dataclasses.dataclass(frozen=True)
class TransformedSpace:
    """A transformer together with the space of what it produces, declared ahead of time.

    ``space`` is a gymnasium space, or a function of the space the transformer takes (the wrapped env's
    observation or reward space) returning it. For an action transformer the declared space is the agent's
    action space, as a function of the wrapped env's; the transformer turns the agent's actions into the
    wrapped env's.

    Example:
        >>> import numpy as np
        >>> sign = TransformedSpace(lambda r, history: float(np.sign(r)), spaces.Box(-1, 1, (1,), np.float32))
        >>> sign(-3.5, None), sign.output_space(spaces.Box(-10, 10, (1,), np.float32))
        (-1.0, Box(-1.0, 1.0, (1,), float32))
    """

    transformer: Transformer
    space: spaces.Space[Any] | SpaceRule

    def __post_init__(self) -> None:
        if not callable(self.transformer):
            raise TypeError(f"TransformedSpace: transformer must be callable, got {self.transformer!r}")
        if not (isinstance(self.space, spaces.Space) or callable(self.space)):
            raise TypeError(
                f"TransformedSpace: space must be a gymnasium space or a function of the input space, "
                f"got {self.space!r}"
            )

    def output_space(self, input_space: spaces.Space[Any]) -> spaces.Space[Any]:
        """The declared space, given the space the transformer takes."""
        if isinstance(self.space, spaces.Space):
            return self.space
        out = self.space(input_space)
        if not isinstance(out, spaces.Space):
            raise TypeError(
                f"TransformedSpace: the space function {_name(self.space)} of {_name(self.transformer)} returned "
                f"{out!r} for {input_space}; it must return a gymnasium space"
            )
        return out

    def __call__(self, value: Any, history: EpisodeHistory) -> Any:
        return self.transformer(value, history)

    def reset(self) -> None:
        """Call the transformer's own ``reset()``, if it has one."""
        reset = getattr(self.transformer, "reset", None)
        if callable(reset):
            reset()

    def __repr__(self) -> str:
        space = self.space if isinstance(self.space, spaces.Space) else _name(self.space)
        return f"TransformedSpace({_name(self.transformer)}, {space})"


def _declared(given: Any, role: str, input_space: spaces.Space[Any]) -> spaces.Space[Any]:
    if given is None:
        return input_space
    if not isinstance(given, TransformedSpace):
        raise ConfigError(
            f"transformers: {role} must be None or a TransformedSpace(transformer, space) declaring the space of "
            f"what it produces; got {given!r}"
        )
    return given.output_space(input_space)


@register_wrapper("transformers")
class TransformersWrapper(DingWrapper):
    """Transform observations, rewards and actions with callables that see the current episode's history.

    Each step the action transformer turns the agent's action into the wrapped env's (seeing the history up to
    the previous step); the env steps; the history records the agent's action, the env's reward and the env's
    observation; then the state and reward transformers turn that observation and reward into what the agent
    gets, seeing the history with this step in it. ``None`` leaves a value as it is. The history's arrays start
    with room for ``expected_episode_length`` steps and double when an episode runs longer;
    :meth:`dump_history` returns copies of them.

    A transformer whose value does not lie in its declared space raises
    :class:`~ding.errors.EnvConformanceError`, naming the transformer, the value and the space.

    Example:
        >>> import numpy as np
        >>> from gymnasium.envs.classic_control import CartPoleEnv
        >>> def velocity(obs, history):  # the change since the previous observation
        ...     return obs - history.observations[-2] if len(history) else np.zeros_like(obs)
        >>> moved = TransformedSpace(velocity, lambda box: spaces.Box(-np.inf, np.inf, box.shape, box.dtype))
        >>> env = TransformersWrapper(CartPoleEnv(), state_transformer=moved, expected_episode_length=64)
        >>> obs, _ = env.reset(seed=0)
        >>> obs.tolist(), env.step(1)[0].shape, len(env.history)
        ([0.0, 0.0, 0.0, 0.0], (4,), 1)
        >>> TransformersWrapper.new_shape((4,), 2, (1,), state_transformer=moved)
        ((4,), 2, (1,))
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        state_transformer: TransformedSpace | None = None,
        reward_transformer: TransformedSpace | None = None,
        action_transformer: TransformedSpace | None = None,
        expected_episode_length: PositiveInt = 512,
    ) -> SpaceTriple:
        obs = _declared(state_transformer, "state_transformer", obs_space)
        rew = _declared(reward_transformer, "reward_transformer", rew_space)
        act = _declared(action_transformer, "action_transformer", act_space)
        # the history records the wrapped env's observations and rewards and the agent's actions
        check_recordable(obs_space, "transformers", "observation")
        check_recordable(rew_space, "transformers", "reward")
        check_recordable(act, "transformers", "action")
        return obs, act, rew

    def _setup(self) -> None:
        self._reward_value = reward_converter(self.reward_space)
        # the wrapped env's observations and rewards, the agent's actions
        self.history = EpisodeHistory(
            self.env.observation_space, self.action_space, reward_space_of(self.env), self.expected_episode_length
        )
        self._transformers = [t for t in (getattr(self, role) for role in _ROLES) if t is not None]

    def _refuse(self, role: str, reason: str, space: spaces.Space[Any]) -> EnvConformanceError:
        given = getattr(self, role)
        return EnvConformanceError(
            f"transformers: {role} {given!r} gave a value outside its declared space {space}: {reason}"
        )

    def _observation(self, obs: Any) -> Any:
        if self.state_transformer is None:
            return obs
        out = self.state_transformer(obs, self.history)
        reason = check_value_in_space(out, self.observation_space, "observation")
        if reason:
            raise self._refuse("state_transformer", reason, self.observation_space)
        return out

    def _reward(self, reward: Any) -> Any:
        if self.reward_transformer is None:
            return reward
        out = self.reward_transformer(reward, self.history)
        try:
            fits = bool(self.reward_space.contains(self._reward_value(out)))
            reason = f"reward {out!r}"
        except (TypeError, ValueError) as err:
            fits, reason = False, str(err)
        if not fits:
            raise self._refuse("reward_transformer", reason, self.reward_space)
        return out

    def _action(self, action: Any) -> Any:
        if self.action_transformer is None:
            return action
        out = self.action_transformer(action, self.history)
        reason = check_value_in_space(out, self.env.action_space, "action for the wrapped env")
        if reason:
            raise self._refuse("action_transformer", reason, self.env.action_space)
        return out

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._start(obs)
        return self._observation(obs), info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(self._action(action))
        if episode_began(info) is None:
            self.history.record(action, reward, obs)
            return self._observation(obs), self._reward(reward), terminated, truncated, info
        reward = self._reward(reward)  # the last reward of the episode that ended, with its history
        self._start(obs)  # obs is the first of the episode that began inside the step
        return self._observation(obs), reward, terminated, truncated, info

    def _start(self, obs: Any) -> None:
        self.history.start(obs)
        for transformer in self._transformers:
            transformer.reset()

    def dump_history(self) -> dict[str, Any]:
        """Copies of the current episode's history: ``{'observations', 'actions', 'rewards'}`` (arrays)."""
        return self.history.dump()
