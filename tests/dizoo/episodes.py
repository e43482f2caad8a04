"""Helpers for the suite tests: play whole episodes, read back replay videos."""

from __future__ import annotations

import pathlib

from ding.envs import BaseEnv


def play_episodes(env: BaseEnv, episodes: int = 1) -> None:
    """Reset and take random actions until ``episodes`` episodes have ended."""
    for _ in range(episodes):
        env.reset()
        while not env.step(env.random_action()).done:
            pass


def video_frames_and_size(path: pathlib.Path) -> tuple[int, tuple[int, int]]:
    """The number of frames and the (width, height) of a video file."""
    import cv2

    capture = cv2.VideoCapture(str(path))
    try:
        frames = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
        size = (int(capture.get(cv2.CAP_PROP_FRAME_WIDTH)), int(capture.get(cv2.CAP_PROP_FRAME_HEIGHT)))
    finally:
        capture.release()
    return frames, size
