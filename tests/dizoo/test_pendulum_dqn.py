"""DQN on Pendulum with 11 discrete torques, the shipped config: the serial pipeline reaches stop_value -250."""

from __future__ import annotations

import csv
import pathlib

import pytest

from ding.config import read_config
from ding.entry import serial_pipeline
from tests.dizoo.test_configs import ROOT

PENDULUM_DQN = ROOT / "dizoo/classic_control/pendulum/config/pendulum_dqn_config.py"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_dqn_reaches_stop_value_on_discrete_pendulum(tmp_path: pathlib.Path, seed: int) -> None:
    main_config, create_config = read_config(PENDULUM_DQN)
    assert main_config.env.stop_value == -250 and main_config.env.continuous is False
    result = serial_pipeline((main_config, create_config), seed=seed, max_env_step=20000, root=tmp_path)
    assert result.stop_value_reached, result.summary()
    with open(result.exp_dir / "log" / "eval.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows[-1]["stop_value_reached"] == "1" and float(rows[0]["eval_episode_return_mean"]) < -250
