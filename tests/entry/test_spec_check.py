"""``ding -m spec --check``: real values against the predicted spaces, at each step of the chain, in a real manager."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

from ding.config import read_config
from ding.entry.cli import main
from ding.entry.spec_check import check_config
from tests.envs import chain_envs

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHAIN = [("time_limit", {"max_episode_steps": 12}), ("frame_stack", {"n_frames": 2})]


def configs(
    env_type: str, manager: str = "base", chain: Any = CHAIN, **env: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    main_config = {"env": {"env_wrapper": chain, "collector_env_num": 2, "manager": {"shared_memory": False}, **env}}
    create_config = {
        "env": {"type": env_type, "import_names": [chain_envs.__name__]},
        "env_manager": {"type": manager},
        "policy": {"type": "dqn"},
    }
    return main_config, create_config


def test_a_dizoo_config_passes() -> None:
    main_config, create_config = read_config(ROOT / "dizoo/classic_control/cartpole/config/cartpole_dqn_config.py")
    report = check_config(main_config, create_config, 200)
    assert report.passed and report.layers_watched and report.env_steps >= 200 and report.episodes > 0
    assert report.lines()[0].startswith("check passed: 2") and "8 envs of the base manager" in report.lines()[0]


@pytest.mark.parametrize("manager", ["base", "subprocess"])
@pytest.mark.parametrize("env_type", ["chain_counting", "chain_property_counting"])
def test_a_chain_on_a_users_env_passes(env_type: str, manager: str) -> None:
    report = check_config(*configs(env_type, manager), 100)
    assert report.passed, report.lines()
    assert (report.chain_steps, report.layers_watched, report.episodes) == (3, True, 100 // 12)


def test_an_env_that_lies_about_its_bounds_is_caught_where_it_lies() -> None:
    report = check_config(*configs("chain_lying", lie="bounds"), 100)
    assert not report.passed and report.problems == []
    first = report.findings[0]
    assert (first.step, first.step_name) == (0, "env")
    assert first.reason == (
        "observation: value outside the declared Box(0.0, 1.0, (2,), float32): element 0 is 1.25, outside [0.0, 1.0]"
    )
    # 50 steps in each of the 2 envs: 4 whole episodes, and steps 5..12 of each leave the bounds
    assert first.first_at == 5 and first.count == 2 * 4 * (12 - 4)
    # the value travels on through every later step, and the report says where it parted from the prediction
    assert sorted({f.step for f in report.findings}) == [0, 1, 2, 3]
    assert report.lines()[-1] == "observation values part from the prediction at step 0 env"


def test_an_env_that_lies_about_its_dtype_is_caught_where_it_lies() -> None:
    report = check_config(*configs("chain_lying", "subprocess", lie="dtype"), 60)
    first = report.findings[0]
    assert (first.step, first.reason, first.first_at) == (0, "observation: dtype float64, declared float32", 0)
    # the time limit passes the float64 frames on; the frame stack casts them into its float32 buffer
    assert {f.step for f in report.findings} == {0, 1}


def test_an_env_without_a_chain_is_checked_at_its_output() -> None:
    report = check_config(*configs("chain_lying", chain=None, lie="bounds"), 50)
    assert {(f.step, f.step_name) for f in report.findings} == {(0, "env")}
    assert {f.where for f in report.findings} == {"returned by the env", "delivered by the base manager"}


def test_the_command_exits_1_and_prints_each_finding_on_a_line(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main_config, create_config = configs("chain_lying", lie="bounds")
    config = tmp_path / "lying_config.py"
    config.write_text(f"main_config = {main_config!r}\ncreate_config = {create_config!r}\n")
    assert main(["-m", "spec", "-c", str(config), "--check", "40"]) == 1
    out = capsys.readouterr().out.splitlines()
    report = out[out.index("") + 1 :][4:]  # after the table, a blank line, the byte counts and another blank line
    assert report[0].startswith("check failed: ") and "40 env steps" in report[0]
    assert report[1].startswith("step 0 env: observation: value outside the declared Box(0.0, 1.0, (2,), float32)")
    with pytest.raises(SystemExit) as exit_info:
        main(["-m", "spec", "-c", str(config), "--check", "0"])
    assert exit_info.value.code == 2 and "--check must be >= 1, got 0" in capsys.readouterr().err


def test_check_is_for_spec_only(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["-m", "serial", "-c", "cfg.py", "--check"])
    assert exit_info.value.code == 2 and "--check is not used by -m serial (only by -m spec)" in capsys.readouterr().err
