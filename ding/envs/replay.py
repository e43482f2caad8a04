"""Write rendered episodes to video files (mp4 through OpenCV)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np


class EpisodeVideoRecorder:
    """Collect RGB frames of one episode and write them as ``<dir>/<prefix>-episode-<n>.mp4``.

    Example:
        >>> import tempfile
        >>> rec = EpisodeVideoRecorder(tempfile.mkdtemp(), fps=30)
        >>> for _ in range(3):
        ...     rec.add_frame(np.zeros((32, 48, 3), np.uint8))
        >>> os.path.getsize(rec.finish_episode()) > 0
        True
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
        import cv2

        os.makedirs(self.directory, exist_ok=True)
        path = os.path.join(self.directory, f"{self.prefix}-episode-{self.episode:04d}.mp4")
        height, width = self._frames[0].shape[:2]
        writer = cv2.VideoWriter(path, cv2.VideoWriter.fourcc(*"mp4v"), self.fps, (width, height))
        try:
            for frame in self._frames:
                writer.write(cv2.cvtColor(frame, cv2.COLOR_RGB2BGR))
        finally:
            writer.release()
        self._frames = []
        self.episode += 1
        return path
