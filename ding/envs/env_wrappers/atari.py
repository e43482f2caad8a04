"""Atari-style episode handling: no-op starts, max over skipped frames, lives, FIRE to start, and the RAM.

Lives are read from the emulator (``env.unwrapped.ale.lives()``) when the innermost env is an ALE env,
and from ``info['lives']`` otherwise (read at reset: an env that reports neither fails there, naming
the wrapper). Wrappers that take a no-op step (``noop_reset``, ``episodic_life``) need a ``Discrete``
action space holding that action. ``max_and_skip`` sums rewards as :mod:`.repeat`'s wrappers do.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ding.envs.env_wrappers.ale import AleSkip, direct_ale_env
from ding.envs.env_wrappers.arguments import PositiveInt
from ding.envs.env_wrappers.base import (
    DingObservationWrapper,
    DingWrapper,
    SpaceTriple,
    episode_began,
    register_wrapper,
)
from ding.envs.env_wrappers.episode import EpisodeReturn
from ding.envs.env_wrappers.repeat import StepResult, summed_rewards
from ding.envs.env_wrappers.reward import RewardSum
from ding.envs.env_wrappers.rule import SpaceKindError, describe_space
from ding.envs.values.spaces import is_placeholder
from ding.errors import ConfigError, ShapeRuleError

_ALE_RAM_SIZE = 128
_FLOAT32_EXACT_INTS = 2**24
"""Integers up to this magnitude are exact in float32, so are sums of them that stay below it."""


# ---------------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------------


def _require_discrete(act_space: spaces.Space[Any], who: str) -> spaces.Discrete:
    """The action space if it is Discrete, or raise: the wrapper takes integer no-op actions."""
    if not isinstance(act_space, spaces.Discrete):
        raise SpaceKindError(
            f"{who} takes integer no-op actions, so it needs a Discrete action space; "
            f"got {describe_space(act_space, 'action')}"
        )
    return act_space


def _without_seed(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Reset arguments for a follow-up reset: the same options, but never re-seeding (that would replay)."""
    return {key: value for key, value in kwargs.items() if key != "seed"}


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

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        noop_max: PositiveInt = 30,
        noop_action: int = 0,
    ) -> SpaceTriple:
        discrete = _require_discrete(act_space, "noop_reset")
        if not is_placeholder(discrete) and not discrete.contains(np.int64(noop_action)):
            raise ConfigError(f"noop_reset: noop_action {noop_action!r} is not in the action space {discrete}")
        return obs_space, act_space, rew_space

    def _setup(self) -> None:
        meanings = _action_meanings(self.env)
        if meanings is not None:
            meaning = meanings[self.noop_action - int(self.action_space.start)]  # type: ignore[attr-defined]
            if meaning != "NOOP":
                raise ConfigError(f"noop_reset: action {self.noop_action} of this game means {meaning!r}, not 'NOOP'")

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

    The observation is the max of the skip's last two frames (``skip >= 2``). When the episode ends
    inside the skip, it is the frame it ended on (never a frame of an earlier step). Needs an array
    (Box) observation; shapes, dtype and bounds are unchanged.

    Right above an ALE env (``frameskip=1``; wrappers in between that only reset, such as
    ``noop_reset``, are fine) and with ``direct_emulator`` (the default), the frames are played on
    the emulator directly from the second step on, with the screen read only for the last two
    frames (:class:`~ding.envs.env_wrappers.ale.AleSkip`): the same observations, rewards, ends
    and infos as stepping the env, at a fraction of the cost (``emulator_direct`` tells whether
    it does). The max is taken over the screen the env delivers: RGB (then a ``warp_frame``
    converts the maxed frame to gray: max-then-gray) or ALE's grayscale (``obs_type='grayscale'``:
    gray-then-max, as gymnasium's ``AtariPreprocessing``).

    Example:
        >>> MaxAndSkipWrapper.new_shape((210, 160, 3), 6, (1,), skip=2)
        ((210, 160, 3), 6, (1,))
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        skip: PositiveInt = 4,
        direct_emulator: bool = True,
    ) -> SpaceTriple:
        if not isinstance(obs_space, spaces.Box):
            raise SpaceKindError(
                "max_and_skip takes the max of frames, so it needs an array (Box) observation; "
                f"got {describe_space(obs_space, 'observation')}"
            )
        return obs_space, act_space, summed_rewards(rew_space, skip, "max_and_skip")

    def _setup(self) -> None:
        space = self.observation_space
        assert isinstance(space, spaces.Box)  # the rule requires it
        self._dtype = space.dtype
        self._before_last = np.zeros(space.shape, dtype=space.dtype)
        self._total = RewardSum(self.reward_space.shape)  # type: ignore[arg-type]
        direct = self.direct_emulator and self.reward_space.shape == (1,)
        ale_env = direct_ale_env(self.env) if direct else None
        self._emulator = None if ale_env is None else AleSkip(ale_env, self.skip)
        self._direct = False  # from the second step on: the first one goes through the env and its checks

    @property
    def emulator_direct(self) -> bool:
        """True when steps play the frames on the ALE emulator directly (from the second step on)."""
        return self._direct

    def step(self, action: Any) -> StepResult:
        if self._direct:
            assert self._emulator is not None
            frame, rewards, terminated, truncated, info = self._emulator.step(action)
            return frame, self._sum(rewards), terminated, truncated, info
        result = self._step_env(action)
        self._direct = self._emulator is not None
        return result

    def _step_env(self, action: Any) -> StepResult:
        last = self.skip - 1
        obs: Any = None
        terminated = truncated = False
        info: dict[str, Any] = {}
        i = 0
        began = False
        for i in range(self.skip):
            obs, reward, terminated, truncated, info = self.env.step(action)
            self._total.add(reward)
            began = episode_began(info) is not None
            if terminated or truncated or began:  # an episode ended, or a new one began inside the step
                break
            if i == last - 1:
                self._before_last[...] = obs
        frame = np.array(obs, dtype=self._dtype)  # a new array, [0, ...]-safe for 0-d frames
        if i == last and i > 0 and not began:  # a new episode's first frame is not maxed with the last one's
            np.maximum(frame, self._before_last, out=frame)
        return frame, self._total.take(), bool(terminated), bool(truncated), info

    def _sum(self, rewards: list[int]) -> Any:
        """The float32 sum of the frames' integer rewards, as :class:`RewardSum` adds them up."""
        if sum(map(abs, rewards)) < _FLOAT32_EXACT_INTS:  # every partial sum is exact in float32
            return float(sum(rewards))
        for reward in rewards:
            self._total.add(float(reward))
        return self._total.take()


