"""Atari-style episode handling: no-op starts, frame skipping, lives, FIRE to start, and the RAM observation.

Lives are read from the emulator (``env.unwrapped.ale.lives()``) when the innermost env is an ALE env,
and from ``info['lives']`` otherwise. Wrappers that take a no-op step (``noop_reset``,
``episodic_life``) need a ``Discrete`` action space. The stepping wrappers (``max_and_skip``,
``frame_skip``, ``action_repeat``) sum rewards in the reward's own shape: a float for ``(1,)``
rewards, a float32 array for vector rewards; their reward space keeps its shape, and Box bounds
widen to cover a sum of up to ``skip`` rewards.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ding.envs.env_wrappers.base import (
    DingObservationWrapper,
    DingWrapper,
    ShapeTriple,
    SpaceTriple,
    register_wrapper,
)
from ding.envs.spaces import Shape, is_flat_shape, space_to_shape
from ding.errors import ConfigError, ShapeRuleError

StepResult = tuple[Any, Any, bool, bool, dict[str, Any]]

_ALE_RAM_SIZE = 128


# ---------------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------------


def _check_positive(value: Any, name: str, who: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ConfigError(f"{who}: {name} must be a positive int; got {value!r}")
    return int(value)


def _check_discrete(act_shape: Shape, who: str) -> int:
    """The number of actions of a Discrete action shape, or raise: the wrapper takes no-op steps."""
    if isinstance(act_shape, bool) or not isinstance(act_shape, (int, np.integer)):
        raise ShapeRuleError(
            f"{who} takes integer no-op actions, so it needs a Discrete action space; got action shape {act_shape!r}"
        )
    return int(act_shape)


def _without_seed(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Reset arguments for a follow-up reset: the same options, but never re-seeding (that would replay)."""
    return {key: value for key, value in kwargs.items() if key != "seed"}


def _shapes(obs: spaces.Space[Any], act: spaces.Space[Any], rew: spaces.Space[Any]) -> ShapeTriple:
    """The DI-engine-style shapes of three spaces, for a space rule to check with its shape rule."""
    return space_to_shape(obs), space_to_shape(act), space_to_shape(rew)


def _action_meanings(env: gym.Env[Any, Any]) -> list[str] | None:
    """The innermost env's action meanings (ALE's ``get_action_meanings``), or None if it has none."""
    get_meanings = getattr(env.unwrapped, "get_action_meanings", None)
    return list(get_meanings()) if callable(get_meanings) else None


class _LifeCounter:
    """Reads the number of lives: from the ALE emulator when there is one, else from ``info['lives']``."""

    def __init__(self, env: gym.Env[Any, Any], who: str) -> None:
        self._ale = getattr(env.unwrapped, "ale", None)
        self._who = who

    def read(self, info: dict[str, Any]) -> int:
        if self._ale is not None:
            return int(self._ale.lives())
        if "lives" not in info:
            raise ConfigError(
                f"{self._who} needs an ALE env or an env that reports info['lives']; "
                f"got info with keys {sorted(map(str, info))}"
            )
        return int(info["lives"])


def _zero_reward(reward_space: spaces.Space[Any]) -> Any:
    """The start of a reward sum: 0.0 for ``(1,)`` rewards, a float32 zero array for vector rewards."""
    shape = reward_space.shape
    if shape is None or tuple(shape) == (1,):
        return 0.0
    return np.zeros(shape, dtype=np.float32)


def _summed_reward_space(rew_space: spaces.Space[Any], times: int) -> spaces.Space[Any]:
    """The space of a sum of 1 to ``times`` rewards from ``rew_space``: Box bounds widen by up to ``times``."""
    if not isinstance(rew_space, spaces.Box) or times == 1:
        return rew_space
    low = np.minimum(rew_space.low, rew_space.low * times)
    high = np.maximum(rew_space.high, rew_space.high * times)
    return spaces.Box(low, high, rew_space.shape, rew_space.dtype)  # type: ignore[arg-type]


