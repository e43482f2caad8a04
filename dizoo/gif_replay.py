"""DI-engine's ``save_replay_gif`` / ``replay_path_gif`` keys: each episode saved as an animated GIF.

An env with these keys builds its simulator with ``render_mode='rgb_array'`` when ``save_replay_gif`` is True and
wraps it in :class:`GifReplayWrapper`, which writes ``<replay_path_gif>/<env_id>_episode_<n>.gif`` at the end of
every episode (DI-engine's file names; ``n`` counts up from the first number not taken in that directory). The
GIF holds the frame after reset and one per step, at 20 frames a second. ``enable_save_replay`` (mp4) is separate
and works alongside.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from ding.errors import ConfigError
from ding.utils.accepts import optional
from ding.utils.video_files import move_unclobbered, temporary_path
from dizoo.flags import bool_flag

GIF_REPLAY_CONFIG: dict[str, Any] = {
    "save_replay_gif": False,
    "replay_path_gif": optional(str, note="a directory path for GIF replays"),
}
"""The config keys (and defaults) of envs that save GIF replays."""

GIF_FPS = 20


def gif_replay_dir(cfg: Mapping[str, Any], env_name: str) -> str | None:
    """The directory GIFs go to, or None when ``save_replay_gif`` is off; the two keys are checked together.

    >>> gif_replay_dir({'save_replay_gif': True, 'replay_path_gif': '/tmp/gifs'}, 'mujoco')
    '/tmp/gifs'
    >>> gif_replay_dir({'save_replay_gif': True}, 'mujoco')
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: mujoco: save_replay_gif=True needs replay_path_gif, the directory the GIFs are written to
    """
    save = bool_flag(cfg, "save_replay_gif", env_name)
    path = cfg.get("replay_path_gif")
    if path is not None and (not isinstance(path, (str, os.PathLike)) or not str(path)):
        raise ConfigError(f"{env_name}: replay_path_gif must be a directory path or None, got {path!r}")
    if save and path is None:
        raise ConfigError(
            f"{env_name}: save_replay_gif=True needs replay_path_gif, the directory the GIFs are written to"
        )
    if not save and path is not None:
        raise ConfigError(
            f"{env_name}: replay_path_gif={str(path)!r} is set but save_replay_gif is False; set save_replay_gif=True "
            "to write a GIF of each episode there (or use enable_save_replay(dir) for mp4 videos)"
        )
    return str(path) if save else None


class GifReplayWrapper(gym.Wrapper[Any, Any, Any, Any]):
    """Collect the rendered frames of each episode and write them as ``<directory>/<name>_episode_<n>.gif``.

    The env must render RGB arrays (``render_mode='rgb_array'``); spaces are unchanged.
    """

    def __init__(self, env: gym.Env[Any, Any], directory: str, name: str) -> None:
        super().__init__(env)
        if env.render_mode != "rgb_array":
            raise ValueError(f"GifReplayWrapper needs render_mode='rgb_array', got {env.render_mode!r}")
        self.directory = str(directory)
        self.name = str(name).replace("/", "_")
        self._episode = 0
        self._frames: list[np.ndarray] = []
        self.last_path: str | None = None

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._frames = [self._frame()]
        return obs, info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._frames.append(self._frame())
        if terminated or truncated:
            self.last_path = self._write()
        return obs, reward, terminated, truncated, info

    def _frame(self) -> np.ndarray:
        frame = np.asarray(self.env.render())
        if frame.ndim != 3 or frame.shape[-1] != 3:
            raise ValueError(f"GIF frames must be RGB arrays of shape (H, W, 3); render() gave shape {frame.shape}")
        return frame.astype(np.uint8, copy=False)

    def _write(self) -> str:
        import imageio.v3 as iio

        os.makedirs(self.directory, exist_ok=True)
        written = temporary_path(self.directory, ".gif")
        iio.imwrite(written, np.stack(self._frames), duration=1000 / GIF_FPS, loop=0)
        self._frames = []
        path, number = move_unclobbered(written, self.directory, self._file_name, self._episode)
        self._episode = number + 1
        return path

    def _file_name(self, number: int) -> str:
        return f"{self.name}_episode_{number}.gif"


def with_gif_replay(env: gym.Env[Any, Any], cfg: Mapping[str, Any], env_name: str, file_name: str) -> gym.Env[Any, Any]:
    """``env`` in a :class:`GifReplayWrapper` writing ``<file_name>_episode_<n>.gif`` when ``cfg`` asks for GIFs.

    The env must then have been built with ``render_mode='rgb_array'`` (see :func:`gif_replay_dir`).
    """
    directory = gif_replay_dir(cfg, env_name)
    if directory is None:
        return env
    return GifReplayWrapper(env, directory, file_name)
