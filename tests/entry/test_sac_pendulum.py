"""SAC on Pendulum with the shipped config: the serial pipeline reaches stop_value -250 within 20k env steps."""

from __future__ import annotations

import csv
import pathlib

import pytest

from ding.config import read_config
from ding.entry import serial_pipeline
from tests.entry.test_cli import ROOT

PENDULUM_SAC = ROOT / "dizoo/classic_control/pendulum/config/pendulum_sac_config.py"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_sac_reaches_stop_value_on_pendulum(tmp_path: pathlib.Path, seed: int) -> None:
    main_config, create_config = read_config(PENDULUM_SAC)
    assert main_config.env.stop_value == -250
    result = serial_pipeline((main_config, create_config), seed=seed, max_env_step=20000, root=tmp_path)
    assert result.stop_value_reached, result.summary()
    assert result.env_step <= 20000 and result.best_eval_return is not None and result.best_eval_return >= -250
    with open(result.exp_dir / "log" / "eval.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows[-1]["stop_value_reached"] == "1"
    assert float(rows[0]["eval_episode_return_mean"]) < -250  # it had to learn