def _repeat_action(
    env: gym.Env[Any, Any],
    action: Any,
    times: int,
    total: Any,
    cumulative: bool = True,
    keep: Callable[[int, Any], None] | None = None,
) -> tuple[StepResult, int]:
    """Step ``env`` with ``action`` up to ``times`` times, stopping when the episode ends.

    Returns the last step (its reward replaced by ``total`` plus every reward when ``cumulative``)
    and the number of steps taken. ``keep(i, obs)`` sees every observation on the way.
    """
    steps = 0
    obs: Any = None
    reward: Any = 0.0
    terminated = truncated = False
    info: dict[str, Any] = {}
    while steps < times:
        obs, reward, terminated, truncated, info = env.step(action)
        if keep is not None:
            keep(steps, obs)
        steps += 1
        if cumulative:
            total += reward
        if terminated or truncated:
            break
    return (obs, total if cumulative else reward, terminated, truncated, info), steps


# ---------------------------------------------------------------------------------------------
# noop_reset
# ---------------------------------------------------------------------------------------------


@register_wrapper("noop_reset")
class NoopResetWrapper(DingWrapper):
    """On reset, take a random number (1 to ``noop_max``) of ``noop_action`` steps; shapes unchanged.

    The count is drawn from ``self.np_random``, so it is reproducible under ``reset(seed=...)``. If
    the episode ends during the no-ops the env is reset again (without re-seeding) and the no-ops
    continue. Reset returns the latest observation and the info of the latest inner call. Needs a
    Discrete action space; on an ALE env ``noop_action`` must mean ``NOOP``.

    Example:
        >>> NoopResetWrapper.new_shape((210, 160, 3), 6, (1,), noop_max=10)
        ((210, 160, 3), 6, (1,))
    """

    def __init__(self, env: gym.Env[Any, Any], noop_max: int = 30, noop_action: int = 0) -> None:
        super().__init__(env)
        self._declare_spaces(noop_max=noop_max, noop_action=noop_action)
        self.noop_max = int(noop_max)
        self.noop_action = int(noop_action)
        if not self.action_space.contains(self.noop_action):
            raise ConfigError(f"noop_reset: noop_action {noop_action!r} is not in the action space {self.action_space}")
        meanings = _action_meanings(env)
        if meanings is not None and meanings[self.noop_action] != "NOOP":
            raise ConfigError(
                f"noop_reset: action {noop_action} of this game means {meanings[self.noop_action]!r}, not 'NOOP'"
            )

    @staticmethod
    def new_shape(
        obs_shape: Shape, act_shape: Shape, rew_shape: Shape, noop_max: int = 30, noop_action: int = 0
    ) -> ShapeTriple:
        _check_positive(noop_max, "noop_max", "noop_reset")
        if isinstance(noop_action, bool) or not isinstance(noop_action, (int, np.integer)):
            raise ConfigError(f"noop_reset: noop_action must be an int; got {noop_action!r}")
        _check_discrete(act_shape, "noop_reset")
        return obs_shape, act_shape, rew_shape

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        noops = int(self.np_random.integers(1, self.noop_max + 1))
        for _ in range(noops):
            obs, _, terminated, truncated, info = self.env.step(self.noop_action)
            if terminated or truncated:
                obs, info = self.env.reset(**_without_seed(kwargs))
        return obs, info


# ---------------------------------------------------------------------------------------------
# max_and_skip
# ---------------------------------------------------------------------------------------------


@register_wrapper("max_and_skip")
class MaxAndSkipWrapper(DingWrapper):
    """Repeat each action ``skip`` times, sum the rewards and return the element-wise max of the last two frames.

    Stops early when the episode ends; the max then covers the frames seen in this step only (a
    single frame is returned as is). Needs an array (Box) observation; shapes, dtype and bounds are
    unchanged.

    Example:
        >>> MaxAndSkipWrapper.new_shape((210, 160, 3), 6, (1,), skip=2)
        ((210, 160, 3), 6, (1,))
    """

    def __init__(self, env: gym.Env[Any, Any], skip: int = 4) -> None:
        super().__init__(env)
        self._declare_spaces(skip=skip)
        self.skip = int(skip)
        space = self.observation_space
        self._frames = np.zeros((2, *space.shape), dtype=space.dtype)  # type: ignore[misc]

    @staticmethod
    def new_shape(obs_shape: Shape, act_shape: Shape, rew_shape: Shape, skip: int = 4) -> ShapeTriple:
        _check_positive(skip, "skip", "max_and_skip")
        if not is_flat_shape(obs_shape):
            raise ShapeRuleError(
                f"max_and_skip takes the max of frames, so it needs an array (Box) observation; got {obs_shape!r}"
            )
        return obs_shape, act_shape, rew_shape

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any], skip: int = 4
    ) -> SpaceTriple:
        MaxAndSkipWrapper.new_shape(*_shapes(obs_space, act_space, rew_space), skip=skip)
        return obs_space, act_space, _summed_reward_space(rew_space, skip)

    def _keep(self, index: int, obs: Any) -> None:
        np.copyto(self._frames[index & 1], obs)

    def step(self, action: Any) -> StepResult:
        (_, reward, terminated, truncated, info), steps = _repeat_action(
            self.env, action, self.skip, _zero_reward(self.reward_space), keep=self._keep
        )
        frame = self._frames[0].copy() if steps == 1 else np.maximum(self._frames[0], self._frames[1])
        return frame, reward, terminated, truncated, info


