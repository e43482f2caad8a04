"""Prioritized replay in whole runs: CartPole DQN with ``priority=True`` learns to its stop value, and a short Pong run
draws from the prioritized frame-sharing buffer."""

from __future__ import annotations

import pathlib
import re

import pytest

from ding.entry import serial_pipeline
from ding.entry.cli import main
from tests.entry.test_serial import cartpole
from tests.entry.test_serial_frames import PONG_SMOKE, buffer_line


def test_cartpole_dqn_with_prioritized_replay_reaches_its_stop_value(tmp_path: pathlib.Path) -> None:
    main_config, create_config = cartpole(priority=True, priority_IS_weight=True)
    result = serial_pipeline((main_config, create_config), seed=0, max_env_step=50_000, root=tmp_path, progress=False)
    assert "prioritized naive replay buffer" in buffer_line(result.exp_dir)
    assert "alpha 0.6, beta 0.4, anneal_step 100000" in buffer_line(result.exp_dir)
    assert result.stop_value_reached and result.best_eval_return is not None and result.best_eval_return >= 195


@pytest.mark.slow
def test_a_short_pong_dqn_run_with_prioritized_replay(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("ale_py")
    config = tmp_path / "pong_prioritized_config.py"
    config.write_text(
        PONG_SMOKE
        + "main_config.policy.update(priority=True, priority_IS_weight=True)\n"
        + "main_config.policy.other.replay_buffer.update(alpha=0.6, beta=0.4, anneal_step=1000)\n"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["-m", "serial", "-c", str(config), "-s", "0", "--env-step", "400"]) == 0
    exp_dir = tmp_path / "pong_smoke_seed0"
    line = buffer_line(exp_dir)
    assert "prioritized frame_stack replay buffer" in line and "anneal_step 1000" in line
    out = capsys.readouterr().out
    assert re.search(r"train iter [1-9]\d* in", out), out  # it learned from batches drawn by priority
    assert list((exp_dir / "ckpt").glob("iteration_*.pth.tar"))
