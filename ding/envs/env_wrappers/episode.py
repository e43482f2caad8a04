"""Episode bookkeeping wrappers: returns, statistics, time limits and episode boundaries.

None of them changes a space; they only change when episodes end and what ``info`` reports.
"""

from __future__ import annotations

import copy
import time
from collections import deque
from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec

from ding.envs.env_wrappers.arguments import PositiveInt
from ding.envs.env_wrappers.base import RESET_INFO, DingWrapper, SpaceTriple, register_wrapper
from ding.errors import ConfigError

StepResult = tuple[Any, Any, bool, bool, dict[str, Any]]


def _limit_from_spec(wrapper: str, name: str, value: int | None, env: gym.Env[Any, Any]) -> int:
    """``value``, or the env spec's ``max_episode_steps`` when ``value`` is None."""
    if value is not None:
        return int(value)
    spec_limit = env.spec.max_episode_steps if env.spec is not None else None
    if spec_limit is None:
        raise ConfigError(
            f"{wrapper}: {name}=None takes the limit from env.spec.max_episode_steps, but {env} declares none; "
            f"pass {name} explicitly"
        )
    return int(spec_limit)


def _reward_shape(space: gym.Space[Any]) -> tuple[int, ...]:
    return tuple(space.shape) if space.shape is not None else (1,)


class EpisodeReturn:
    """A running return in ``info['eval_episode_return']``'s form: a float32 array of the reward space's shape.

    A scalar reward (shape ``()`` or ``(1,)``) is summed as a Python float, so a step costs one addition; the
    sum is held in double precision and reported as float32.

    Example:
        >>> total = EpisodeReturn(spaces.Box(-1, 1, (1,), np.float32))
        >>> total.add(0.5); total.add(np.float32(0.25)); total.add(np.array([1.0]))
        >>> total.value()
        array([1.75], dtype=float32)
    """

    def __init__(self, reward_space: gym.Space[Any]) -> None:
        self._shape = _reward_shape(reward_space)
        self._scalar = self._shape in ((), (1,))
        self._sum = 0.0
        self._total: np.ndarray = np.zeros(self._shape, dtype=np.float32)

    def add(self, reward: Any) -> None:
        if self._scalar:
            if type(reward) is float or type(reward) is int:
                self._sum += reward
            else:
                self._sum += float(np.asarray(reward, dtype=np.float32).reshape(()))
        else:
            self._total += np.asarray(reward, dtype=np.float32).reshape(self._shape)

    def value(self) -> np.ndarray:
        if self._scalar:
            return np.full(self._shape, self._sum, dtype=np.float32)
        return self._total.copy()

    def clear(self) -> None:
        self._sum = 0.0
        self._total.fill(0.0)