# ---------------------------------------------------------------------------------------------
# episodic_life
# ---------------------------------------------------------------------------------------------


@register_wrapper("episodic_life")
class EpisodicLifeWrapper(DingWrapper):
    """Make the loss of a life end the episode, but only restart the game when it is really over; shapes unchanged.

    ``step`` returns ``terminated=True`` when a life is lost and adds ``info['real_done']`` (True
    only when the game itself ended or was truncated). So that every episode end reports a return, a
    step that ends the episode at a lost life also carries ``info['eval_episode_return']``: the game's
    return so far (the rewards this wrapper has seen since the game started); the game's real end
    keeps the value the wrapper inside reports. ``reset`` after a lost life does not restart
    the game: it takes one no-op step (action 0) and carries on from there — unless that step ends
    the game, or a ``seed`` is passed, which both restart it. Needs a Discrete action space.

    Example:
        >>> EpisodicLifeWrapper.new_shape((210, 160, 3), 4, (1,))
        ((210, 160, 3), 4, (1,))
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any]
    ) -> SpaceTriple:
        discrete = _require_discrete(act_space, "episodic_life")
        if not is_placeholder(discrete) and not discrete.contains(np.int64(0)):
            raise ShapeRuleError(
                f"episodic_life continues a game after a lost life with the no-op action 0, which is not in the "
                f"action space {discrete}"
            )
        return obs_space, act_space, rew_space

    def _setup(self) -> None:
        self._counter = _LifeCounter(self.env, "episodic_life")
        self._lives = 0
        self._real_done = True
        self._game_return = EpisodeReturn(self.reward_space)

    def step(self, action: Any) -> StepResult:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._game_return.add(reward)
        self._real_done = bool(terminated or truncated)
        lives = self._counter.read(info)
        if 0 < lives < self._lives:
            terminated = True
            if not self._real_done and "eval_episode_return" not in info:
                info["eval_episode_return"] = self._game_return.value()
        self._lives = lives
        began = episode_began(info)
        if began is not None:  # a new game began inside the step: its lives and return start afresh
            self._lives = self._counter.read(dict(began))
            self._game_return.clear()
        info["real_done"] = self._real_done
        return obs, reward, terminated, truncated, info

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        if self._real_done or kwargs.get("seed") is not None:
            obs, info = self.env.reset(**kwargs)
            self._game_return.clear()
        else:
            obs, reward, terminated, truncated, info = self.env.step(0)
            self._game_return.add(reward)
            if terminated or truncated:
                obs, info = self.env.reset(**kwargs)
                self._game_return.clear()
            elif episode_began(info) is not None:  # the game ended inside the no-op step and a new one began
                self._game_return.clear()
        self._real_done = False
        began = episode_began(info)
        self._lives = self._counter.read(info if began is None else dict(began))
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

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any]
    ) -> SpaceTriple:
        return obs_space, act_space, rew_space

    def _setup(self) -> None:
        meanings = _action_meanings(self.env)
        if meanings is not None and len(meanings) > 1 and meanings[1] == "FIRE":
            self.start_actions: tuple[int, ...] = (1, 2) if len(meanings) > 2 else (1,)
        else:
            self.start_actions = ()

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

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any], act_space: spaces.Space[Any], rew_space: spaces.Space[Any]
    ) -> SpaceTriple:
        return obs_space, act_space, rew_space

    def _setup(self) -> None:
        self._counter = _LifeCounter(self.env, "terminal_on_life_loss")
        self._lives = 0

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._lives = self._counter.read(info)
        return obs, info

    def step(self, action: Any) -> StepResult:
        obs, reward, terminated, truncated, info = self.env.step(action)
        lives = self._counter.read(info)
        life_lost = lives < self._lives
        began = episode_began(info)
        self._lives = lives if began is None else self._counter.read(dict(began))  # a new game's lives
        info["life_lost"] = life_lost
        info["discount"] = 0.0 if life_lost else 1.0
        return obs, reward, terminated, truncated, info


# ---------------------------------------------------------------------------------------------
# ram
# ---------------------------------------------------------------------------------------------


@register_wrapper("ram")
class RamWrapper(DingObservationWrapper):
    """Observe the ALE RAM as a float32 ``(n, 1, 1)`` array: ``(n,)`` → ``(n, 1, 1)``, images → ``(128, 1, 1)``.

    A 1-D observation (e.g. an ALE env made with ``obs_type="ram"``) is reshaped and keeps its
    bounds (0..255 for the RAM); for any other observation the RAM is read from
    ``env.unwrapped.ale.getRAM()`` with bounds 0..255, which needs an ALE env (checked when the
    wrapper is built, since a shape cannot tell). ``render`` (a bool) is accepted for DI-engine's
    signature ``RamWrapper(env, render=False)`` and, as there, does nothing: rendering is the env's
    ``render_mode``.

    Example:
        >>> from gymnasium.spaces import Box, Discrete
        >>> RamWrapper.new_space(Box(0, 255, (210, 160, 3), np.uint8), Discrete(6), None)[0]
        Box(0.0, 255.0, (128, 1, 1), float32)
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        render: bool = False,
    ) -> SpaceTriple:
        needs = "a RAM vector (n,) or an ALE image of shape (H, W), (H, W, C) or (C, H, W)"
        if not isinstance(obs_space, spaces.Box) or len(obs_space.shape) not in (1, 2, 3):
            error = ShapeRuleError if isinstance(obs_space, spaces.Box) else SpaceKindError
            raise error(f"ram needs a Box observation: {needs}; got {describe_space(obs_space, 'observation')}")
        box = obs_space
        if len(box.shape) == 1:
            shape = (box.shape[0], 1, 1)
            low, high = box.low.astype(np.float32).reshape(shape), box.high.astype(np.float32).reshape(shape)
            return spaces.Box(low, high, shape, np.float32), act_space, rew_space
        return spaces.Box(0.0, 255.0, (_ALE_RAM_SIZE, 1, 1), np.float32), act_space, rew_space

    def _setup(self) -> None:
        self._shape: tuple[int, ...] = self.observation_space.shape  # type: ignore[assignment]
        self._ale: Any = None
        if len(self.env.observation_space.shape or ()) != 1:
            ale = getattr(self.env.unwrapped, "ale", None)
            if ale is None:
                raise ConfigError(
                    "ram reads the RAM of an ALE env (env.unwrapped.ale) unless the observation is already a "
                    f"1-D vector; got the non-ALE env {self.env.unwrapped!r} with observation space "
                    f"{self.env.observation_space}"
                )
            if int(ale.getRAMSize()) != _ALE_RAM_SIZE:
                raise ConfigError(f"ram expects an ALE RAM of {_ALE_RAM_SIZE} bytes; got {ale.getRAMSize()}")
            self._ale = ale

    def observation(self, obs: Any) -> np.ndarray:
        ram = obs if self._ale is None else self._ale.getRAM()
        return np.asarray(ram, dtype=np.float32).reshape(self._shape)
