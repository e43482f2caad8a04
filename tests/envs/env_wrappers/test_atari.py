"""Behaviour of the Atari-style wrappers: no-op starts, max over skipped frames, lives, FIRE, RAM."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.env_wrappers import update_shape, update_space
from ding.envs.env_wrappers.atari import (
    EpisodicLifeWrapper,
    FireResetWrapper,
    MaxAndSkipWrapper,
    NoopResetWrapper,
    RamWrapper,
    TerminalOnLifeLossWrapper,
)
from ding.envs.values.spaces import reward_space_of
from ding.errors import ConfigError, ShapeRuleError
from tests.envs.env_wrappers.catalogue import make_catalogue_env
from tests.envs.env_wrappers.scripted import FRAME_SHAPE, ScriptedEnv


class MeaningsEnv(ScriptedEnv):
    """A scripted env that names its actions like ALE does."""

    def __init__(self, meanings: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.meanings = meanings
        self.action_space = spaces.Discrete(len(meanings))

    def get_action_meanings(self) -> list[str]:
        return list(self.meanings)


class ActionLog(gym.Wrapper[Any, Any, Any, Any]):
    """Records the actions that reach the env it wraps."""

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self.actions: list[int] = []

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        self.actions.append(int(action))
        return self.env.step(action)


def make_ale(game: str, **kwargs: Any) -> gym.Env[Any, Any]:
    ale_py = pytest.importorskip("ale_py")
    gym.register_envs(ale_py)
    return gym.make(f"ALE/{game}-v5", frameskip=1, repeat_action_probability=0.0, **kwargs)


def ale_of(env: gym.Env[Any, Any]) -> Any:
    """The ALE emulator inside a (wrapped) ALE env."""
    return env.unwrapped.ale  # type: ignore[attr-defined]


def random_frames(n: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, FRAME_SHAPE, dtype=np.uint8) for _ in range(n)]


# ---------------------------------------------------------------------------------------------
# noop_reset
# ---------------------------------------------------------------------------------------------


def test_noop_reset_takes_one_to_noop_max_noops_deterministically_per_seed() -> None:
    inner = ScriptedEnv()
    env = NoopResetWrapper(inner, noop_max=7, noop_action=2)
    counts = []
    for seed in range(20):
        before = len(inner.actions)
        obs, _ = env.reset(seed=seed)
        taken = inner.actions[before:]
        assert 1 <= len(taken) <= 7 and set(taken) == {2}
        assert inner.t == len(taken) and np.all(obs == len(taken))
        counts.append(len(taken))
    again = []
    for seed in range(20):
        before = len(inner.actions)
        env.reset(seed=seed)
        again.append(len(inner.actions) - before)
    assert again == counts
    assert len(set(counts)) >= 4


def test_noop_reset_with_noop_max_one_takes_exactly_one_noop() -> None:
    inner = ScriptedEnv()
    env = NoopResetWrapper(inner, noop_max=1)
    for seed in range(5):
        env.reset(seed=seed)
        assert inner.t == 1
    assert inner.actions == [0] * 5


def test_noop_reset_resets_again_when_the_noops_end_the_episode() -> None:
    inner = ScriptedEnv(episode_len=3)
    env = NoopResetWrapper(inner, noop_max=30)
    for seed in range(10):
        inner.actions.clear()
        inner.resets = 0
        env.reset(seed=seed)
        noops = len(inner.actions)
        if noops >= 6:
            break
    assert noops >= 6
    assert inner.resets == 1 + noops // 3
    assert inner.t == noops % 3


def test_noop_reset_on_real_pong_advances_frames() -> None:
    env = NoopResetWrapper(make_ale("Pong"), noop_max=30)
    frames = []
    for seed in (0, 1, 2, 3, 0):
        env.reset(seed=seed)
        frames.append(ale_of(env).getEpisodeFrameNumber())
    assert all(1 <= n <= 30 for n in frames)
    assert frames[0] == frames[4]
    assert len(set(frames)) > 1
    env.close()


def test_noop_reset_argument_errors() -> None:
    with pytest.raises(ConfigError, match=r"noop_reset: noop_max must be a positive int; got 0"):
        NoopResetWrapper(ScriptedEnv(), noop_max=0)
    with pytest.raises(ShapeRuleError, match=r"step 0 noop_reset.*noop_max must be a positive int; got 2\.5"):
        update_shape((4,), 3, (1,), [("noop_reset", {"noop_max": 2.5})])
    with pytest.raises(ConfigError, match=r"noop_action must be an int; got 'a'"):
        NoopResetWrapper(ScriptedEnv(), noop_action="a")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"noop_action 9 is not in the action space Discrete\(4\)"):
        NoopResetWrapper(ScriptedEnv(), noop_action=9)
    with pytest.raises(ShapeRuleError, match=r"noop_reset .*needs a Discrete action space; got action shape \(2,\)"):
        update_shape((5,), (2,), (1,), ["noop_reset"])
    with pytest.raises(ConfigError, match=r"action 1 of this game means 'FIRE', not 'NOOP'"):
        NoopResetWrapper(make_ale("Pong"), noop_action=1)


# ---------------------------------------------------------------------------------------------
# max_and_skip
# ---------------------------------------------------------------------------------------------


def test_max_and_skip_returns_the_max_of_the_last_two_frames_and_sums_rewards() -> None:
    frames = random_frames(9)
    inner = ScriptedEnv(frames=frames)
    env = MaxAndSkipWrapper(inner, skip=4)
    env.reset(seed=0)
    obs, reward, terminated, truncated, _ = env.step(3)
    expected = np.maximum(frames[3], frames[4])
    assert obs.dtype == np.uint8 and np.array_equal(obs, expected)
    assert not np.array_equal(expected, frames[3]) and not np.array_equal(expected, frames[4])
    assert reward == 1 + 2 + 3 + 4 and not terminated and not truncated
    kept = obs.copy()
    obs2, reward2, *_ = env.step(1)
    assert np.array_equal(obs2, np.maximum(frames[7], frames[8])) and reward2 == 5 + 6 + 7 + 8
    assert np.array_equal(obs, kept), "a returned frame must not change on the next step"
    assert inner.actions == [3] * 4 + [1] * 4


def test_max_and_skip_ending_inside_the_skip_returns_the_frame_it_ended_on() -> None:
    """The max covers the skip's last two frames; an episode that ends before them shows its final frame alone."""
    frames = random_frames(9, seed=1)
    frames[4] = np.full(FRAME_SHAPE, 255, np.uint8)  # the previous step's last frame: it must never show up again
    for episode_len, expected in (
        (5, frames[5]),  # ends on the 1st frame of the second step
        (6, frames[6]),  # on the 2nd
        (7, frames[7]),  # on the 3rd (the first of the two the max covers)
        (8, np.maximum(frames[7], frames[8])),  # on the 4th: the usual max
    ):
        inner = ScriptedEnv(frames=frames, episode_len=episode_len)
        env = MaxAndSkipWrapper(inner, skip=4)
        env.reset()
        env.step(0)
        obs, reward, terminated, _, _ = env.step(0)
        assert terminated and len(inner.actions) == episode_len
        assert reward == sum(range(5, episode_len + 1))
        assert obs.dtype == np.uint8 and np.array_equal(obs, expected), episode_len
    assert not np.array_equal(frames[7], np.maximum(frames[7], frames[8]))