# ---------------------------------------------------------------------------------------------
# episodic_life
# ---------------------------------------------------------------------------------------------


@register_wrapper("episodic_life")
class EpisodicLifeWrapper(DingWrapper):
    """Make the loss of a life end the episode, but only restart the game when it is really over; shapes unchanged.

    ``step`` returns ``terminated=True`` when a life is lost and adds ``info['real_done']`` (True
    only when the game itself ended or was truncated). ``reset`` after a lost life does not restart
    the game: it takes one no-op step (action 0) and carries on from there — unless that step ends
    the game, or a ``seed`` is passed, which both restart it. Needs a Discrete action space.

    Example:
        >>> EpisodicLifeWrapper.new_shape((210, 160, 3), 4, (1,))
        ((210, 160, 3), 4, (1,))
    """

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self._declare_spaces()
        self._counter = _LifeCounter(env, "episodic_life")
        self._lives = 0
        self._real_done = True

    @staticmethod
    def new_shape(obs_shape: Shape, act_shape: Shape, rew_shape: Shape) -> ShapeTriple:
        _check_discrete(act_shape, "episodic_life")
        return obs_shape, act_shape, rew_shape

    def step(self, action: Any) -> StepResult:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._real_done = bool(terminated or truncated)
        lives = self._counter.read(info)
        if 0 < lives < self._lives:
            terminated = True
        self._lives = lives
        info["real_done"] = self._real_done
        return obs, reward, terminated, truncated, info

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        if self._real_done or kwargs.get("seed") is not None:
            obs, info = self.env.reset(**kwargs)
        else:
            obs, _, terminated, truncated, info = self.env.step(0)
            if terminated or truncated:
                obs, info = self.env.reset(**kwargs)
        self._real_done = False
        self._lives = self._counter.read(info)
        return obs, info


# ---------------------------------------------------------------------------------------------
# fire_reset
# ---------------------------------------------------------------------------------------------


@register_wrapper("fire_reset")
class FireResetWrapper(DingWrapper):
    """After reset, press FIRE (then action 2) in games that wait for it; shapes unchanged.

    Applies when the game's action meanings (``env.unwrapped.get_action_meanings()``) have ``FIRE``
    at index 1. Envs without FIRE there, or without action meanings at all, reset unchanged, so a
    preset may always include this wrapper. If one of the start actions ends the episode, the env
    is reset again (without re-seeding) and the next start action follows.

    Example:
        >>> from gymnasium.envs.classic_control import CartPoleEnv
        >>> env = FireResetWrapper(CartPoleEnv())
        >>> env.start_actions
        ()
    """

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self._declare_spaces()
        meanings = _action_meanings(env)
        if meanings is not None and len(meanings) > 1 and meanings[1] == "FIRE":
            self.start_actions: tuple[int, ...] = (1, 2) if len(meanings) > 2 else (1,)
        else:
            self.start_actions = ()

    @staticmethod
    def new_shape(obs_shape: Shape, act_shape: Shape, rew_shape: Shape) -> ShapeTriple:
        return obs_shape, act_shape, rew_shape

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        for action in self.start_actions:
            obs, _, terminated, truncated, info = self.env.step(action)
            if terminated or truncated:
                obs, info = self.env.reset(**_without_seed(kwargs))
        return obs, info


