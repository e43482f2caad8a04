"""``ding -m spec``'s byte counts, from the spec alone, against hand computation for CartPole and Pong."""

from __future__ import annotations

import pathlib

import numpy as np

from ding.config import compile_config, read_config
from ding.entry.spec import byte_counts, spec_report, spec_trace_from_config

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "dizoo/classic_control/cartpole/config"


def counts(path: pathlib.Path) -> list[str]:
    main_config, create_config = read_config(path)
    cfg = compile_config(main_config, create_config, require_policy=False)
    return byte_counts(cfg, spec_trace_from_config(main_config, create_config))


def test_cartpole_dqn() -> None:
    step, batch, stored = counts(CONFIGS / "cartpole_dqn_config.py")
    # 4 float32 observations, an int64 action, a float32 reward
    assert step == "bytes per env step: 28 (obs 16 + action 8 + reward 4)"
    # per env: ready and final observations 2 x 16, reward 4, four end flags 4, two int64 control words 16, action 8
    per_env = 2 * 16 + 4 + 4 + 16 + 8
    assert batch == (
        f"bytes per shared-memory batch: {8 * per_env:,} for 8 collector envs, {5 * per_env:,} for 5 evaluator envs "
        "(base manager, shared_memory=False)"
    )
    # a sample dict holds obs and next_obs, the action and 512 bytes of Python objects
    assert stored == (
        f"bytes per stored transition: {2 * 16 + 8 + 512}, naive replay buffer (the observation is not a frame stack); "
        f"20,000 transitions: {20000 * 552 / 2**20:.1f} MiB"
    )


def test_cartpole_ppo_has_no_replay_buffer() -> None:
    assert counts(CONFIGS / "cartpole_ppo_config.py")[2] == (
        "bytes per stored transition: n/a (ppo learns on-policy: no replay buffer)"
    )


def test_pong_dqn() -> None:
    path = ROOT / "dizoo/atari/config/pong_dqn_config.py"
    main_config, create_config = read_config(path)
    obs = spec_trace_from_config(main_config, create_config)[-1][1].observation
    assert obs.shape == (4, 84, 84) and obs.dtype == np.uint8
    frame = 84 * 84
    step, batch, stored = counts(path)
    assert step == f"bytes per env step: {4 * frame + 12:,} (obs {4 * frame:,} + action 8 + reward 4)"
    per_env = 2 * 4 * frame + 4 + 4 + 16 + 8
    assert batch == (
        f"bytes per shared-memory batch: {8 * per_env:,} for 8 collector envs, {4 * per_env:,} for 4 evaluator envs "
        "(subprocess manager, shared_memory=True)"
    )
    # one frame, 5 frame ids, next-transition link, push number, action, reward, done and end flags, two
    # entries of the list of drawable transitions
    per_transition = frame + 5 * 8 + 8 + 8 + 8 + 8 + 1 + 1 + 8 + 8
    assert per_transition == 7146 <= 8 * 1024
    assert stored == (
        f"bytes per stored transition: {per_transition:,}, frame_stack replay buffer (the observation is a frame "
        f"stack: frame_stack(n_frames=4, fields=None)); 20,000 transitions: {20000 * per_transition / 2**20:.1f} MiB"
    )


def test_the_report_is_the_table_then_the_counts() -> None:
    main_config, create_config = read_config(CONFIGS / "cartpole_dqn_config.py")
    lines = spec_report(main_config, create_config).splitlines()
    assert lines[0].startswith("| #") and lines[-4] == ""
    assert [line.split(":")[0] for line in lines[-3:]] == [
        "bytes per env step", "bytes per shared-memory batch", "bytes per stored transition"
    ]  # fmt: skip
