"""Write rendered episodes to video files, never replacing a file that is already there.

The files are H.264 mp4 (yuv420p, written through PyAV), the format browsers, players and imageio's ``pyav`` and
``ffmpeg`` plugins read.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np


def temporary_path(directory: str, extension: str) -> str:
    """A fresh hidden file name in ``directory`` that keeps ``extension`` (writers pick the format from it).

    >>> os.path.basename(temporary_path('videos', '.mp4')).startswith('.writing-')
    True
    """
    return os.path.join(directory, f".writing-{uuid.uuid4().hex}{extension}")


def move_unclobbered(source: str, directory: str, name: Callable[[int], str], start: int = 0) -> tuple[str, int]:
    """Move ``source`` to ``directory/name(n)`` for the first ``n >= start`` whose file does not exist yet.

    An existing file is never replaced, even by a writer in another process at the same moment (the target
    is claimed with a hard link, which fails when the name is taken). Returns the new path and ``n``.

    Example:
        >>> import tempfile
        >>> directory = tempfile.mkdtemp()
        >>> for text in ('first', 'second'):
        ...     source = os.path.join(directory, 'new.txt')
        ...     with open(source, 'w') as file:
        ...         _ = file.write(text)
        ...     path, n = move_unclobbered(source, directory, lambda n: f'episode-{n}.txt')
        ...     print(os.path.basename(path), n)
        episode-0.txt 0
        episode-1.txt 1
    """
    os.makedirs(directory, exist_ok=True)
    n = start
    while True:
        target = os.path.join(directory, name(n))
        try:
            os.link(source, target)
        except FileExistsError:
            n += 1
            continue
        except OSError:  # a file system without hard links: check, then move (not atomic across processes)
            if os.path.exists(target):
                n += 1
                continue
            shutil.move(source, target)
            return target, n
        os.unlink(source)
        return target, n


class EpisodeVideoRecorder:
    """Collect RGB frames of one episode and write them as ``<dir>/<prefix>-episode-<n>.mp4``.

    ``n`` counts up from 0, skipping numbers whose file exists, so recorders that share a directory (or a
    re-run into it) never overwrite each other's videos.

    Example:
        >>> import tempfile
        >>> rec = EpisodeVideoRecorder(tempfile.mkdtemp(), fps=30)
        >>> for _ in range(3):
        ...     rec.add_frame(np.zeros((32, 48, 3), np.uint8))
        >>> path = rec.finish_episode()
        >>> os.path.basename(path), os.path.getsize(path) > 0
        ('replay-episode-0000.mp4', True)
    """

    def __init__(self, directory: str, prefix: str = "replay", fps: int = 30) -> None:
        self.directory = str(directory)
        self.prefix = prefix
        self.fps = int(fps)
        self.episode = 0
        self._frames: list[np.ndarray] = []

    def add_frame(self, frame: Any) -> None:
        arr = np.asarray(frame)
        if arr.ndim != 3 or arr.shape[-1] != 3:
            raise ValueError(f"replay frames must be RGB arrays of shape (H, W, 3), got shape {arr.shape}")
        self._frames.append(arr.astype(np.uint8, copy=False))

    def finish_episode(self) -> str | None:
        """Write the collected frames (if any) and return the file path."""
        if not self._frames:
            return None
        os.makedirs(self.directory, exist_ok=True)
        written = write_mp4(self._frames, temporary_path(self.directory, ".mp4"), self.fps)
        self._frames = []
        path, number = move_unclobbered(written, self.directory, self._name, self.episode)
        self.episode = number + 1
        return path

    def _name(self, number: int) -> str:
        return f"{self.prefix}-episode-{number:04d}.mp4"


def write_mp4(frames: list[np.ndarray], path: str, fps: int) -> str:
    """Write RGB ``frames`` (all of one size) to the H.264 mp4 file ``path`` and return it.

    yuv420p (what players read) needs an even width and height: a frame of odd size gets its last row or column
    repeated once.

    Example:
        >>> import tempfile, av
        >>> path = write_mp4([np.zeros((33, 48, 3), np.uint8)] * 3, os.path.join(tempfile.mkdtemp(), 'a.mp4'), 30)
        >>> with av.open(path) as video:
        ...     stream = video.streams.video[0]
        ...     print(stream.codec_context.name, stream.width, stream.height, stream.frames)
        h264 48 34 3
    """
    import av

    height, width = frames[0].shape[:2]
    pad = ((0, height % 2), (0, width % 2), (0, 0))
    with av.open(path, mode="w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=int(fps))
        stream.width, stream.height = width + width % 2, height + height % 2
        stream.pix_fmt = "yuv420p"
        for frame in frames:
            even = np.pad(frame, pad, mode="edge") if any(p[1] for p in pad) else frame
            container.mux(stream.encode(av.VideoFrame.from_ndarray(np.ascontiguousarray(even), format="rgb24")))
        container.mux(stream.encode(None))
    return path
