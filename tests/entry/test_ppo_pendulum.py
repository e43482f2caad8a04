"""Continuous PPO on Pendulum with the shipped config: serial_pipeline_onpolicy reaches -250 within 200k env steps."""

from __future__ import annotations

import csv
import pathlib

import pytest

from ding.config import read_config
from ding.entry import serial_pipeline_onpolicy
from tests.entry.test_cli import ROOT

PENDULUM_PPO = ROOT / "dizoo/classic_control/pendulum/config/pendulum_ppo_config.py"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_continuous_ppo_reaches_stop_value_on_pendulum(tmp_path: pathlib.Path, seed: int) -> None:
    main_config, create_config = read_config(PENDULUM_PPO)
    assert main_config.env.stop_value == -250 and main_config.policy.action_space == "continuous"
    result = serial_pipeline_onpolicy((main_config, create_config), seed=seed, max_env_step=200000, root=tmp_path)
    assert result.stop_value_reached, result.summary()
    assert result.env_step <= 200000 and result.best_eval_return is not None and result.best_eval_return >= -250
    with open(result.exp_dir / "log" / "eval.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows[-1]["stop_value_reached"] == "1"
    assert float(rows[0]["eval_episode_return_mean"]) < -250  # it had to learn