@register_wrapper("eval_episode_return")
class EvalEpisodeReturnWrapper(DingWrapper):
    """Accumulate the reward and report it as ``info['eval_episode_return']`` when an episode ends.

    The return is a float32 array of the reward space's shape (``(1,)`` for scalar rewards). Spaces unchanged.

    Example:
        >>> from gymnasium.envs.classic_control import CartPoleEnv
        >>> env = EvalEpisodeReturnWrapper(CartPoleEnv())
        >>> _ = env.reset(seed=0)
        >>> done = False
        >>> while not done:
        ...     _, _, term, trunc, info = env.step(0)
        ...     done = term or trunc
        >>> float(info['eval_episode_return'][0])
        11.0
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any]
    ) -> SpaceTriple:
        return obs_space, act_space, rew_space

    def _setup(self) -> None:
        self._return = EpisodeReturn(self.reward_space)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._return.clear()
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> StepResult:
        result = self.env.step(action)
        self._return.add(result[1])
        if result[2] or result[3]:
            obs, reward, terminated, truncated, info = result
            return obs, reward, terminated, truncated, {**info, "eval_episode_return": self._return.value()}
        return result


@register_wrapper("time_limit")
class TimeLimitWrapper(DingWrapper):
    """Truncate every episode after ``max_episode_steps`` steps; spaces unchanged.

    At the limit the step returns ``truncated=True`` (``terminated`` as the env gave it) and sets
    ``info['TimeLimit.truncated']`` to ``not terminated``, the flag DI-engine reads to decide whether to
    bootstrap. Every step also reports DI-engine's ``info['time_limit']`` (the limit was reached) and
    ``info['time_count']`` (steps so far). ``max_episode_steps=None`` takes the limit from
    ``env.spec.max_episode_steps``; DI-engine's name ``max_limit`` is accepted for it. The wrapper's own
    ``spec`` carries its limit, so a later ``time_limit(None)`` or ``random_first_episode_length(None)``
    reads it (envs without a spec have none to carry it).

    Example:
        >>> from gymnasium.envs.classic_control import PendulumEnv
        >>> env = TimeLimitWrapper(PendulumEnv(), max_episode_steps=3)
        >>> _ = env.reset(seed=0)
        >>> [env.step([0.0])[2:4] for _ in range(3)]
        [(False, False), (False, False), (False, True)]
    """

    argument_aliases: ClassVar[Mapping[str, str]] = {"max_limit": "max_episode_steps"}

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        max_episode_steps: PositiveInt | None = None,
    ) -> SpaceTriple:
        return obs_space, act_space, rew_space

    def _setup(self) -> None:
        given = self.arguments["max_episode_steps"]
        self.max_episode_steps: int = _limit_from_spec("time_limit", "max_episode_steps", given, self.env)
        self._elapsed = 0

    @property
    def spec(self) -> EnvSpec | None:  # type: ignore[override]
        """The inner env's spec with this limit as its ``max_episode_steps`` (as gymnasium's ``TimeLimit``)."""
        inner = self.env.spec
        if inner is None:
            return None
        spec = copy.deepcopy(inner)
        spec.max_episode_steps = self.max_episode_steps
        return spec

    @property
    def elapsed_steps(self) -> int:
        """Steps taken in the current episode."""
        return self._elapsed

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._elapsed = 0
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> StepResult:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._elapsed += 1
        reached = self._elapsed >= self.max_episode_steps
        info = {**info, "time_limit": reached, "time_count": self._elapsed}
        if reached:
            truncated = True
            info["TimeLimit.truncated"] = not terminated
        return obs, reward, terminated, truncated, info


@register_wrapper("non_episodic")
class NonEpisodicWrapper(DingWrapper):
    """Hide episode ends: the inner env is reset in place and ``terminated``/``truncated`` stay False; spaces unchanged.

    When the inner episode ends, the step returns the observation of the fresh episode and adds to ``info``:
    ``inner_episode_end=True``, ``inner_terminated`` (whether the inner end was a termination),
    ``final_observation`` (the inner episode's last observation) and ``reset_info`` (the fresh episode's reset
    info: the mark of an episode begun inside ``step``, :func:`~ding.envs.env_wrappers.base.episode_began`, by
    which the wrappers above start their episode state afresh). These keys appear only on such steps. ``reset()``
    itself still resets the inner env.

    Example:
        >>> from gymnasium.envs.classic_control import CartPoleEnv
        >>> env = NonEpisodicWrapper(CartPoleEnv())
        >>> _ = env.reset(seed=0)
        >>> steps = [env.step(0) for _ in range(25)]
        >>> any(s[2] or s[3] for s in steps), env.inner_episode_count
        (False, 2)
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any]
    ) -> SpaceTriple:
        return obs_space, act_space, rew_space

    def _setup(self) -> None:
        self.inner_episode_count = 0

    def step(self, action: Any) -> StepResult:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            self.inner_episode_count += 1
            new_obs, reset_info = self.env.reset()
            info = {
                **info,
                "inner_episode_end": True,
                "inner_terminated": bool(terminated),
                "final_observation": obs,
                RESET_INFO: reset_info,
            }
            obs = new_obs
        return obs, reward, False, False, info


