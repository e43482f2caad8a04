"""Which replay buffer a config gets (from the env's spec trace and the policy), its bytes, and the memory check."""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from ding.config import compile_config, read_config
from ding.envs import DingEnvWrapper, EnvSpaces
from ding.envs.from_config import env_class
from ding.envs.probe import spec_trace_of
from ding.errors import ConfigError
from ding.policy.dqn import DQNPolicy
from ding.policy.nstep import NStepRule
from ding.utils.memory import mem_available
from ding.worker.buffer_plan import (
    ENV_RESERVE_NBYTES,
    TRAINER_RESERVE_NBYTES,
    ReplayPlan,
    build_replay_buffer,
    check_replay_memory,
    frame_stack_step,
    plan_replay_buffer,
)
from ding.worker.frame_buffer import FrameStackReplayBuffer
from ding.worker.naive_replay import NaiveReplayBuffer
from dizoo.atari.envs import AtariEnv

ROOT = pathlib.Path(__file__).resolve().parents[2]
PONG_TRACE = AtariEnv.spec_trace(AtariEnv.merge_config({"env_id": "ALE/Pong-v5"}))


def config_trace(path: str) -> Any:
    main, create = read_config(ROOT / path)
    cfg = compile_config(main, create, require_policy=False)
    return spec_trace_of(env_class(cfg.env), cfg.env)


def wrapped(chain: list[Any]) -> Any:
    return DingEnvWrapper.spec_trace(DingEnvWrapper.merge_config({"env_id": "CartPole-v1", "env_wrapper": chain}))


def test_a_frame_stack_is_found_where_it_last_changes_the_observation() -> None:
    assert frame_stack_step(PONG_TRACE) == "frame_stack(n_frames=4, fields=None)"
    stacked = wrapped([{"type": "frame_stack", "kwargs": {"n_frames": 3}}])
    assert stacked[-1][0] == "eval_episode_return()"  # appended by DingEnvWrapper; the observation stays a stack
    assert frame_stack_step(stacked) == "frame_stack(n_frames=3, fields=None)"
    assert frame_stack_step(wrapped(["frame_stack", "obs_norm"])) is None  # normalized after stacking
    assert frame_stack_step(wrapped([])) is None
    assert frame_stack_step(config_trace("dizoo/classic_control/cartpole/config/cartpole_dqn_config.py")) is None
    # dm_control pixels: uint8 frames stacked, then only the actions are normalized
    pixels = config_trace("dizoo/dmc/config/cartpole_swingup_pixels_sac_config.py")
    assert pixels[-1][0] == "normalized_action()"
    assert frame_stack_step(pixels) == "frame_stack(n_frames=3, fields=None)"


def dqn_cfg(**replay_buffer: Any) -> Any:
    return DQNPolicy.merge_config({"nstep": 3, "other": {"replay_buffer": replay_buffer}})


def test_the_plan_follows_the_trace_and_share_frames() -> None:
    rule = DQNPolicy.nstep_rule_of(dqn_cfg())
    pong = plan_replay_buffer(dqn_cfg(replay_buffer_size=1000), rule, PONG_TRACE)
    assert pong.kind == "frame_stack" and pong.capacity == 1000
    assert pong.transition_nbytes == FrameStackReplayBuffer.transition_nbytes(PONG_TRACE[-1][1])
    assert pong.reason == "the observation is a frame stack: frame_stack(n_frames=4, fields=None)"
    off = plan_replay_buffer(dqn_cfg(share_frames=False), rule, PONG_TRACE)
    assert (off.kind, off.capacity, off.reason) == ("naive", 10000, "policy.other.replay_buffer.share_frames=False")
    obs = PONG_TRACE[-1][1].observation
    assert obs.shape == (4, 84, 84)
    # obs and next_obs whole, an int64 action, the Python objects of a sample dict
    assert off.transition_nbytes == NaiveReplayBuffer.transition_nbytes(PONG_TRACE[-1][1])
    assert off.transition_nbytes == 2 * 4 * 84 * 84 * obs.dtype.itemsize + 8 + 512
    assert plan_replay_buffer(dqn_cfg(share_frames=True), rule, PONG_TRACE).kind == "frame_stack"
    no_rule = plan_replay_buffer(dqn_cfg(), None, PONG_TRACE)
    assert (no_rule.kind, no_rule.reason) == ("naive", "the policy states no n-step rule")
    cartpole = wrapped([])
    assert plan_replay_buffer(dqn_cfg(), rule, cartpole).reason == "the observation is not a frame stack"
    with pytest.raises(ConfigError, match=r"share_frames=True, but the env's observation is not a frame stack .*"
                       r"the env's last step is 'eval_episode_return\(\)'\); set it to None or False"):  # fmt: skip
        plan_replay_buffer(dqn_cfg(share_frames=True), rule, cartpole)
    with pytest.raises(ConfigError, match=r"replay_buffer\.share_frames must be a bool or None, got 'yes'"):
        plan_replay_buffer(dqn_cfg(share_frames="yes"), rule, cartpole)
    with pytest.raises(ConfigError, match=r"replay_buffer_size must be an int >= 2, got 1"):
        plan_replay_buffer(dqn_cfg(replay_buffer_size=1), rule, PONG_TRACE)


