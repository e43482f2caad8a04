"""``max_and_skip`` driving the ALE emulator directly gives what stepping the env frame by frame gives."""

from __future__ import annotations

import itertools
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from ding.envs.env_wrappers.ale import direct_ale_env
from ding.envs.env_wrappers.atari import MaxAndSkipWrapper, NoopResetWrapper
from tests.envs.env_wrappers.scripted import ScriptedEnv

ale_py = pytest.importorskip("ale_py")
gym.register_envs(ale_py)

Step = tuple[np.ndarray, Any, bool, bool, dict[str, Any]]


def make_ale(game: str, **kwargs: Any) -> gym.Env[Any, Any]:
    kwargs.setdefault("repeat_action_probability", 0.0)
    return gym.make(f"ALE/{game}-v5", frameskip=1, **kwargs)


def skipping(game: str, skip: int, direct: bool, **kwargs: Any) -> MaxAndSkipWrapper:
    """``max_and_skip`` over ``noop_reset`` over the emulator, as in ``atari_default``."""
    return MaxAndSkipWrapper(NoopResetWrapper(make_ale(game, **kwargs), noop_max=30), skip=skip, direct_emulator=direct)


def play(env: MaxAndSkipWrapper, seed: int, actions: list[int]) -> list[Step]:
    """Every step's result (a reset's observation as a step with no reward), resetting at each episode end."""
    obs, info = env.reset(seed=seed)
    out: list[Step] = [(obs, None, False, False, info)]
    for action in actions:
        step = env.step(action)
        out.append(step)
        if step[2] or step[3]:
            obs, info = env.reset()
            out.append((obs, None, False, False, info))
    return out


def assert_same(direct: list[Step], frames: list[Step]) -> None:
    assert len(direct) == len(frames)
    for t, (a, b) in enumerate(zip(direct, frames, strict=True)):
        assert a[0].dtype == b[0].dtype and a[0].shape == b[0].shape, t
        assert np.array_equal(a[0], b[0]), t
        assert a[1] == b[1] and type(a[1]) is type(b[1]), (t, a[1], b[1])
        assert a[2:] == b[2:], t


def frames_of_last_steps(steps: list[Step]) -> list[int]:
    """How many emulator frames each episode's final step played."""
    out = []
    for before, after in itertools.pairwise(steps):
        if after[2] or after[3]:
            out.append(after[4]["episode_frame_number"] - before[4]["episode_frame_number"])
    return out


# Ends inside the skip: ALE truncates a game at ``max_num_frames_per_episode`` frames, which the reset's random
# no-ops shift within the skip; Breakout and Space Invaders also end for real (game over) within the run.
CASES = [
    ("Pong", 0.0, 4, "rgb", 151),
    ("Breakout", 0.0, 4, "rgb", None),
    ("Breakout", 0.25, 3, "grayscale", 257),
    ("SpaceInvaders", 0.25, 4, "rgb", None),
    ("Qbert", 0.0, 5, "grayscale", 603),
    ("Qbert", 0.25, 2, "rgb", 401),
]


@pytest.mark.parametrize(("game", "sticky", "skip", "obs_type", "cap"), CASES)
def test_direct_emulator_gives_what_stepping_the_env_gives(
    game: str, sticky: float, skip: int, obs_type: str, cap: int | None
) -> None:
    kwargs: dict[str, Any] = {"repeat_action_probability": sticky, "obs_type": obs_type}
    if cap is not None:
        kwargs["max_num_frames_per_episode"] = cap
    n_actions = make_ale(game).action_space.n
    actions = [int(a) for a in np.random.default_rng(7).integers(n_actions, size=900 // skip * 4)]
    direct, frames = skipping(game, skip, True, **kwargs), skipping(game, skip, False, **kwargs)
    result = play(direct, 3, actions)
    assert direct.emulator_direct and not frames.emulator_direct
    expected = play(frames, 3, actions)
    assert_same(result, expected)
    ends = frames_of_last_steps(result)
    assert ends and any(n < skip for n in ends), ends  # some episodes ended inside the skip
    assert any(step[1] for step in result[1:]) or game == "Pong"  # rewards were compared, not only zeros
    direct.close()
    frames.close()


def test_direct_emulator_reports_lives_and_real_game_over() -> None:
    actions = [int(a) for a in np.random.default_rng(1).integers(4, size=3000)]
    direct, frames = skipping("Breakout", 4, True), skipping("Breakout", 4, False)
    result, expected = play(direct, 0, actions), play(frames, 0, actions)
    assert_same(result, expected)
    lives = [step[4]["lives"] for step in result]
    assert max(lives) == 5 and min(lives) == 0
    assert any(step[2] for step in result) and not any(step[3] for step in result)
    direct.close()
    frames.close()


def test_first_step_goes_through_the_env_and_its_order_check() -> None:
    env = skipping("Pong", 4, True)
    with pytest.raises(gym.error.ResetNeeded, match=r"Cannot call env.step\(\) before calling env.reset\(\)"):
        env.step(0)
    assert not env.emulator_direct
    env.reset(seed=0)
    env.step(0)
    assert env.emulator_direct
    env.close()


def test_direct_ale_env_only_where_nothing_in_between_can_tell() -> None:
    class Passing(gym.Wrapper[Any, Any, Any, Any]):
        def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
            return self.env.step(action)

    plain = make_ale("Pong")
    assert direct_ale_env(plain) is plain.unwrapped
    assert direct_ale_env(NoopResetWrapper(plain)) is plain.unwrapped  # only resets differently
    assert direct_ale_env(Passing(plain)) is None  # a step of its own: it could change anything
    assert direct_ale_env(make_ale("Pong", obs_type="ram")) is None
    assert direct_ale_env(gym.make("ALE/Pong-v5", frameskip=4)) is None
    assert direct_ale_env(ScriptedEnv()) is None
    assert direct_ale_env(gym.make("CartPole-v1")) is None
    wrapped = MaxAndSkipWrapper(Passing(make_ale("Pong")))
    wrapped.reset(seed=0)
    wrapped.step(0)
    wrapped.step(0)
    assert not wrapped.emulator_direct


def test_direct_emulator_returns_float_rewards_and_new_frames() -> None:
    env = skipping("Pong", 4, True)
    env.reset(seed=0)
    first, *_ = env.step(0)
    kept = first.copy()
    for _ in range(20):
        obs, reward, *_ = env.step(2)
        assert isinstance(reward, float) and obs is not first
    assert np.array_equal(first, kept), "a returned frame must not change on later steps"
    env.close()