# ---------------------------------------------------------------------------------------------
# terminal_on_life_loss
# ---------------------------------------------------------------------------------------------


@register_wrapper("terminal_on_life_loss")
class TerminalOnLifeLossWrapper(DingWrapper):
    """Flag a lost life in the step info without ending the episode; shapes unchanged.

    Each step sets ``info['life_lost']`` (bool) and ``info['discount']`` (0.0 when a life was lost,
    else 1.0), so a learner can stop bootstrapping across a lost life while the episode goes on.

    Example:
        >>> TerminalOnLifeLossWrapper.new_shape((210, 160, 3), 4, (1,))
        ((210, 160, 3), 4, (1,))
    """

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self._declare_spaces()
        self._counter = _LifeCounter(env, "terminal_on_life_loss")
        self._lives = 0

    @staticmethod
    def new_shape(obs_shape: Shape, act_shape: Shape, rew_shape: Shape) -> ShapeTriple:
        return obs_shape, act_shape, rew_shape

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._lives = self._counter.read(info)
        return obs, info

    def step(self, action: Any) -> StepResult:
        obs, reward, terminated, truncated, info = self.env.step(action)
        lives = self._counter.read(info)
        life_lost = lives < self._lives
        self._lives = lives
        info["life_lost"] = life_lost
        info["discount"] = 0.0 if life_lost else 1.0
        return obs, reward, terminated, truncated, info


# ---------------------------------------------------------------------------------------------
# ram
# ---------------------------------------------------------------------------------------------


def _ram_shape(obs_shape: Shape, render: bool) -> tuple[int, int, int]:
    """``(n,)`` → ``(n, 1, 1)``; an image shape → ``(128, 1, 1)`` (the ALE RAM)."""
    if not isinstance(render, bool):
        raise ConfigError(f"ram render must be a bool; got {render!r}")
    if is_flat_shape(obs_shape) and len(obs_shape) == 1:  # type: ignore[arg-type]
        return (int(obs_shape[0]), 1, 1)  # type: ignore[index]
    if is_flat_shape(obs_shape) and len(obs_shape) in (2, 3):  # type: ignore[arg-type]
        return (_ALE_RAM_SIZE, 1, 1)
    raise ShapeRuleError(
        f"ram needs a RAM vector (n,) or an ALE image observation of shape (H, W), (H, W, C) or (C, H, W); "
        f"got {obs_shape!r}"
    )


@register_wrapper("ram")
class RamWrapper(DingObservationWrapper):
    """Observe the ALE RAM as a float32 ``(n, 1, 1)`` array: ``(n,)`` → ``(n, 1, 1)``, images → ``(128, 1, 1)``.

    A 1-D observation (e.g. an ALE env made with ``obs_type="ram"``) is reshaped and keeps its
    bounds (0..255 for the RAM); for any other observation the RAM is read from
    ``env.unwrapped.ale.getRAM()`` with bounds 0..255, which needs an ALE env.
    ``render`` (a bool) is accepted for DI-engine's signature ``RamWrapper(env, render=False)``
    and, as there, does nothing: rendering is the env's ``render_mode``.

    Example:
        >>> from gymnasium.spaces import Box, Discrete
        >>> RamWrapper.new_space(Box(0, 255, (210, 160, 3), np.uint8), Discrete(6), None)[0]
        Box(0.0, 255.0, (128, 1, 1), float32)
    """

    def __init__(self, env: gym.Env[Any, Any], render: bool = False) -> None:
        super().__init__(env)
        self._declare_spaces(render=render)
        self._shape: tuple[int, ...] = self.observation_space.shape  # type: ignore[assignment]
        self._ale: Any = None
        if len(env.observation_space.shape or ()) != 1:
            ale = getattr(env.unwrapped, "ale", None)
            if ale is None:
                raise ConfigError(
                    "ram reads the RAM of an ALE env (env.unwrapped.ale) unless the observation is already a "
                    f"1-D vector; got the non-ALE env {env.unwrapped!r} with observation space {env.observation_space}"
                )
            if int(ale.getRAMSize()) != _ALE_RAM_SIZE:
                raise ConfigError(f"ram expects an ALE RAM of {_ALE_RAM_SIZE} bytes; got {ale.getRAMSize()}")
            self._ale = ale

    @staticmethod
    def new_shape(obs_shape: Shape, act_shape: Shape, rew_shape: Shape, render: bool = False) -> ShapeTriple:
        return _ram_shape(obs_shape, render), act_shape, rew_shape

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any], render: bool = False
    ) -> SpaceTriple:
        if not isinstance(obs_space, spaces.Box):
            raise TypeError(f"ram needs a Box observation (a RAM vector or an ALE image); got {obs_space}")
        shape = _ram_shape(obs_space.shape, render)
        if len(obs_space.shape) == 1:
            low = obs_space.low.astype(np.float32).reshape(shape)
            high = obs_space.high.astype(np.float32).reshape(shape)
            return spaces.Box(low, high, shape, np.float32), act_space, rew_space
        return spaces.Box(0.0, 255.0, shape, np.float32), act_space, rew_space

    def observation(self, obs: Any) -> np.ndarray:
        ram = obs if self._ale is None else self._ale.getRAM()
        return np.asarray(ram, dtype=np.float32).reshape(self._shape)