def test_build_replay_buffer_makes_what_the_plan_says() -> None:
    rule = NStepRule(3, 0.99)
    frame_plan = plan_replay_buffer(dqn_cfg(replay_buffer_size=50), rule, PONG_TRACE)
    buffer = build_replay_buffer(frame_plan, PONG_TRACE[-1][1], rule, seed=0)
    assert isinstance(buffer, FrameStackReplayBuffer) and buffer.capacity == 50
    naive = build_replay_buffer(ReplayPlan("naive", 7, 600, "x"), PONG_TRACE[-1][1], None, seed=0)
    assert isinstance(naive, NaiveReplayBuffer) and naive.capacity == 7
    with pytest.raises(ConfigError, match=r"needs the policy's n-step rule"):
        build_replay_buffer(frame_plan, PONG_TRACE[-1][1], None, seed=0)


def test_the_memory_check_names_the_numbers_and_the_key() -> None:
    plan = ReplayPlan("frame_stack", 1_000_000, 7146, "the observation is a frame stack: frame_stack(n_frames=4)")
    reserve = TRAINER_RESERVE_NBYTES + 12 * ENV_RESERVE_NBYTES
    check_replay_memory(plan, 12, plan.nbytes + reserve)  # just fits
    with pytest.raises(ConfigError) as info:
        check_replay_memory(plan, 12, plan.nbytes + reserve - 1)
    message = str(info.value)
    assert (
        "the frame_stack replay buffer (the observation is a frame stack: frame_stack(n_frames=4)) needs 6.7 GiB"
        in (message)
    )
    assert "1,000,000 transitions x 7,146 bytes per stored transition, but 6.7 GiB are available" in message
    assert "less 2.5 GiB kept for the trainer and its 12 envs" in message
    assert message.endswith("lower policy.other.replay_buffer.replay_buffer_size to at most 999,999")
    with pytest.raises(ConfigError, match=r"but 0 bytes are available .* to at most 0$"):
        check_replay_memory(plan, 0, 1000)


def test_mem_available_reads_the_kernel_report(tmp_path: pathlib.Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24684096 kB\nMemFree:  100 kB\nMemAvailable:   23986808 kB\n")
    assert mem_available(meminfo) == 23986808 * 1024
    meminfo.write_text("MemTotal:       24684096 kB\n")
    assert mem_available(meminfo) is None
    assert mem_available(tmp_path / "missing") is None
    available = mem_available()
    assert available is not None and available > 0  # this is Linux


def test_transition_bytes_follow_the_spaces() -> None:
    pong_uint8 = EnvSpaces(spaces.Box(0, 255, (4, 84, 84), np.uint8), spaces.Discrete(6))
    assert FrameStackReplayBuffer.transition_nbytes(pong_uint8) == 7056 + 90
    pong_float = EnvSpaces(spaces.Box(0, 1, (4, 84, 84), np.float32), spaces.Discrete(6))
    assert FrameStackReplayBuffer.transition_nbytes(pong_float) == 4 * 7056 + 90
    pixels_sac = EnvSpaces(spaces.Box(0, 255, (3, 84, 84), np.uint8), spaces.Box(-1, 1, (6,), np.float32))
    # frame, 4 stack ids, succ, number, 6 float32 actions, reward, two flags, two ready-list entries
    assert FrameStackReplayBuffer.transition_nbytes(pixels_sac) == 7056 + 4 * 8 + 8 + 8 + 24 + 8 + 2 + 16
