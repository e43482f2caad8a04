"""What runs show: ``python cfg.py`` prints what ``ding -m serial`` prints, the table across seeds, and the
collector's rates in tensorboard."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

from ding.config import read_config
from ding.entry import serial_pipeline
from tests.entry.test_cli import ROOT

TINY = """
from easydict import EasyDict

main_config = EasyDict(dict(
    exp_name="tiny",
    env=dict(collector_env_num=2, evaluator_env_num=2, n_evaluator_episode=2, stop_value=10**6),
    policy=dict(
        model=dict(encoder_hidden_size_list=[16]),
        learn=dict(update_per_collect=1, batch_size=16, learner=dict(hook=dict(log_show_after_iter=5))),
        collect=dict(n_sample=8),
        eval=dict(evaluator=dict(eval_freq=10)),
    ),
))
create_config = EasyDict(dict(
    env=dict(type="cartpole", import_names=["dizoo.classic_control.cartpole.envs.cartpole_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="dqn"),
))

if __name__ == "__main__":
    {prelude}
    from ding.entry import serial_pipeline

    serial_pipeline((main_config, create_config), seed=0, max_env_step=160)
"""


def run_file(path: pathlib.Path, cwd: pathlib.Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(path)],
        cwd=cwd,
        capture_output=True,  # stderr is a pipe, not a terminal
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_running_a_config_file_prints_what_the_command_prints(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "tiny_config.py"
    config.write_text(TINY.format(prelude="pass"))
    script = run_file(config, tmp_path)
    assert script.returncode == 0, script.stderr
    command = subprocess.run(
        [sys.executable, "-m", "ding.entry.cli", "-m", "serial", "-c", str(config), "--env-step", "160"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert command.returncode == 0, command.stderr
    renewed = command.stderr.splitlines()[0]  # the second run into tiny_seed0 writes a directory of its own
    match = re.fullmatch(
        rf"experiment directory {re.escape(str(tmp_path))}/tiny_seed0 holds an earlier run; "
        rf"this run writes {re.escape(str(tmp_path))}/(tiny_seed0_\d{{6}}_\d{{6}})",
        renewed,
    )
    assert match, renewed
    for output, exp_name in ((script, "tiny_seed0"), (command, match.group(1))):
        lines = [line for line in output.stderr.splitlines() if line != renewed]
        assert lines[0].startswith(f"experiment {exp_name}: env cartpole (2 collector, 2 evaluator envs")
        evaluations = [line for line in lines if line.startswith("evaluation at train iter ")]
        assert len(evaluations) >= 3 and "evaluation at train iter 0, env step 0: return " in evaluations[0]
        assert any(line.startswith("collector_step ") and "envstep_per_wall_sec=" in line for line in lines)
        assert re.fullmatch(
            r"seed 0: stopped before stop_value 1000000 \(best eval return [\d.]+\) at env step 16\d, "
            rf"train iter \d+ in [\d.]+ s; .*/{exp_name}\n",
            output.stdout,
        ), output.stdout
    strip = [re.sub(r"[\d.]+ s\b", "", line) for line in script.stderr.splitlines() if "evaluation at" in line]
    assert strip == [re.sub(r"[\d.]+ s\b", "", line) for line in command.stderr.splitlines() if "evaluation at" in line]


def test_a_script_that_configures_logging_keeps_its_own_format(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "tiny_config.py"
    prelude = "import logging; logging.basicConfig(level=logging.INFO, format='LOG %(name)s %(message)s')"
    config.write_text(TINY.format(prelude=prelude))
    script = run_file(config, tmp_path)
    assert script.returncode == 0, script.stderr
    evaluations = [line for line in script.stderr.splitlines() if "evaluation at train iter" in line]
    assert evaluations and all(line.startswith("LOG ding.serial evaluation at") for line in evaluations)
    assert script.stdout == ""  # the script reports the result itself


SEEDS = ("-s", "0", "-s", "1", "-s", "2")


def test_several_seeds_end_with_a_table(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "tiny_config.py"
    config.write_text(TINY.format(prelude="pass"))
    command = subprocess.run(
        [sys.executable, "-m", "ding.entry.cli", "-m", "serial", "-c", str(config), "--env-step", "64", *SEEDS],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert command.returncode == 0, command.stderr
    lines = command.stdout.splitlines()
    assert [line.split(":")[0] for line in lines[:3]] == ["seed 0", "seed 1", "seed 2"]
    assert re.split(r"\s{2,}", lines[3]) == [
        "seed",
        "final eval return",
        "best eval return",
        "env steps",
        "wall time (s)",
    ]
    rows = {line.split()[0]: line.split()[1:] for line in lines[4:]}
    assert list(rows) == ["0", "1", "2", "mean", "std"]
    finals = [float(rows[seed][0]) for seed in "012"]
    bests = [float(rows[seed][1]) for seed in "012"]
    assert float(rows["mean"][0]) == pytest.approx(sum(finals) / 3, abs=0.01)
    assert float(rows["mean"][1]) == pytest.approx(sum(bests) / 3, abs=0.01)
    assert all(best >= final for best, final in zip(bests, finals, strict=True))
    assert all(int(rows[seed][2]) == 64 for seed in "012") and rows["std"][2] == "0"
    for seed in "012":
        assert (tmp_path / f"tiny_seed{seed}" / "total_config.py").is_file()


def test_tensorboard_gets_the_collectors_rates_and_returns(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    config = tmp_path / "tiny_config.py"
    config.write_text(TINY.format(prelude="pass"))
    result = serial_pipeline(read_config(config), max_env_step=400, root=tmp_path, progress=False)
    events = EventAccumulator(str(result.exp_dir / "log" / "serial"))
    events.Reload()
    fps = events.Scalars("collector_step/envstep_per_wall_sec")
    lengths = [e.value for e in events.Scalars("collector_step/episode_length_mean")]
    returns = [e.value for e in events.Scalars("collector_step/episode_return_mean")]
    assert len(fps) >= 3 and all(e.value > 0 for e in fps)
    assert lengths and all(8 <= length <= 500 for length in lengths)  # CartPole episodes: 8 to 500 steps
    assert lengths == pytest.approx(returns)  # CartPole: reward 1 per step, so each episode's length is its return
    finished = [e.value for e in events.Scalars("collector_step/episodes_finished")]
    assert len(finished) == len(fps) and sum(finished) <= result.env_step / 8
    assert "collector_step/avg_envstep_per_episode" not in events.Tags()["scalars"]