# ---------------------------------------------------------------------------------------------
# frame_skip and action_repeat
# ---------------------------------------------------------------------------------------------


@register_wrapper("frame_skip")
class FrameSkipWrapper(DingWrapper):
    """Repeat each action ``skip`` times and return the last observation; shapes unchanged.

    The reward is the sum over the repeated steps (element-wise for vector rewards) when
    ``cumulative_reward``, else the last step's reward. Stops early when the episode ends.

    Example:
        >>> FrameSkipWrapper.new_shape((3,), 2, (3,), skip=2, cumulative_reward=False)
        ((3,), 2, (3,))
    """

    def __init__(self, env: gym.Env[Any, Any], skip: int = 4, cumulative_reward: bool = True) -> None:
        super().__init__(env)
        self._declare_spaces(skip=skip, cumulative_reward=cumulative_reward)
        self.skip = int(skip)
        self.cumulative_reward = bool(cumulative_reward)

    @staticmethod
    def new_shape(
        obs_shape: Shape, act_shape: Shape, rew_shape: Shape, skip: int = 4, cumulative_reward: bool = True
    ) -> ShapeTriple:
        _check_positive(skip, "skip", "frame_skip")
        return obs_shape, act_shape, rew_shape

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        skip: int = 4,
        cumulative_reward: bool = True,
    ) -> SpaceTriple:
        FrameSkipWrapper.new_shape(
            *_shapes(obs_space, act_space, rew_space), skip=skip, cumulative_reward=cumulative_reward
        )
        return obs_space, act_space, _summed_reward_space(rew_space, skip) if cumulative_reward else rew_space

    def step(self, action: Any) -> StepResult:
        total = _zero_reward(self.reward_space) if self.cumulative_reward else None
        result, _ = _repeat_action(self.env, action, self.skip, total, cumulative=self.cumulative_reward)
        return result


@register_wrapper("action_repeat")
class ActionRepeatWrapper(DingWrapper):
    """Repeat each action ``action_repeat`` times, summing the rewards; shapes unchanged.

    Returns the last observation; stops early when the episode ends.

    Example:
        >>> ActionRepeatWrapper.new_shape((4,), 2, (1,), action_repeat=3)
        ((4,), 2, (1,))
    """

    def __init__(self, env: gym.Env[Any, Any], action_repeat: int = 1) -> None:
        super().__init__(env)
        self._declare_spaces(action_repeat=action_repeat)
        self.action_repeat = int(action_repeat)

    @staticmethod
    def new_shape(obs_shape: Shape, act_shape: Shape, rew_shape: Shape, action_repeat: int = 1) -> ShapeTriple:
        _check_positive(action_repeat, "action_repeat", "action_repeat")
        return obs_shape, act_shape, rew_shape

    @staticmethod
    def new_space(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any], action_repeat: int = 1
    ) -> SpaceTriple:
        ActionRepeatWrapper.new_shape(*_shapes(obs_space, act_space, rew_space), action_repeat=action_repeat)
        return obs_space, act_space, _summed_reward_space(rew_space, action_repeat)

    def step(self, action: Any) -> StepResult:
        result, _ = _repeat_action(self.env, action, self.action_repeat, _zero_reward(self.reward_space))
        return result
