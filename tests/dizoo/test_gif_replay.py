"""GIF replays: the keys are checked together, each episode becomes one GIF of its frames, names never collide."""

from __future__ import annotations

import pathlib

import pytest
from gymnasium.envs.classic_control import CartPoleEnv
from gymnasium.wrappers import TimeLimit

from ding.errors import ConfigError
from dizoo.gif_replay import GifReplayWrapper, gif_replay_dir

iio = pytest.importorskip("imageio.v3")


def gif_length_ms(path: pathlib.Path | str) -> int:
    """The playing time of a GIF (the writer merges identical consecutive frames into one longer frame)."""
    from PIL import Image, ImageSequence

    with Image.open(path) as image:
        return sum(int(frame.info["duration"]) for frame in ImageSequence.Iterator(image))


def play(env: GifReplayWrapper, episodes: int) -> None:
    for episode in range(episodes):
        env.reset(seed=episode)
        while True:
            _, _, terminated, truncated, _ = env.step(0)
            if terminated or truncated:
                break


def test_each_episode_is_written_as_a_gif_of_its_frames(tmp_path: pathlib.Path) -> None:
    env = GifReplayWrapper(TimeLimit(CartPoleEnv(render_mode="rgb_array"), 4), str(tmp_path / "gifs"), "CartPole-v1")
    play(env, 2)
    paths = sorted((tmp_path / "gifs").glob("*.gif"))
    assert [p.name for p in paths] == ["CartPole-v1_episode_0.gif", "CartPole-v1_episode_1.gif"]
    assert iio.imread(paths[0], index=None).shape[1:] == (400, 600, 3)
    assert gif_length_ms(paths[0]) == 5 * 50  # the reset frame and one per step, 20 frames a second


def test_existing_gifs_are_not_overwritten(tmp_path: pathlib.Path) -> None:
    (tmp_path / "CartPole-v1_episode_0.gif").write_bytes(b"kept")
    env = GifReplayWrapper(TimeLimit(CartPoleEnv(render_mode="rgb_array"), 2), str(tmp_path), "CartPole-v1")
    play(env, 1)
    assert (tmp_path / "CartPole-v1_episode_0.gif").read_bytes() == b"kept"
    assert env.last_path == str(tmp_path / "CartPole-v1_episode_1.gif")
    assert gif_length_ms(env.last_path) == 3 * 50


def test_ids_with_a_slash_become_flat_file_names(tmp_path: pathlib.Path) -> None:
    env = GifReplayWrapper(TimeLimit(CartPoleEnv(render_mode="rgb_array"), 1), str(tmp_path), "ALE/Pong-v5")
    play(env, 1)
    assert [p.name for p in tmp_path.iterdir()] == ["ALE_Pong-v5_episode_0.gif"]


def test_the_env_must_render_rgb_arrays() -> None:
    with pytest.raises(ValueError, match="needs render_mode='rgb_array', got None"):
        GifReplayWrapper(CartPoleEnv(), "/tmp", "x")


@pytest.mark.parametrize(
    ("cfg", "match"),
    [
        ({"save_replay_gif": True}, "save_replay_gif=True needs replay_path_gif"),
        ({"replay_path_gif": "gifs"}, "replay_path_gif='gifs' is set but save_replay_gif is False"),
        ({"save_replay_gif": "yes", "replay_path_gif": "gifs"}, "save_replay_gif must be True or False, got 'yes'"),
        ({"save_replay_gif": True, "replay_path_gif": ""}, "replay_path_gif must be a directory path or None"),
    ],
)
def test_keys_are_checked_together(cfg: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        gif_replay_dir(cfg, "lunarlander")
    assert gif_replay_dir({}, "lunarlander") is None