def test_max_and_skip_stops_on_truncation() -> None:
    inner = ScriptedEnv(truncate_len=2)
    env = MaxAndSkipWrapper(inner, skip=4)
    env.reset()
    _, reward, terminated, truncated, _ = env.step(0)
    assert truncated and not terminated and reward == 3 and len(inner.actions) == 2


def test_max_and_skip_sums_vector_rewards_and_widens_reward_bounds() -> None:
    env = MaxAndSkipWrapper(ScriptedEnv(vector_reward=True), skip=3)
    env.reset()
    _, reward, *_ = env.step(0)
    assert reward.dtype == np.float32 and np.array_equal(reward, [6.0, -6.0, 1.5])
    wrapped = MaxAndSkipWrapper(make_catalogue_env("vector_reward"), skip=3)
    assert reward_space_of(wrapped) == spaces.Box(-6.0, 6.0, (3,), np.float32)


def test_max_and_skip_on_real_pong_matches_raw_frames() -> None:
    class KeepFrames(gym.Wrapper[Any, Any, Any, Any]):
        def __init__(self, env: gym.Env[Any, Any]) -> None:
            super().__init__(env)
            self.frames: list[np.ndarray] = []

        def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
            result = self.env.step(action)
            self.frames.append(result[0])
            return result

    raw = KeepFrames(make_ale("Pong"))
    env = MaxAndSkipWrapper(raw, skip=4)
    env.reset(seed=0)
    for _ in range(60):
        obs, *_ = env.step(2)
    assert np.array_equal(obs, np.maximum(raw.frames[-2], raw.frames[-1]))
    assert len(raw.frames) == 240
    env.close()


