"""Episode videos: H.264 files imageio reads; recorders sharing a directory, or a re-run into it, never overwrite a
file."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from ding.utils.video_files import EpisodeVideoRecorder, move_unclobbered, write_mp4
from dizoo.classic_control.cartpole.envs import CartPoleEnv

iio = pytest.importorskip("imageio.v3")
av = pytest.importorskip("av")


def frame_count(path: pathlib.Path | str) -> int:
    """The frames imageio's PyAV plugin reads from the video at ``path``."""
    return sum(1 for _ in iio.imiter(path, plugin="pyav"))


@pytest.mark.parametrize("size", [(32, 48), (33, 47)])
def test_videos_are_h264_that_imageio_reads_back(tmp_path: pathlib.Path, size: tuple[int, int]) -> None:
    """Standard H.264 in yuv420p (an odd size gets its last row / column repeated); imageio reads the frames back."""
    rng = np.random.default_rng(0)
    frames = [np.repeat(rng.integers(0, 256, (*size, 1), dtype=np.uint8), 3, axis=2) for _ in range(6)]
    path = write_mp4(frames, str(tmp_path / "v.mp4"), fps=30)
    with av.open(path) as video:
        stream = video.streams.video[0]
        assert (stream.codec_context.name, stream.codec_context.pix_fmt) == ("h264", "yuv420p")
    read = iio.imread(path, plugin="pyav")
    height, width = size[0] + size[0] % 2, size[1] + size[1] % 2
    assert read.shape == (6, height, width, 3)
    blurred = [np.abs(r[: size[0], : size[1]].astype(int) - f).mean() for r, f in zip(read, frames, strict=True)]
    assert max(blurred) < 40  # lossy, but the frames written (random gray noise differs by ~85 on average)


def play(env: CartPoleEnv, episodes: int) -> list[int]:
    """Play ``episodes`` episodes with action 0; return their lengths."""
    lengths = []
    for _ in range(episodes):
        env.reset()
        steps = 0
        while True:
            steps += 1
            if env.step(np.array([0])).done:
                break
        lengths.append(steps)
    return lengths


def test_two_envs_recording_into_one_directory_keep_every_episode(tmp_path: pathlib.Path) -> None:
    envs = [CartPoleEnv({}), CartPoleEnv({})]
    for seed, env in enumerate(envs):
        env.seed(seed)
        env.enable_save_replay(str(tmp_path))
    lengths = play(envs[0], 2) + play(envs[1], 3)
    for env in envs:
        env.close()
    videos = sorted(tmp_path.glob("*.mp4"))
    assert [v.name for v in videos] == [f"replay-episode-{n:04d}.mp4" for n in range(5)]
    assert [frame_count(v) for v in videos] == [length + 1 for length in lengths]  # the reset frame, one per step
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left behind


def test_a_new_recorder_skips_the_numbers_taken(tmp_path: pathlib.Path) -> None:
    (tmp_path / "replay-episode-0000.mp4").write_bytes(b"kept")
    recorder = EpisodeVideoRecorder(str(tmp_path))
    for _ in range(2):
        recorder.add_frame(np.zeros((16, 16, 3), np.uint8))
    path = recorder.finish_episode()
    assert path == str(tmp_path / "replay-episode-0001.mp4") and frame_count(path) == 2
    assert (tmp_path / "replay-episode-0000.mp4").read_bytes() == b"kept"
    assert recorder.finish_episode() is None  # no frames: nothing written


def test_move_unclobbered_takes_the_first_free_name(tmp_path: pathlib.Path) -> None:
    (tmp_path / "a_1.txt").write_text("one")
    (tmp_path / "a_2.txt").write_text("two")
    source = tmp_path / "new.txt"
    source.write_text("three")
    path, number = move_unclobbered(str(source), str(tmp_path / "."), lambda n: f"a_{n}.txt", start=1)
    assert (pathlib.Path(path).name, number) == ("a_3.txt", 3) and not source.exists()
    assert [(tmp_path / f"a_{n}.txt").read_text() for n in (1, 2, 3)] == ["one", "two", "three"]


def test_frames_must_be_rgb(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ValueError, match=r"RGB arrays of shape \(H, W, 3\), got shape \(4, 4\)"):
        EpisodeVideoRecorder(str(tmp_path)).add_frame(np.zeros((4, 4), np.uint8))