@register_wrapper("random_first_episode_length")
class RandomFirstEpisodeLengthWrapper(DingWrapper):
    """Truncate the first ``num_episodes`` episodes at a random length in ``[1, max_first_episode_length]``.

    Parallel copies of an env with fixed-length episodes otherwise stay in lockstep; a random first cut
    decorrelates them. The length is drawn from ``self.np_random`` on each reset until that many episodes have
    ended, so it is fixed by ``reset(seed=...)``; a reset before an episode ended draws again. A cut sets
    ``truncated=True`` and ``info['TimeLimit.truncated']`` as :class:`TimeLimitWrapper` does. Later episodes are
    untouched. ``max_first_episode_length=None`` uses ``env.spec.max_episode_steps``. Spaces unchanged.

    Example:
        >>> from gymnasium.envs.classic_control import PendulumEnv
        >>> env = RandomFirstEpisodeLengthWrapper(PendulumEnv(), max_first_episode_length=50)
        >>> _ = env.reset(seed=0)
        >>> 1 <= env.current_limit <= 50
        True
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        max_first_episode_length: PositiveInt | None = None,
        num_episodes: PositiveInt = 1,
    ) -> SpaceTriple:
        return obs_space, act_space, rew_space

    def _setup(self) -> None:
        given = self.arguments["max_first_episode_length"]
        self.max_first_episode_length: int = _limit_from_spec(
            "random_first_episode_length", "max_first_episode_length", given, self.env
        )
        self._episodes_ended = 0
        self._limit = 0
        self._elapsed = 0

    @property
    def current_limit(self) -> int | None:
        """The length at which the current episode will be cut, or None once the random episodes are over."""
        return self._limit or None

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        result = self.env.reset(**kwargs)
        self._elapsed = 0
        if self._episodes_ended < self.num_episodes:
            self._limit = int(self.np_random.integers(1, self.max_first_episode_length + 1))
        return result

    def step(self, action: Any) -> StepResult:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if self._limit:
            self._elapsed += 1
            if self._elapsed >= self._limit:
                truncated = True
                info = {**info, "TimeLimit.truncated": not terminated}
            if terminated or truncated:
                self._episodes_ended += 1
                self._limit = 0
        return obs, reward, terminated, truncated, info


@register_wrapper("record_episode_statistics")
class RecordEpisodeStatisticsWrapper(DingWrapper):
    """Report each finished episode's return, length and duration in ``info['episode']``; spaces unchanged.

    ``info['episode'] = {'r': return, 'l': length, 't': seconds since reset}``, where the return is a float for
    scalar rewards and a float32 array of the reward's shape for vector rewards. The last ``deque_size`` returns
    and lengths are kept in ``return_queue`` and ``length_queue``; ``episode_count`` counts finished episodes.

    Example:
        >>> from gymnasium.envs.classic_control import CartPoleEnv
        >>> env = RecordEpisodeStatisticsWrapper(CartPoleEnv(), deque_size=5)
        >>> _ = env.reset(seed=0)
        >>> done = False
        >>> while not done:
        ...     _, _, term, trunc, info = env.step(0)
        ...     done = term or trunc
        >>> info['episode']['r'], info['episode']['l'], list(env.length_queue)
        (11.0, 11, [11])
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        deque_size: PositiveInt = 100,
    ) -> SpaceTriple:
        return obs_space, act_space, rew_space

    def _setup(self) -> None:
        self.return_queue: deque[float | np.ndarray] = deque(maxlen=self.deque_size)
        self.length_queue: deque[int] = deque(maxlen=self.deque_size)
        self.episode_count = 0
        self._scalar = _reward_shape(self.reward_space) in ((), (1,))
        self._vector_return: np.ndarray = np.zeros(_reward_shape(self.reward_space), dtype=np.float32)
        self._scalar_return = 0.0
        self._length = 0
        self._start = time.perf_counter()

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        result = self.env.reset(**kwargs)
        self._scalar_return = 0.0
        self._vector_return.fill(0.0)
        self._length = 0
        self._start = time.perf_counter()
        return result

    def step(self, action: Any) -> StepResult:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._length += 1
        if self._scalar:
            self._scalar_return += float(np.asarray(reward).reshape(()))
        else:
            self._vector_return += np.asarray(reward, dtype=np.float32).reshape(self._vector_return.shape)
        if terminated or truncated:
            ret: float | np.ndarray = self._scalar_return if self._scalar else self._vector_return.copy()
            elapsed = round(time.perf_counter() - self._start, 6)
            info = {**info, "episode": {"r": ret, "l": self._length, "t": elapsed}}
            self.return_queue.append(ret)
            self.length_queue.append(self._length)
            self.episode_count += 1
        return obs, reward, terminated, truncated, info