def test_max_and_skip_errors() -> None:
    with pytest.raises(ConfigError, match=r"max_and_skip: skip must be a positive int; got 0"):
        MaxAndSkipWrapper(ScriptedEnv(), skip=0)
    with pytest.raises(
        ShapeRuleError,
        match=r"max_and_skip .*needs an array \(Box\) observation; got observation shape \{'a': \(3,\)\}",
    ):
        update_shape({"a": (3,)}, 4, (1,), ["max_and_skip"])


# ---------------------------------------------------------------------------------------------
# episodic_life
# ---------------------------------------------------------------------------------------------


def _step_until_terminated(env: gym.Env[Any, Any], action: int = 0) -> tuple[int, dict[str, Any]]:
    for n in range(1, 2000):
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return n, info
    raise AssertionError("the episode did not end")


def test_episodic_life_ends_episodes_on_life_loss_without_restarting_the_game() -> None:
    env = EpisodicLifeWrapper(make_catalogue_env("image_lives"))
    inner: Any = env.unwrapped
    env.reset(seed=0)
    steps, info = _step_until_terminated(env)
    assert steps == 5 and info["real_done"] is False and info["lives"] == 2
    env.reset()
    assert inner.t == 6 and inner.lives == 2, "reset after a lost life takes one no-op step"
    steps, info = _step_until_terminated(env)
    assert steps == 4 and info["real_done"] is False
    env.reset()
    assert inner.t == 11
    steps, info = _step_until_terminated(env)
    assert inner.t == 15 and info["real_done"] is True
    env.reset()
    assert inner.t == 0 and inner.lives == 3, "game over restarts the game"


def test_episodic_life_real_done_is_false_on_ordinary_steps() -> None:
    env = EpisodicLifeWrapper(make_catalogue_env("image_lives"))
    env.reset(seed=0)
    for _ in range(4):
        _, _, terminated, _, info = env.step(1)
        assert not terminated and info["real_done"] is False


def test_episodic_life_on_real_breakout() -> None:
    env = EpisodicLifeWrapper(make_ale("Breakout"))
    ale = ale_of(env)
    env.reset(seed=0)
    assert ale.lives() == 5
    env.step(1)  # FIRE launches the ball; standing still loses it
    _, info = _step_until_terminated(env)
    assert info["real_done"] is False and ale.lives() == 4
    frame = ale.getEpisodeFrameNumber()
    env.reset()
    assert ale.lives() == 4 and ale.getEpisodeFrameNumber() == frame + 1, "the game was not restarted"
    env.step(1)
    _, info = _step_until_terminated(env)
    assert info["real_done"] is False and ale.lives() == 3
    env.reset(seed=1)
    assert ale.lives() == 5, "a seeded reset starts a new game"
    env.close()


