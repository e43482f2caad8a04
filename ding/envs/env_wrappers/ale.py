"""Skipping frames on an ALE emulator directly, as stepping its gymnasium env frame by frame would.

A frame-skipping wrapper right above an ALE env (``frameskip=1``) would step the env ``skip`` times
per agent step, and every one of those steps copies the screen out of the emulator and builds an
info dict. :class:`AleSkip` plays the same frames with ``ale.act`` and reads the screen only for
the frames the wrapper keeps, into preallocated buffers; actions (the game's action set), sticky
actions (ALE's own), rewards, terminations, truncations and the info of the last frame are those
the env would give. It is used only where nothing in between can tell: :func:`direct_ale_env`
checks every wrapper between the skipping wrapper and the emulator.
"""

from __future__ import annotations

import sys
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.wrappers import OrderEnforcing, PassiveEnvChecker

_SCREENS = ("rgb", "grayscale")
_CHECKING_WRAPPERS = (OrderEnforcing, PassiveEnvChecker)


def direct_ale_env(env: gym.Env[Any, Any]) -> Any | None:
    """The ALE env under ``env`` if stepping ``env`` is stepping it one frame at a time, else None.

    That is: the innermost env is ale-py's ``AtariEnv`` with ``frameskip=1``, discrete actions, a
    screen observation (RGB or gray) without sound, and every wrapper on the way passes ``step``
    through unchanged (it does not override ``gym.Wrapper.step``) or only checks call order
    (gymnasium's ``OrderEnforcing`` and ``PassiveEnvChecker``, which :class:`AleSkip`'s user lets
    run on the first step).

    >>> from gymnasium.envs.classic_control import CartPoleEnv
    >>> direct_ale_env(CartPoleEnv()) is None
    True
    """
    ale_module = sys.modules.get("ale_py.env")
    inner = env.unwrapped
    if ale_module is None or type(inner) is not getattr(ale_module, "AtariEnv", None):
        return None
    layer: Any = env
    while layer is not inner:
        if not isinstance(layer, gym.Wrapper):
            return None
        if type(layer).step is not gym.Wrapper.step and not isinstance(layer, _CHECKING_WRAPPERS):
            return None
        layer = layer.env
    plain = (
        getattr(inner, "_frameskip", None) == 1
        and not getattr(inner, "continuous", True)
        and getattr(inner, "_obs_type", None) in _SCREENS
        and not getattr(inner, "sound_obs", True)
        and hasattr(inner, "_action_set")
    )
    return inner if plain else None


class AleSkip:
    """Play ``skip`` frames of one action on an ALE env; keep the screens of the last two.

    :meth:`step` returns the screen of the last frame played (a new array) and, when all ``skip``
    frames were played, the element-wise max of the last two (``skip >= 2``); the rewards of each
    frame; ``terminated``, ``truncated`` and the info of the last frame, as the env reports them.
    """

    def __init__(self, ale_env: Any, skip: int) -> None:
        self._ale = ale_env.ale
        self._action_set = ale_env._action_set
        self._skip = skip
        gray = ale_env._obs_type == "grayscale"
        shape = ale_env.observation_space.shape
        self._fetch = self._ale.getScreenGrayscale if gray else self._ale.getScreenRGB
        self._before_last = np.zeros(shape, np.uint8)
        self._last = np.zeros(shape, np.uint8)

    def step(self, action: Any) -> tuple[np.ndarray, list[int], bool, bool, dict[str, Any]]:
        ale, frame_action, last = self._ale, self._action_set[action], self._skip - 1
        rewards: list[int] = []
        terminated = truncated = False
        i = 0
        for i in range(self._skip):
            rewards.append(ale.act(frame_action, 1.0))
            if ale.game_over():  # terminal or truncated; told apart below, as the env does
                terminated = ale.game_over(with_truncation=False)
                truncated = ale.game_truncated()
                break
            if i == last - 1:
                self._fetch(self._before_last)
        self._fetch(self._last)
        frame = np.maximum(self._before_last, self._last) if i == last and i > 0 else self._last.copy()
        info = {
            "lives": ale.lives(),
            "episode_frame_number": ale.getEpisodeFrameNumber(),
            "frame_number": ale.getFrameNumber(),
        }
        return frame, rewards, bool(terminated), bool(truncated), info
