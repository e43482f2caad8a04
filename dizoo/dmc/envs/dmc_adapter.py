"""A dm_control suite task as a gymnasium env, with spaces known before any reset.

State observations are the task's observation arrays flattened and concatenated in the order of its
observation spec (float64, as dm_control produces them); pixel observations are camera frames
(uint8, ``(H, W, 3)`` or with ``channels_first`` ``(3, H, W)``). Actions are float32 boxes with the
task's bounds. ``frame_skip`` repeats each action and sums the rewards.

:func:`dmc_spaces` states the spaces without building the task: pixel spaces follow from the image
settings, state spaces from :data:`DMC_STATE_SIZES` (the benchmark tasks), or else from loading the
task's model once (never stepped).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import mujoco
import numpy as np
from dm_control import suite
from gymnasium import spaces

from ding.errors import ConfigError, unknown_name_message

_INTEGRATION_STATE = int(mujoco.mjtState.mjSTATE_INTEGRATION)
"""What :meth:`DMCAdapter.get_state` takes of the physics: everything a step reads (warm start included)."""

DMC_STATE_SIZES: dict[tuple[str, str], tuple[int, int]] = {
    ("acrobot", "swingup"): (6, 1),
    ("acrobot", "swingup_sparse"): (6, 1),
    ("ball_in_cup", "catch"): (8, 2),
    ("cartpole", "balance"): (5, 1),
    ("cartpole", "balance_sparse"): (5, 1),
    ("cartpole", "swingup"): (5, 1),
    ("cartpole", "swingup_sparse"): (5, 1),
    ("cheetah", "run"): (17, 6),
    ("finger", "spin"): (9, 2),
    ("finger", "turn_easy"): (12, 2),
    ("finger", "turn_hard"): (12, 2),
    ("fish", "upright"): (21, 5),
    ("fish", "swim"): (24, 5),
    ("hopper", "stand"): (15, 4),
    ("hopper", "hop"): (15, 4),
    ("humanoid", "stand"): (67, 21),
    ("humanoid", "walk"): (67, 21),
    ("humanoid", "run"): (67, 21),
    ("manipulator", "bring_ball"): (44, 5),
    ("pendulum", "swingup"): (3, 1),
    ("point_mass", "easy"): (4, 2),
    ("reacher", "easy"): (6, 2),
    ("reacher", "hard"): (6, 2),
    ("swimmer", "swimmer6"): (25, 5),
    ("swimmer", "swimmer15"): (61, 14),
    ("walker", "stand"): (24, 6),
    ("walker", "walk"): (24, 6),
    ("walker", "run"): (24, 6),
}
"""``(domain, task)`` → (flat observation size, action size) for dm_control's benchmark tasks, whose actions all
lie in [-1, 1]."""


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ConfigError(f"{name} must be a positive int, got {value!r}")
    return int(value)


SUITE_TASKS: dict[str, list[str]] = {}
for _domain, _task in suite.ALL_TASKS:
    SUITE_TASKS.setdefault(_domain, []).append(_task)


def check_task(domain_name: str, task_name: str) -> None:
    """Raise ConfigError unless dm_control's suite has the task, naming the known domains or tasks.

    >>> check_task('cartpole', 'swing_up')
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: unknown dm_control task of domain 'cartpole' 'swing_up'; known: balance, \
balance_sparse, swingup, swingup_sparse, three_poles, two_poles. Did you mean 'swingup'?
    """
    if domain_name not in SUITE_TASKS:
        raise ConfigError(unknown_name_message("dm_control domain", domain_name, SUITE_TASKS))
    tasks = SUITE_TASKS[domain_name]
    if task_name not in tasks:
        raise ConfigError(unknown_name_message(f"dm_control task of domain {domain_name!r}", task_name, tasks))


def pixel_space(height: int, width: int, channels_first: bool = True) -> spaces.Box:
    """The space of RGB camera frames.

    >>> pixel_space(84, 64)
    Box(0, 255, (3, 84, 64), uint8)
    """
    height, width = _positive_int(height, "height"), _positive_int(width, "width")
    shape = (3, height, width) if channels_first else (height, width, 3)
    return spaces.Box(0, 255, shape, np.uint8)


def state_space(size: int) -> spaces.Box:
    """The space of flattened state observations."""
    return spaces.Box(-np.inf, np.inf, (size,), np.float64)


def action_space_from_spec(spec: Any) -> spaces.Box:
    """A float32 Box with the bounds of a dm_control ``BoundedArray`` action spec."""
    low = np.broadcast_to(spec.minimum, spec.shape).astype(np.float32)
    high = np.broadcast_to(spec.maximum, spec.shape).astype(np.float32)
    return spaces.Box(low, high, dtype=np.float32)


@functools.lru_cache(maxsize=32)
def _loaded_state_spaces(domain_name: str, task_name: str) -> tuple[spaces.Box, spaces.Box]:
    env = suite.load(domain_name, task_name)
    try:
        size = sum(int(np.prod(spec.shape)) for spec in env.observation_spec().values())
        return state_space(size), action_space_from_spec(env.action_spec())
    finally:
        env.close()


def dmc_spaces(
    domain_name: str,
    task_name: str,
    from_pixels: bool = False,
    height: int = 84,
    width: int = 84,
    channels_first: bool = True,
) -> tuple[spaces.Box, spaces.Box]:
    """``(observation_space, action_space)`` of :class:`DMCAdapter` with these settings, without building it.

    >>> dmc_spaces('cheetah', 'run')
    (Box(-inf, inf, (17,), float64), Box(-1.0, 1.0, (6,), float32))
    >>> dmc_spaces('cartpole', 'swingup', from_pixels=True, height=64, width=64, channels_first=False)[0]
    Box(0, 255, (64, 64, 3), uint8)
    """
    key = (domain_name, task_name)
    obs: spaces.Box[Any]
    action: spaces.Box[Any]
    if key in DMC_STATE_SIZES:
        obs_size, action_size = DMC_STATE_SIZES[key]
        obs, action = state_space(obs_size), spaces.Box(-1.0, 1.0, (action_size,), np.float32)
    else:
        check_task(domain_name, task_name)
        obs, action = _loaded_state_spaces(domain_name, task_name)
    if from_pixels:
        obs = pixel_space(height, width, channels_first)
    return obs, action


class DMCAdapter(gym.Env[np.ndarray, np.ndarray]):
    """A dm_control suite task behind gymnasium's API.

    Args:
        domain_name: the suite domain (``"cartpole"``, ``"cheetah"``, ...).
        task_name: a task of that domain (``"swingup"``, ``"run"``, ...).
        from_pixels: observe camera frames instead of the state vector.
        height: frame height (pixel observations and ``render``).
        width: frame width.
        camera_id: the camera rendered.
        frame_skip: physics control steps per ``step``; the rewards are summed, and an episode end stops early.
        channels_first: pixel observations as ``(3, H, W)`` instead of ``(H, W, 3)``.
        visualize_reward: tint rendered bodies by the reward (dm_control's option).
        task_kwargs: extra keyword arguments of the task (``random`` is set through ``reset(seed=...)``).
        render_mode: ``"rgb_array"`` or None.

    An episode ends when the task says so: ``terminated`` when its discount is 0, ``truncated`` at its time
    limit (1000 control steps for the suite tasks). ``info['discount']`` carries the discount.

    Example:
        >>> env = DMCAdapter('cartpole', 'swingup', frame_skip=2)
        >>> env.observation_space, env.action_space
        (Box(-inf, inf, (5,), float64), Box(-1.0, 1.0, (1,), float32))
        >>> obs, info = env.reset(seed=0)
        >>> obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        >>> obs.shape, terminated, truncated
        ((5,), False, False)
    """

    def __init__(
        self,
        domain_name: str,
        task_name: str,
        *,
        from_pixels: bool = False,
        height: int = 84,
        width: int = 84,
        camera_id: int = 0,
        frame_skip: int = 1,
        channels_first: bool = True,
        visualize_reward: bool = False,
        task_kwargs: Mapping[str, Any] | None = None,
        render_mode: str | None = None,
    ) -> None:
        check_task(domain_name, task_name)
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        if task_kwargs is not None and not isinstance(task_kwargs, Mapping):
            raise TypeError(f"task_kwargs must be a dict or None, got {type(task_kwargs).__name__}")
        self.domain_name, self.task_name = domain_name, task_name
        self.from_pixels = bool(from_pixels)
        self.height, self.width = _positive_int(height, "height"), _positive_int(width, "width")
        self.camera_id = int(camera_id)
        self.frame_skip = _positive_int(frame_skip, "frame_skip")
        self.channels_first = bool(channels_first)
        self.render_mode = render_mode
        try:
            self._env = suite.load(
                domain_name, task_name, task_kwargs=dict(task_kwargs or {}), visualize_reward=bool(visualize_reward)
            )
        except TypeError as err:  # a task keyword the task does not take
            if not task_kwargs:
                raise
            raise ConfigError(
                f"task_kwargs {dict(task_kwargs)!r}: dm_control's {domain_name}/{task_name} does not take them: {err}"
            ) from err
        cameras = int(self._env.physics.model.ncam)
        if not -1 <= self.camera_id < cameras:
            raise ConfigError(
                f"camera_id must be -1 (the free camera) or below {cameras} ({domain_name}'s cameras), "
                f"got {camera_id!r}"
            )
        self._obs_keys = list(self._env.observation_spec())
        self.action_space = action_space_from_spec(self._env.action_spec())
        if self.from_pixels:
            self.observation_space = pixel_space(self.height, self.width, self.channels_first)
        else:
            size = sum(int(np.prod(spec.shape)) for spec in self._env.observation_spec().values())
            self.observation_space = state_space(size)
        self._action_dtype = np.dtype(self._env.action_spec().dtype)
        fps = round(1.0 / (self._env.control_timestep() * self.frame_skip))
        self.metadata = {"render_modes": ["rgb_array"], "render_fps": fps}

    @property
    def dm_env(self) -> Any:
        """The wrapped dm_control environment."""
        return self._env

    def _observe(self, time_step: Any) -> np.ndarray:
        if self.from_pixels:
            frame = self.render()
            return np.ascontiguousarray(frame.transpose(2, 0, 1)) if self.channels_first else frame
        return np.concatenate([np.asarray(time_step.observation[key], np.float64).ravel() for key in self._obs_keys])

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if seed is not None:  # the task draws initial states (and any noise) from its own RandomState
            self._env.task.random.seed(int(self.np_random.integers(2**32)))
        return self._observe(self._env.reset()), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        act = np.asarray(action, dtype=self._action_dtype)
        if act.shape != self.action_space.shape:
            raise ValueError(f"action of shape {act.shape} does not fit {self.action_space}")
        reward = 0.0
        for _ in range(self.frame_skip):
            time_step = self._env.step(act)
            reward += float(time_step.reward or 0.0)
            if time_step.last():
                break
        discount = float(time_step.discount)
        terminated = bool(time_step.last() and discount == 0.0)
        truncated = bool(time_step.last() and not terminated)
        return self._observe(time_step), reward, terminated, truncated, {"discount": discount}

    def render(self) -> np.ndarray:  # type: ignore[override]
        """The camera frame, ``(height, width, 3)`` uint8 (whatever ``render_mode`` is)."""
        return self._env.physics.render(height=self.height, width=self.width, camera_id=self.camera_id)

    def get_state(self) -> dict[str, Any]:
        """The task's whole state: the physics' integration state (positions, velocities, activations, warm
        start, ...), the task's random stream, the episode's step count and this env's RNG."""
        env = self._env
        return {
            "physics": env.physics.get_state(sig=_INTEGRATION_STATE).copy(),
            "task_random": env.task.random.get_state(),
            # dm_control's Environment keeps its place in the episode in these two attributes (no public API)
            "step_count": env._step_count,
            "reset_next_step": env._reset_next_step,
            "np_random": self.np_random.bit_generator.state,
        }

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Restore a state from :meth:`get_state`; the derived quantities are recomputed from it."""
        env = self._env
        with env.physics.reset_context():
            env.physics.set_state(state["physics"], sig=_INTEGRATION_STATE)
        env.task.random.set_state(state["task_random"])
        env._step_count = state["step_count"]
        env._reset_next_step = state["reset_next_step"]
        self.np_random.bit_generator.state = state["np_random"]

    def close(self) -> None:
        """Release the physics and its rendering contexts; the env cannot be used afterwards."""
        self._env.close()
        self._env.physics.free()
        super().close()