def test_every_episode_end_reports_the_game_return_so_far_and_the_game_end_keeps_the_inner_value() -> None:
    from ding.envs.env_wrappers.episode import EvalEpisodeReturnWrapper

    env = EpisodicLifeWrapper(EvalEpisodeReturnWrapper(make_ale("SpaceInvaders")))
    env.reset(seed=3)
    env.action_space.seed(3)
    game_return, reports = 0.0, []
    while True:
        _, reward, terminated, truncated, info = env.step(env.action_space.sample())
        game_return += float(reward)
        if terminated or truncated:
            reports.append((info["real_done"], float(info["eval_episode_return"][0]), game_return))
            if info["real_done"]:
                break
            env.reset()  # continues the game with a no-op step (no reward while a life restarts)
    assert len(reports) == 3 and [real for real, _, _ in reports] == [False] * 2 + [True]
    assert all(reported == expected for _, reported, expected in reports), reports
    assert reports[-1][2] > 0, "a random Space Invaders game scores"
    env.close()


def test_episodic_life_errors() -> None:
    env = EpisodicLifeWrapper(ScriptedEnv(report_lives=False))
    with pytest.raises(ConfigError, match=r"episodic_life needs an ALE env or an env that reports info\['lives'\]"):
        env.reset()
    with pytest.raises(
        ShapeRuleError, match=r"episodic_life .*Discrete action space; got Box\(-2.0, 3.0, \(2,\), float32\)"
    ):
        EpisodicLifeWrapper(make_catalogue_env("vector_box_action"))


# ---------------------------------------------------------------------------------------------
# fire_reset
# ---------------------------------------------------------------------------------------------


def test_fire_reset_presses_fire_then_action_two_on_breakout() -> None:
    log = ActionLog(make_ale("Breakout"))
    env = FireResetWrapper(log)
    assert env.start_actions == (1, 2)
    _, info = env.reset(seed=0)
    assert log.actions == [1, 2]
    assert info["episode_frame_number"] == 2 and ale_of(env).lives() == 5
    env.close()


def test_fire_reset_also_applies_to_pong() -> None:
    env = FireResetWrapper(make_ale("Pong"))
    assert env.start_actions == (1, 2)
    env.close()


def test_fire_reset_passes_reset_through_without_action_meanings() -> None:
    log = ActionLog(make_catalogue_env("vector"))
    env = FireResetWrapper(log)
    obs, info = env.reset(seed=3)
    reference, reference_info = make_catalogue_env("vector").reset(seed=3)
    assert env.start_actions == () and log.actions == []
    assert np.array_equal(obs, reference) and info == reference_info


def test_fire_reset_passes_through_when_fire_is_not_action_one() -> None:
    inner = MeaningsEnv(["NOOP", "UP", "DOWN"])
    env = FireResetWrapper(inner)
    env.reset()
    assert env.start_actions == () and inner.actions == []


def test_fire_reset_with_only_two_actions_presses_fire_only() -> None:
    inner = MeaningsEnv(["NOOP", "FIRE"])
    env = FireResetWrapper(inner)
    obs, _ = env.reset()
    assert inner.actions == [1] and np.all(obs == 1)


def test_fire_reset_resets_again_when_a_start_action_ends_the_episode() -> None:
    inner = MeaningsEnv(["NOOP", "FIRE", "RIGHT"], episode_len=1)
    env = FireResetWrapper(inner)
    obs, _ = env.reset(seed=0)
    assert inner.actions == [1, 2] and inner.resets == 3 and inner.t == 0 and np.all(obs == 0)


# ---------------------------------------------------------------------------------------------
# terminal_on_life_loss
# ---------------------------------------------------------------------------------------------


