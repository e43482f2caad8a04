"""The serial pipeline picks the frame-sharing replay buffer for frame-stack observations, and trains with it."""

from __future__ import annotations

import copy
import pathlib
import re
from typing import Any

import pytest

from ding.config import read_config
from ding.entry import serial_pipeline
from ding.entry.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
CARTPOLE = ROOT / "dizoo/classic_control/cartpole/config"


def stacked(config: str, n_frames: int, nstep: int, **replay_buffer: Any) -> tuple[Any, Any]:
    """A CartPole config whose observation is the last ``n_frames`` observations."""
    main_config, create_config = read_config(CARTPOLE / config)
    main_config = copy.deepcopy(main_config)
    main_config.env.env_wrapper = [{"type": "frame_stack", "kwargs": {"n_frames": n_frames}}]
    main_config.policy.nstep = nstep
    main_config.policy.other.replay_buffer.update(replay_buffer)
    return main_config, create_config


def buffer_line(exp_dir: pathlib.Path) -> str:
    lines = (exp_dir / "log" / "serial_logger.txt").read_text().splitlines()
    return next(line for line in lines if "replay buffer (" in line)


@pytest.mark.parametrize(("config", "seed"), [("cartpole_dqn_config.py", 0), ("cartpole_dqn_config.py", 1),
                                              ("cartpole_c51_config.py", 0)])  # fmt: skip
def test_frame_stacked_cartpole_reaches_its_stop_value_with_the_frame_buffer(
    config: str, seed: int, tmp_path: pathlib.Path
) -> None:
    result = serial_pipeline(stacked(config, 4, 3), seed=seed, max_env_step=30_000, root=tmp_path, progress=False)
    assert result.stop_value_reached, result.summary()
    line = buffer_line(result.exp_dir)
    assert "frame_stack replay buffer (the observation is a frame stack: frame_stack(n_frames=4, fields=None))" in line


def test_share_frames_false_keeps_the_naive_buffer_and_the_same_seed_gives_the_same_run(tmp_path: pathlib.Path) -> None:
    def run(name: str, **replay_buffer: Any) -> Any:
        config = stacked("cartpole_dqn_config.py", 2, 1, **replay_buffer)
        return serial_pipeline(config, seed=3, max_env_step=400, root=tmp_path, exp_name=name, progress=False)

    naive = run("naive", share_frames=False)
    assert "naive replay buffer (policy.other.replay_buffer.share_frames=False)" in buffer_line(naive.exp_dir)
    first, again = run("a"), run("b")
    assert "frame_stack replay buffer" in buffer_line(first.exp_dir)
    assert (first.env_step, first.train_iter, first.last_eval_return) == (
        again.env_step,
        again.train_iter,
        again.last_eval_return,
    )
    assert first.train_iter > 0


PONG_SMOKE = """
import copy

from dizoo.atari.config.pong_dqn_config import create_config, main_config

main_config = copy.deepcopy(main_config)  # other runs of this process import it too: leave it as it is

main_config.exp_name = "pong_smoke"
main_config.env.update(collector_env_num=2, evaluator_env_num=1, n_evaluator_episode=1, max_episode_steps=100)
main_config.policy.learn.update(batch_size=16, update_per_collect=2)
main_config.policy.collect.n_sample = 32
main_config.policy.other.replay_buffer.replay_buffer_size = 2000
main_config.policy.eval.evaluator.eval_freq = 10**6
"""


def test_a_short_pong_dqn_run_through_the_command_line(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "pong_smoke_config.py"
    config.write_text(PONG_SMOKE)
    monkeypatch.chdir(tmp_path)
    assert main(["-m", "serial", "-c", str(config), "-s", "0", "--env-step", "300"]) == 0
    exp_dir = tmp_path / "pong_smoke_seed0"
    line = buffer_line(exp_dir)
    assert "frame_stack replay buffer (the observation is a frame stack: frame_stack(n_frames=4, fields=None))" in line
    assert "2,000 transitions x" in line
    out = capsys.readouterr().out
    assert "seed 0: stopped before stop_value 20" in out and "at env step 3" in out
    assert re.search(r"train iter [1-9]\d* in", out), out  # it learned from the frame-sharing buffer
    assert list((exp_dir / "ckpt").glob("iteration_*.pth.tar"))


DMC_PIXELS_SMOKE = """
import copy

from dizoo.dmc.config.cartpole_swingup_pixels_sac_config import create_config, main_config

main_config = copy.deepcopy(main_config)  # other runs of this process import it too: leave it as it is

main_config.exp_name = "dmc_smoke"
main_config.env.update(evaluator_env_num=1, n_evaluator_episode=1)
main_config.policy.random_collect_size = 64
main_config.policy.learn.batch_size = 16
main_config.policy.eval.evaluator.eval_freq = 10**6
"""


@pytest.mark.slow
def test_sac_from_dm_control_pixels_learns_from_the_frame_buffer(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "dmc_smoke_config.py"
    config.write_text(DMC_PIXELS_SMOKE)
    monkeypatch.chdir(tmp_path)
    assert main(["-m", "serial", "-c", str(config), "-s", "0", "--env-step", "150"]) == 0
    line = buffer_line(tmp_path / "dmc_smoke_seed0")
    assert "frame_stack replay buffer (the observation is a frame stack: frame_stack(n_frames=3, fields=None))" in line
    assert re.search(r"train iter [1-9]\d* in", capsys.readouterr().out)
