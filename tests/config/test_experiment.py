"""The experiment directory's name, shared by the serial pipeline and compile_config(save_cfg=True)."""

from __future__ import annotations

import datetime
import pathlib

import pytest

from ding.config.experiment import experiment_name, renewed_name
from ding.entry import utils as entry_utils


def test_the_serial_entries_use_the_same_naming() -> None:
    assert entry_utils.experiment_name is experiment_name


@pytest.mark.parametrize(
    ("name", "seed", "expected"),
    [
        ("cartpole_dqn_seed0", 3, "cartpole_dqn_seed3"),
        ("cartpole_dqn_seed12", 0, "cartpole_dqn_seed0"),
        ("pong", 0, "pong_seed0"),
        ("seed0_first", 1, "seed0_first_seed1"),
        (None, 1, "default_experiment_seed1"),
        ("", 2, "default_experiment_seed2"),
    ],
)
def test_experiment_name_replaces_a_seed_suffix(name: str | None, seed: int, expected: str) -> None:
    assert experiment_name(name, seed) == expected


def test_renewed_name_keeps_a_free_name_and_stamps_a_taken_one(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    now = datetime.datetime(2024, 5, 6, 7, 8, 9)
    assert renewed_name("run_seed0", now) == "run_seed0"
    (tmp_path / "run_seed0").mkdir()
    assert renewed_name("run_seed0", now) == "run_seed0_240506_070809"
    (tmp_path / "run_seed0_240506_070809").mkdir()
    assert renewed_name("run_seed0", now) == "run_seed0_240506_070809_2"