def test_terminal_on_life_loss_flags_lost_lives_without_ending_the_episode() -> None:
    env = TerminalOnLifeLossWrapper(make_catalogue_env("image_lives"))
    env.reset(seed=0)
    lost = []
    for t in range(1, 15):
        _, _, terminated, _, info = env.step(0)
        assert not terminated
        assert info["discount"] == (0.0 if info["life_lost"] else 1.0)
        if info["life_lost"]:
            lost.append(t)
    assert lost == [5, 10]
    _, _, terminated, _, info = env.step(0)
    assert terminated and info["life_lost"] is True and info["discount"] == 0.0
    env.reset()
    _, _, _, _, info = env.step(0)
    assert info["life_lost"] is False and info["discount"] == 1.0


def test_terminal_on_life_loss_on_real_breakout() -> None:
    env = TerminalOnLifeLossWrapper(make_ale("Breakout"))
    env.reset(seed=0)
    env.step(1)
    for _ in range(2000):
        _, _, terminated, _, info = env.step(0)
        if info["life_lost"]:
            break
    assert info["life_lost"] is True and info["discount"] == 0.0 and not terminated
    assert ale_of(env).lives() == 4
    _, _, _, _, info = env.step(0)
    assert info["life_lost"] is False and info["discount"] == 1.0
    env.close()


def test_terminal_on_life_loss_needs_lives() -> None:
    env = TerminalOnLifeLossWrapper(ScriptedEnv(report_lives=False))
    with pytest.raises(ConfigError, match=r"terminal_on_life_loss needs an ALE env or an env that reports"):
        env.reset()


# ---------------------------------------------------------------------------------------------
# ram
# ---------------------------------------------------------------------------------------------


def test_ram_reshapes_an_ale_ram_observation() -> None:
    env = RamWrapper(make_ale("Breakout", obs_type="ram"))
    assert env.observation_space == spaces.Box(0.0, 255.0, (128, 1, 1), np.float32)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (128, 1, 1) and obs.dtype == np.float32
    for action in (1, 0, 2, 3):
        obs, *_ = env.step(action)
        assert np.array_equal(obs.reshape(-1), ale_of(env).getRAM().astype(np.float32))
    env.close()


def test_ram_reads_the_ram_of_an_rgb_ale_env() -> None:
    env = RamWrapper(make_ale("Pong"))
    assert env.observation_space == spaces.Box(0.0, 255.0, (128, 1, 1), np.float32)
    env.reset(seed=0)
    previous = None
    for _ in range(5):
        obs, *_ = env.step(0)
        assert obs.shape == (128, 1, 1) and obs.dtype == np.float32
        assert np.array_equal(obs[:, 0, 0], ale_of(env).getRAM())
        if previous is not None:
            assert not np.array_equal(obs, previous), "the RAM changes as the game runs"
        previous = obs
    env.close()


def test_ram_shape_rule() -> None:
    assert update_shape((128,), 6, (1,), ["ram"]) == ((128, 1, 1), 6, (1,))
    assert update_shape((210, 160, 3), 6, (1,), ["ram"]) == ((128, 1, 1), 6, (1,))
    assert update_shape((84, 84), 6, (1,), ["ram"]) == ((128, 1, 1), 6, (1,))
    vector = update_space(spaces.Box(-10, 10, (5,), np.float32), spaces.Discrete(3), None, ["ram"])
    assert vector.observation == spaces.Box(-10.0, 10.0, (5, 1, 1), np.float32)


def test_ram_errors() -> None:
    with pytest.raises(
        ShapeRuleError,
        match=r"ram needs a Box observation: a RAM vector .*got observation shape \{'a': \(3,\)\}",
    ):
        update_shape({"a": (3,)}, 4, (1,), ["ram"])
    with pytest.raises(ShapeRuleError, match=r"ram needs .*got observation shape \(1, 2, 3, 4\)"):
        update_shape((1, 2, 3, 4), 4, (1,), ["ram"])
    with pytest.raises(ConfigError, match=r"ram reads the RAM of an ALE env .*non-ALE env"):
        RamWrapper(make_catalogue_env("image_hwc"))
    with pytest.raises(TypeError, match=r"ram needs a Box observation"):
        RamWrapper.new_space(spaces.Discrete(3), spaces.Discrete(2), spaces.Box(-1, 1, (1,)))
