"""The serial pipeline refuses, before any env runs, a replay buffer that cannot fit in the available memory."""

from __future__ import annotations

import copy
import multiprocessing
import pathlib
import re
import time
from typing import Any

import pytest

from ding.config import read_config
from ding.entry import serial_pipeline
from ding.entry.cli import main
from ding.errors import ConfigError
from ding.utils.memory import mem_available
from tests.worker.frame_envs import frames_cfg

ROOT = pathlib.Path(__file__).resolve().parents[2]
PONG = ROOT / "dizoo/atari/config/pong_dqn_config.py"


def test_a_huge_pong_buffer_is_refused_at_once_with_the_numbers(tmp_path: pathlib.Path) -> None:
    main_config, create_config = read_config(PONG)
    main_config = copy.deepcopy(main_config)
    main_config.policy.other.replay_buffer.replay_buffer_size = 10**9
    started = time.monotonic()
    with pytest.raises(ConfigError) as info:
        serial_pipeline((main_config, create_config), seed=0, root=tmp_path, progress=False)
    assert time.monotonic() - started < 30
    message = str(info.value)
    per_transition = int(re.search(r"x ([\d,]+) bytes per stored transition", message)[1].replace(",", ""))  # type: ignore[index]
    assert per_transition == 7146  # uint8 frames, each stored once
    assert message.startswith("the frame_stack replay buffer (the observation is a frame stack: frame_stack(n_frames=4")
    assert f"needs {per_transition * 10**9 / 2**30:.1f} GiB: 1,000,000,000 transitions x" in message
    assert "kept for the trainer and its 12 envs" in message and "MemAvailable" in message
    assert re.search(r"lower policy\.other\.replay_buffer\.replay_buffer_size to at most [\d,]+$", message)
    assert not list(tmp_path.iterdir())  # nothing written
    assert multiprocessing.active_children() == []  # no env worker started


def frames_config(reset_log: pathlib.Path, replay_buffer_size: int) -> tuple[dict[str, Any], dict[str, Any]]:
    env = {**frames_cfg(4, frame_shape=(5,), reset_log=str(reset_log)), "stop_value": 10**9}
    main_config = {
        "exp_name": "frames",
        "env": {**env, "collector_env_num": 2, "evaluator_env_num": 1, "n_evaluator_episode": 1},
        "policy": {"model": {"encoder_hidden_size_list": [16]}, "other": {
            "replay_buffer": {"replay_buffer_size": replay_buffer_size}}},
    }  # fmt: skip
    create_config = {
        "env": {"type": "ding_env_wrapper"},
        "env_manager": {"type": "subprocess"},
        "policy": {"type": "dqn"},
    }
    return main_config, create_config


def test_the_refusal_comes_before_any_env_is_reset(tmp_path: pathlib.Path) -> None:
    available = mem_available()
    assert available is not None
    per_transition = 5 + 90  # uint8 frames of 5 values, 5 frame ids and the rest as Pong's
    with pytest.raises(ConfigError, match=rf"x {per_transition} bytes per stored transition, .* to at most [\d,]+$"):
        serial_pipeline(frames_config(tmp_path / "resets", available), root=tmp_path / "runs", progress=False)
    assert not (tmp_path / "resets").exists() and not (tmp_path / "runs").exists()
    result = serial_pipeline(frames_config(tmp_path / "resets", 1000), max_env_step=50, root=tmp_path, progress=False)
    assert result.env_step >= 50 and (tmp_path / "resets").read_text().count("reset") >= 3  # the check passes


def test_the_command_line_reports_it_in_one_line(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "huge.py"
    config.write_text(PONG.read_text().replace("replay_buffer_size=20000", "replay_buffer_size=10**10"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(["-m", "serial", "-c", str(config)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("ding: error: the frame_stack replay buffer") and "10,000,000,000 transitions" in err
    assert not (tmp_path / "pong_dqn_seed0").exists()
