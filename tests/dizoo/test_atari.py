"""The Atari suite: declared spaces, ding's conformance checks, the chain against gymnasium's Atari preprocessing."""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np
import pytest

ale_py = pytest.importorskip("ale_py")

import cv2  # noqa: E402
import gymnasium as gym  # noqa: E402
from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation  # noqa: E402

from ding.config import compile_config, read_config  # noqa: E402
from ding.envs.checks.env_checker import check_ding_env  # noqa: E402
from ding.errors import ConfigError  # noqa: E402
from dizoo.atari.envs import AtariEnv, ale_games  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIGS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "dizoo" / "atari" / "config").glob("*_config.py"))
GAMES = {"ALE/Pong-v5": 6, "ALE/Breakout-v5": 4, "ALE/Qbert-v5": 6, "ALE/SpaceInvaders-v5": 6}
SCALE = np.float32(1.0 / 255.0)


def make_env(**cfg: Any) -> AtariEnv:
    return AtariEnv(cfg)


def full_config(**cfg: Any) -> dict[str, Any]:
    return {**AtariEnv.default_config(), **cfg}


def gym_reference(env_id: str, seed: int, **kwargs: Any) -> gym.Env[Any, Any]:
    """gymnasium's Atari preprocessing and frame stack on the same emulator settings, reset with ``seed``."""
    raw = gym.make(env_id, frameskip=1, repeat_action_probability=0.0)
    env = FrameStackObservation(AtariPreprocessing(raw, noop_max=30, frame_skip=4, **kwargs), 4)
    env.reset(seed=seed)
    return env


def ale_of(env: Any) -> Any:
    inner: Any = env.env if isinstance(env, AtariEnv) else env
    return inner.unwrapped.ale


def warp(gray_frame: np.ndarray) -> np.ndarray:
    return cv2.resize(gray_frame, (84, 84), interpolation=cv2.INTER_AREA)


# ---------------------------------------------------------------------------------------------
# configs and declared spaces
# ---------------------------------------------------------------------------------------------


def test_every_config_is_found() -> None:
    names = {pathlib.Path(path).name for path in CONFIGS}
    expected = {"pong", "breakout", "qbert", "spaceinvaders"}
    assert {f"{game}_dqn_config.py" for game in expected} | {"pong_dqn_ram_config.py"} == names


@pytest.mark.parametrize("path", CONFIGS)
def test_config_compiles_with_the_game_shapes(path: str) -> None:
    """The whole config, policy section included, compiles; the model's shapes come from the game."""
    import ding.policy.dqn  # noqa: F401  (registers the dqn policy)

    main_config, create_config = read_config(str(ROOT / path))
    cfg = compile_config(main_config, create_config)
    model = cfg.policy.model
    if cfg.env.ram:
        assert tuple(np.atleast_1d(model.obs_shape)) == (128,)
    else:
        assert tuple(model.obs_shape) == (4, 84, 84)
    assert model.action_shape == GAMES[cfg.env.env_id]
    assert cfg.env.repeat_action_probability == 0.0 and cfg.env.env_wrapper == "atari_default"


@pytest.mark.parametrize("env_id", sorted(GAMES))
def test_declared_raw_spaces_are_the_emulators(env_id: str) -> None:
    env = make_env(env_id=env_id)
    ale_env = env.env.unwrapped
    declared = AtariEnv.raw_spaces(full_config(env_id=env_id))
    assert declared.observation == ale_env.observation_space == gym.spaces.Box(0, 255, (210, 160), np.uint8)
    assert declared.action == ale_env.action_space == gym.spaces.Discrete(GAMES[env_id])
    assert (env.observation_space, env.action_space) == tuple(AtariEnv.spaces_from_config({"env_id": env_id}))[:2]
    assert env.observation_space == gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)
    env.close()


