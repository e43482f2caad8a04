"""Where a run's videos go: evaluator episodes (``--video`` / ``env.replay_path``) and, apart, collector episodes.

``env.replay_path`` is DI-engine's key: in the serial pipelines and ``ding -m eval`` it names the directory for
the **evaluator's** episodes, one mp4 each (``eval_iter<N>_env<i>_ep<k>.mp4``, see :mod:`ding.worker.eval_video`).
The envs themselves are built without it, so collector envs record nothing unless asked: ``collector_video`` (the
command line's ``--collector-video DIR``) records their episodes into ``DIR/env<i>/replay-episode-<n>.mp4``.
A ``video`` argument overrides the key: a path, True for ``<exp_dir>/videos``, or False for none.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import pathlib

from easydict import EasyDict

from ding.envs.env_manager import BaseEnvManager
from ding.errors import ConfigError

VideoArg = str | os.PathLike[str] | bool | None
"""A ``video`` argument: a directory, True (``<exp_dir>/videos``), False (none) or None (``env.replay_path``)."""

DEFAULT_VIDEO_DIR = "videos"


@dataclasses.dataclass(frozen=True)
class VideoDirs:
    """The directories a run records videos into (None: no videos of that role)."""

    evaluator: pathlib.Path | None = None
    collector: pathlib.Path | None = None


def video_dirs(cfg: EasyDict, exp_dir: str | os.PathLike[str], video: VideoArg, collector_video: VideoArg) -> VideoDirs:
    """The run's :class:`VideoDirs` from the arguments and ``cfg.env.replay_path`` (the arguments win).

    >>> cfg = EasyDict({'env': {'replay_path': 'cfg_videos'}})
    >>> video_dirs(cfg, 'exp', None, None)
    VideoDirs(evaluator=PosixPath('cfg_videos'), collector=None)
    >>> video_dirs(cfg, 'exp', True, 'collect')
    VideoDirs(evaluator=PosixPath('exp/videos'), collector=PosixPath('collect'))
    >>> video_dirs(cfg, 'exp', False, None)
    VideoDirs(evaluator=None, collector=None)
    """
    from_config = cfg.env.get("replay_path")
    if from_config is not None and (not isinstance(from_config, (str, os.PathLike)) or not os.fspath(from_config)):
        raise ConfigError(f"env.replay_path must be a directory path or None, got {from_config!r}")
    evaluator = _directory(from_config if video is None else video, exp_dir, "video")
    collector = _directory(collector_video, exp_dir, "collector_video")
    if evaluator is not None and collector is not None and evaluator.resolve() == collector.resolve():
        raise ConfigError(
            f"the evaluator's and the collector's videos would share the directory {evaluator}; give them two"
        )
    return VideoDirs(evaluator, collector)


def _directory(value: VideoArg, exp_dir: str | os.PathLike[str], name: str) -> pathlib.Path | None:
    if value is None or value is False:
        return None
    if value is True:
        return pathlib.Path(exp_dir) / DEFAULT_VIDEO_DIR
    if isinstance(value, (str, os.PathLike)) and os.fspath(value):
        return pathlib.Path(value)
    raise ConfigError(f"{name} must be a directory path, True, False or None, got {value!r}")


def without_env_recording(cfg: EasyDict) -> EasyDict:
    """A copy of ``cfg`` whose envs are built without ``replay_path`` (the pipeline decides who records).

    >>> without_env_recording(EasyDict({'env': {'replay_path': 'videos'}})).env.replay_path is None
    True
    """
    if cfg.env.get("replay_path") is None:
        return cfg
    stripped = EasyDict(copy.deepcopy(dict(cfg)))
    stripped.env.replay_path = None
    return stripped


def record_collector(collector_env: BaseEnvManager | None, dirs: VideoDirs) -> None:
    """Let the collector's envs record every episode into ``dirs.collector/env<i>/`` when it is set."""
    if collector_env is not None and dirs.collector is not None:
        collector_env.enable_save_replay([str(dirs.collector / f"env{i}") for i in range(collector_env.env_num)])