@pytest.mark.parametrize(
    ("cfg", "shape"), [({"obs_type": "rgb"}, (210, 160, 3)), ({"ram": True}, (128,))], ids=["rgb", "ram"]
)
def test_declared_screen_and_ram_spaces_are_the_emulators(cfg: dict[str, Any], shape: tuple[int, ...]) -> None:
    env = make_env(env_id="ALE/Pong-v5", **cfg)
    declared = AtariEnv.raw_spaces(full_config(env_id="ALE/Pong-v5", **cfg))
    assert declared.observation == env.env.unwrapped.observation_space
    assert env.env.unwrapped.observation_space.shape == shape
    env.close()


def test_static_action_table_matches_the_roms_of_the_config_games() -> None:
    for env_id, count in GAMES.items():
        game = ale_games.game_of(env_id)
        assert ale_games.MINIMAL_ACTION_COUNTS[game] == ale_games.read_minimal_action_count(game) == count


@pytest.mark.slow
def test_static_action_table_matches_every_rom() -> None:
    for game, count in ale_games.MINIMAL_ACTION_COUNTS.items():
        assert ale_games.read_minimal_action_count(game) == count, game


def test_game_missing_from_the_table_reads_its_rom(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(ale_games.MINIMAL_ACTION_COUNTS, "qbert")
    ale_games.read_minimal_action_count.cache_clear()
    assert ale_games.minimal_action_count("qbert") == 6
    assert ale_games.read_minimal_action_count.cache_info().misses == 1
    assert AtariEnv.spaces_from_config({"env_id": "QbertNoFrameskip-v4"}).action == gym.spaces.Discrete(6)
    with pytest.raises(ConfigError, match=r"ale-py has no ROM for the game 'no_such_game'"):
        ale_games.read_minimal_action_count("no_such_game")


def test_v4_and_v5_ids_name_the_same_game() -> None:
    assert ale_games.game_of("PongNoFrameskip-v4") == ale_games.game_of("ALE/Pong-v5") == "pong"
    assert AtariEnv.spaces_from_config({"env_id": "SpaceInvadersNoFrameskip-v4"}) == AtariEnv.spaces_from_config(
        {"env_id": "ALE/SpaceInvaders-v5"}
    )


@pytest.mark.parametrize(
    ("cfg", "error", "match"),
    [
        ({"env_id": "ALE/Pongg-v5"}, ConfigError, r"env_id 'ALE/Pongg-v5' is not a registered env id.*Pong"),
        ({"env_id": "CartPole-v1"}, ConfigError, r"env_id 'CartPole-v1' is not an ALE game"),
        ({"env_id": 3}, TypeError, r"env\.env_id must be a str, got 3"),
        (
            {"repeat_action_probability": 1.5},
            ConfigError,
            r"repeat_action_probability must be a number in \[0, 1\], got 1\.5",
        ),
        ({"repeat_action_probability": "0.25"}, TypeError, r"repeat_action_probability must be a number.*'0\.25'"),
        ({"obs_type": "ram"}, ConfigError, r"obs_type must be one of 'rgb', 'grayscale', got 'ram'"),
        ({"ram": True, "obs_type": "rgb"}, ConfigError, r"ram=True observes the RAM.*must stay 'grayscale'; got 'rgb'"),
        ({"reseed_each_episode": 1}, TypeError, r"reseed_each_episode must be a bool, got 1"),
        ({"ram": 1}, TypeError, r"ram must be a bool, got 1"),
        ({"max_episode_steps": 0}, ConfigError, r"max_episode_steps must be a positive int or None \(.*\), got 0"),
        ({"env_kwargs": {"frameskip": 4}}, ConfigError, r"AtariEnv takes no env_kwargs \(got \{'frameskip': 4\}\)"),
        (
            {"frame_stack": -1},
            ConfigError,
            r"frame_stack must be an int in \[0, 256\] or None \(0: no stacking; .*\), got -1",
        ),
        (
            {"frame_stack": 2, "env_wrapper": ["warp_frame"]},
            ConfigError,
            r"frame_stack=2 sets the frame_stack step of the 'atari_default' chain.*put \('frame_stack'",
        ),
        ({"frame_stack": 2, "ram": True}, ConfigError, r"frame_stack=2 stacks screen frames; with ram=True"),
        ({"obs_plus_prev_action_reward": 1}, TypeError, r"obs_plus_prev_action_reward must be a bool, got 1"),
    ],
)
def test_bad_config_values_are_named(cfg: dict[str, Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        AtariEnv.spaces_from_config(cfg)


# ---------------------------------------------------------------------------------------------
# ding's conformance checks
# ---------------------------------------------------------------------------------------------


def test_training_env_passes_ding_checks() -> None:
    # Breakout loses a life within the 40 steps: the checks also cover games that go on across lives.
    check_ding_env(AtariEnv, {"env_id": "ALE/Breakout-v5"}, steps=40, require_episode_end=False)


def test_ram_training_env_passes_ding_checks_with_episode_ends() -> None:
    check_ding_env(AtariEnv, {"env_id": "ALE/Pong-v5", "ram": True, "max_episode_steps": 6}, steps=8)


@pytest.mark.slow
@pytest.mark.parametrize("is_train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("env_id", sorted(GAMES))
def test_every_config_game_passes_ding_checks(env_id: str, is_train: bool) -> None:
    # In training an episode may end at a lost life, which carries no eval_episode_return (the game goes on).
    cfg = {"env_id": env_id, "is_train": is_train, "max_episode_steps": 30}
    check_ding_env(AtariEnv, cfg, steps=60, require_episode_end=not is_train)


def test_max_episode_steps_ends_the_game_with_its_return() -> None:
    env = make_env(env_id="ALE/Pong-v5", is_train=False, max_episode_steps=10)
    env.seed(0)
    env.reset()  # FIRE and RIGHT at the start are game steps too: 2 of the 10
    rewards = []
    for _ in range(8):
        ts = env.step(env.random_action())
        rewards.append(float(ts.reward[0]))
    assert ts.done and ts.truncated and not ts.terminated
    assert ts.info["eval_episode_return"].tolist() == [sum(rewards)]
    env.close()


# ---------------------------------------------------------------------------------------------
# equivalence with gymnasium's AtariPreprocessing + FrameStackObservation, and the intended differences
# ---------------------------------------------------------------------------------------------


def test_default_frames_equal_gymnasium_preprocessing_until_the_last_step() -> None:
    """The default chain (ALE's gray screens, gray-then-max) gives gymnasium's frames exactly, as uint8.

    Same seed (so the same number of reset no-ops: both draw it from the emulator env's generator), same actions.
    Intended differences, each asserted here: ding presses FIRE then action 2 after the no-ops (gymnasium does
    not), so ding's reset equals gymnasium's state after ``step(1), step(2)`` and its stack starts filled with
    that frame; and at the step that ends the game gymnasium returns the previous frame again (it skips the
    screen capture), ding the final screen.
    """
    seed = 5
    env = make_env(env_id="ALE/Breakout-v5", is_train=False)
    env.seed(seed, dynamic_seed=False)
    obs = env.reset()
    ref = gym_reference("ALE/Breakout-v5", seed)
    noops_frames = ale_of(ref).getEpisodeFrameNumber()
    for action in (1, 2):  # fire_reset's start actions
        ref_obs, *_ = ref.step(action)
    assert ale_of(env).getEpisodeFrameNumber() == noops_frames + 2 * 4 == ale_of(ref).getEpisodeFrameNumber()
    assert obs.shape == ref_obs.shape == (4, 84, 84) and obs.dtype == ref_obs.dtype == np.uint8
    assert np.array_equal(obs, np.stack([ref_obs[-1]] * 4))

    rng = np.random.default_rng(0)
    total = 0.0
    for t in range(2000):
        action = int(rng.integers(4))
        ts = env.step(action)
        prev_ref_newest = ref_obs[-1]
        ref_obs, reward, terminated, truncated, _ = ref.step(action)
        assert float(ts.reward[0]) == reward and ts.terminated == terminated and ts.truncated == truncated
        total += reward
        if ts.done:
            break
        assert np.array_equal(ts.obs[-1], ref_obs[-1]), t
        if t >= 2:  # the stacks hold only frames after the start actions
            assert np.array_equal(ts.obs, ref_obs), t
    assert ts.terminated and t > 100 and ts.info["eval_episode_return"].tolist() == [total]
    final = warp(ale_of(env).getScreenGrayscale())
    assert np.array_equal(ts.obs[-1], final)
    assert np.array_equal(ref_obs[-1], prev_ref_newest) and not np.array_equal(ref_obs[-1], final)
    assert np.array_equal(ts.obs[:-1], ref_obs[:-1])
    env.close()
    ref.close()


def test_rgb_screens_take_the_max_in_color_then_gray() -> None:
    """``obs_type='rgb'`` maxes the two last RGB frames, then grays (OpenCV weights) and resizes: max-then-gray.

    gymnasium (and the default) gray first and then max; the two differ where the frames overlap in different
    colors, and by ALE's palette luminance against OpenCV's weights. ding's frames equal gymnasium's color max
    (AtariPreprocessing with grayscale_obs=False at full size) grayed and resized, and Q*bert shows steps where
    that differs from gymnasium's gray frames.
    """
    seed, steps = 5, 60
    env = make_env(env_id="ALE/Qbert-v5", obs_type="rgb", is_train=False)
    env.seed(seed, dynamic_seed=False)
    env.reset()
    gray_ref = gym_reference("ALE/Qbert-v5", seed)
    color_ref = gym_reference("ALE/Qbert-v5", seed, grayscale_obs=False, screen_size=(160, 210))
    for action in (1, 2):
        gray_ref.step(action)
        color_ref.step(action)
    rng = np.random.default_rng(0)
    same_as_gray = 0
    for t in range(steps):
        action = int(rng.integers(6))
        ts = env.step(action)
        gray_obs, *_ = gray_ref.step(action)
        color_obs, *_ = color_ref.step(action)
        assert not ts.done
        expected = warp(cv2.cvtColor(color_obs[-1], cv2.COLOR_RGB2GRAY))
        assert np.array_equal(ts.obs[-1], expected), t
        same_as_gray += np.array_equal(ts.obs[-1], gray_obs[-1])
    assert steps // 2 < same_as_gray < steps
    env.close()


def test_training_clips_rewards_and_ends_episodes_at_lost_lives() -> None:
    """In training rewards are their sign, and a lost life ends the episode; evaluation plays on with true rewards."""
    seed = 1
    train, evaluate = make_env(env_id="ALE/SpaceInvaders-v5"), make_env(env_id="ALE/SpaceInvaders-v5", is_train=False)
    for env in (train, evaluate):
        env.seed(seed, dynamic_seed=False)
        env.reset()
    rng = np.random.default_rng(0)
    lives = ale_of(train).lives()
    true_rewards = []
    while True:
        action = int(rng.integers(6))
        ts, ts_eval = train.step(action), evaluate.step(action)
        assert np.array_equal(ts.obs, ts_eval.obs)
        assert float(ts.reward[0]) == np.sign(ts_eval.reward[0])
        true_rewards.append(float(ts_eval.reward[0]))
        if ts.done:
            break
    assert max(true_rewards) > 1.0, "the run must include rewards that clipping changes"
    assert ts.terminated and ts.info["real_done"] is False
    assert ts.info["eval_episode_return"].tolist() == [sum(true_rewards)], "the game's true return so far"
    assert not ts_eval.done and ale_of(train).lives() == lives - 1
    train.close()
    evaluate.close()


def test_reset_after_a_lost_life_continues_the_game() -> None:
    env = make_env(env_id="ALE/Breakout-v5")
    env.seed(0)  # dynamic seeds: a reset after a lost life must still not restart the game
    env.reset()
    lives_at_start = ale_of(env).lives()
    for episode in range(2):
        while not env.step(env.random_action()).done:
            pass
        frame = ale_of(env).getEpisodeFrameNumber()
        env.reset()
        assert ale_of(env).lives() == lives_at_start - 1 - episode
        assert ale_of(env).getEpisodeFrameNumber() > frame, "the game went on"
    env.seed(0)
    env.reset()
    assert ale_of(env).lives() == lives_at_start, "seeding starts a new game"
    env.close()


# ---------------------------------------------------------------------------------------------
# options: sticky actions, RAM, replays
# ---------------------------------------------------------------------------------------------


def _play(env: AtariEnv, actions: list[int]) -> list[np.ndarray]:
    env.seed(3, dynamic_seed=False)
    frames = [env.reset()]
    for action in actions:
        ts = env.step(action)
        frames.append(ts.obs)
        if ts.done:
            frames.append(env.reset())
    return frames


def test_sticky_actions_change_the_dynamics_reproducibly() -> None:
    actions = [int(a) for a in np.random.default_rng(0).integers(6, size=60)]
    plain = _play(make_env(env_id="ALE/Pong-v5", is_train=False), actions)
    sticky_env = make_env(env_id="ALE/Pong-v5", is_train=False, repeat_action_probability=0.25)
    assert ale_of(sticky_env).getFloat("repeat_action_probability") == pytest.approx(0.25)
    sticky = _play(sticky_env, actions)
    again = _play(sticky_env, actions)
    assert np.array_equal(plain[0], sticky[0])
    assert any(not np.array_equal(a, b) for a, b in zip(plain, sticky, strict=True))
    assert all(np.array_equal(a, b) for a, b in zip(sticky, again, strict=True))
    sticky_env.close()


def _episode_starts(env: AtariEnv, seed: int, dynamic_seed: bool = True, episodes: int = 4) -> list[tuple[int, int]]:
    """(frames since the ROM was loaded, frames of the episode) at each of ``episodes`` resets; short episodes."""
    env.seed(seed, dynamic_seed=dynamic_seed)
    starts = []
    for _ in range(episodes):
        env.reset()
        starts.append((ale_of(env).getFrameNumber(), ale_of(env).getEpisodeFrameNumber()))
        while not env.step(0).done:
            pass
    env.close()
    return starts


def test_the_emulator_is_seeded_at_the_first_reset_and_episodes_carry_on() -> None:
    """A collector env loads the ROM with a seed once; later episodes continue its random streams, reproducibly."""
    starts = _episode_starts(make_env(env_id="ALE/Pong-v5", max_episode_steps=20), seed=7)
    loaded = [frames for frames, _ in starts]
    assert loaded == sorted(loaded) and loaded[0] < 100 < loaded[-1], "no ROM reload after the first reset"
    assert len({episode for _, episode in starts}) > 1, "the no-op counts differ between episodes"
    assert _episode_starts(make_env(env_id="ALE/Pong-v5", max_episode_steps=20), seed=7) == starts
    assert _episode_starts(make_env(env_id="ALE/Pong-v5", max_episode_steps=20), seed=8) != starts


def test_reseed_each_episode_reloads_the_rom_with_a_fresh_seed() -> None:
    cfg = {"env_id": "ALE/Pong-v5", "max_episode_steps": 20, "reseed_each_episode": True}
    starts = _episode_starts(make_env(**cfg), seed=7)
    assert all(frames == episode for frames, episode in starts), "every reset loads the ROM again"
    assert len({episode for _, episode in starts}) > 1
    assert _episode_starts(make_env(**cfg), seed=7) == starts


def test_evaluation_episodes_all_start_alike() -> None:
    """With ``dynamic_seed=False`` every reset seeds the emulator with the same seed (a reload each time)."""
    env = make_env(env_id="ALE/Pong-v5", max_episode_steps=20, is_train=False)
    starts = _episode_starts(env, seed=3, dynamic_seed=False)
    assert len(set(starts)) == 1 and starts[0][0] == starts[0][1]


def test_a_new_seed_or_a_rebuilt_emulator_is_seeded_again(tmp_path: pathlib.Path) -> None:
    def starts_of(env: AtariEnv, episodes: int) -> list[tuple[int, int]]:
        out = []
        for _ in range(episodes):
            env.reset()
            out.append((ale_of(env).getFrameNumber(), ale_of(env).getEpisodeFrameNumber()))
            while not env.step(0).done:
                pass
        return out

    def run(replays: pathlib.Path) -> list[tuple[int, int]]:
        env = make_env(env_id="ALE/Pong-v5", max_episode_steps=20)
        env.seed(5)
        first = starts_of(env, 2)
        env.seed(5)  # the next reset loads the ROM with the new episode seed
        assert starts_of(env, 2) == first
        env.enable_save_replay(str(replays))  # the next reset builds a new emulator (to render): seeded too
        rebuilt = starts_of(env, 2)
        env.close()
        assert rebuilt[0][0] == rebuilt[0][1] and rebuilt[1][0] > rebuilt[1][1], "loaded once, at the rebuild"
        return first + rebuilt

    # Reproducible, so the rebuilt emulator got a seed from the env's sequence (an unseeded one draws its own).
    assert run(tmp_path / "a") == run(tmp_path / "b")


def test_ram_observation_is_the_scaled_console_memory() -> None:
    env = make_env(env_id="ALE/Breakout-v5", ram=True, is_train=False)
    names = [name for name, _ in AtariEnv.spec_trace({"env_id": "ALE/Breakout-v5", "ram": True})]
    assert any(name.startswith("ram") for name in names) and any(name.startswith("frame_skip") for name in names)
    assert env.observation_space == gym.spaces.Box(0.0, 1.0, (128,), np.float32)
    env.seed(0)
    obs = env.reset()
    assert np.array_equal(obs, ale_of(env).getRAM().astype(np.float32) * SCALE)
    for _ in range(10):
        ts = env.step(env.random_action())
        assert ts.obs.shape == (128,) and ts.obs.dtype == np.float32
        assert np.array_equal(ts.obs, ale_of(env).getRAM().astype(np.float32) * SCALE)
    env.close()


def test_replay_is_written_as_mp4(tmp_path: pathlib.Path) -> None:
    env = make_env(env_id="ALE/Pong-v5", is_train=False, max_episode_steps=8)
    env.seed(0)
    env.enable_save_replay(str(tmp_path))
    env.reset()
    steps = 0
    while not env.step(env.random_action()).done:
        steps += 1
    env.close()
    video = tmp_path / "replay-episode-0000.mp4"
    capture = cv2.VideoCapture(str(video))
    try:
        frames = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
        ok, frame = capture.read()
    finally:
        capture.release()
    assert ok and frame.shape == (210, 160, 3)
    assert frames == steps + 2  # the reset frame and every step


@pytest.mark.slow
def test_pong_config_trains_and_evaluates_in_worker_processes(tmp_path: pathlib.Path) -> None:
    """The Pong config runs end to end: subprocess env managers, the conv DQN model, a checkpoint."""
    from ding.entry import serial_pipeline

    main_config, create_config = read_config(str(ROOT / "dizoo/atari/config/pong_dqn_config.py"))
    main_config.env.update(collector_env_num=2, evaluator_env_num=1, n_evaluator_episode=1, max_episode_steps=60)
    main_config.policy.learn.update_per_collect = 2
    main_config.policy.other.replay_buffer.replay_buffer_size = 500
    result = serial_pipeline((main_config, create_config), seed=0, max_train_iter=8, root=tmp_path, progress=False)
    assert result.train_iter >= 8 and result.env_step > 0
    assert result.last_eval_return is not None and -60 <= result.last_eval_return <= 60
    assert result.ckpt_best.exists() and not result.interrupted


# ---------------------------------------------------------------------------------------------
# DI-engine's keys, ids and AtariEnvMR
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("frame_stack", "shape"), [(2, (2, 84, 84)), (1, (1, 84, 84)), (0, (84, 84))])
def test_frame_stack_sets_the_stack_of_the_default_chain(frame_stack: int, shape: tuple[int, ...]) -> None:
    for is_train in (True, False):
        cfg = {"env_id": "PongNoFrameskip-v4", "frame_stack": frame_stack, "is_train": is_train}
        assert AtariEnv.spaces_from_config(cfg).observation.shape == shape
        env = make_env(**cfg)
        env.seed(0)
        assert env.reset().shape == shape
        assert env.step(env.random_action()).obs.shape == shape
        env.close()


def test_frame_stack_keeps_the_newest_frames_last() -> None:
    two = make_env(env_id="ALE/Breakout-v5", frame_stack=2)
    four = make_env(env_id="ALE/Breakout-v5")
    for env in (two, four):
        env.seed(3)
        env.reset()
    for _ in range(6):
        obs_two, obs_four = two.step(np.array([1])).obs, four.step(np.array([1])).obs
        np.testing.assert_array_equal(obs_two, obs_four[2:])
    two.close()
    four.close()


def test_obs_plus_prev_action_reward_adds_the_last_action_and_reward() -> None:
    cfg = {"env_id": "ALE/Pong-v5", "obs_plus_prev_action_reward": True}
    env = make_env(**cfg)
    assert env.observation_space == AtariEnv.spaces_from_config(cfg).observation
    env.seed(0)
    first = env.reset()
    assert first["obs"].shape == (4, 84, 84) and int(first["prev_action"]) == 0
    ts = env.step(np.array([3]))
    assert int(ts.obs["prev_action"]) == 3
    assert float(ts.obs["prev_reward_extrinsic"][0]) == float(ts.reward[0])
    env.close()


def test_old_gym_deterministic_ids_name_their_game() -> None:
    assert ale_games.registered_ale_id("PongDeterministic-v4") == "PongNoFrameskip-v4"
    assert AtariEnv.spaces_from_config({"env_id": "BreakoutDeterministic-v4"}) == AtariEnv.spaces_from_config(
        {"env_id": "ALE/Breakout-v5"}
    )


def test_atari_env_mr_plays_montezuma_and_seeds_every_episode_anew() -> None:
    from ding.envs import ENV_REGISTRY
    from dizoo.atari.envs import AtariEnvMR

    assert ENV_REGISTRY.get("atari_mr") is AtariEnvMR
    with pytest.raises(ConfigError, match=r"atari_mr: env_id 'ALE/Pong-v5' is the game 'pong'"):
        AtariEnvMR({"env_id": "ALE/Pong-v5"})

    def first_frame_numbers(env: AtariEnv) -> set[int]:
        """The emulator frame after the first step of 4 seeded episodes: it counts the reset's random no-ops."""
        env.seed(0, dynamic_seed=False)
        numbers = set()
        for _ in range(4):
            env.reset()
            numbers.add(int(env.step(np.array([0])).info["episode_frame_number"]))
        env.close()
        return numbers

    mr = AtariEnvMR({"env_id": "MontezumaRevengeDeterministic-v4", "frame_stack": 2})
    assert mr.observation_space.shape == (2, 84, 84) and mr.action_space == gym.spaces.Discrete(18)
    assert len(first_frame_numbers(mr)) > 1  # a fresh episode seed at every reset, as in DI-engine
    assert len(first_frame_numbers(make_env(env_id="MontezumaRevengeNoFrameskip-v4"))) == 1
