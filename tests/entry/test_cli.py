"""The ding command line: spec mode output and one-line errors."""

from __future__ import annotations

import pathlib

import pytest

from ding.entry.cli import main
from tests.ding_cli import run_ding

ROOT = pathlib.Path(__file__).resolve().parents[2]
CARTPOLE = str(ROOT / "dizoo/classic_control/cartpole/config/cartpole_dqn_config.py")


def test_spec_prints_chain_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-m", "spec", "-c", CARTPOLE]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("| #") and "bytes/step" in out[0]
    assert any("eval_episode_return" in line and "(4,) float32" in line and "Discrete(2)" in line for line in out)
    table = out[: out.index("")]
    # 4 float32 obs + 1 int64 action + 1 float32 reward
    assert table[-1].rstrip(" |").endswith("28")
    # then the byte counts README shows
    assert out[len(table) + 1 :] == [
        "bytes per env step: 28 (obs 16 + action 8 + reward 4)",
        "bytes per shared-memory batch: 512 for 8 collector envs, 320 for 5 evaluator envs (base manager, "
        "shared_memory=False)",
        "bytes per stored transition: 552, naive replay buffer (the observation is not a frame stack); "
        "20,000 transitions: 10.5 MiB",
    ]


def test_spec_of_pendulum_shows_normalized_action(capsys: pytest.CaptureFixture[str]) -> None:
    main(["-m", "spec", "-c", str(ROOT / "dizoo/classic_control/pendulum/config/pendulum_sac_config.py")])
    out = capsys.readouterr().out
    assert "normalized_action" in out


def test_errors_are_one_line(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["-m", "spec", "-c", str(tmp_path / "missing.py")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("ding: error:") and "missing.py" in err and "\n" not in err

    broken = tmp_path / "broken.py"
    broken.write_text(
        "main_config = dict(env=dict(colector_env_num=1))\n"
        "create_config = dict(env=dict(type='cartpole',"
        " import_names=['dizoo.classic_control.cartpole.envs.cartpole_env']))\n"
    )
    with pytest.raises(SystemExit):
        main(["-m", "spec", "-c", str(broken)])
    err = capsys.readouterr().err.strip()
    assert "colector_env_num" in err and "collector_env_num" in err and "\n" not in err

    with pytest.raises(SystemExit) as exit_info:
        main(["-m", "trian", "-c", CARTPOLE])
    assert exit_info.value.code == 2 and "invalid choice: 'trian'" in capsys.readouterr().err


def test_console_script_runs() -> None:
    result = run_ding("-m", "spec", "-c", CARTPOLE, check=True)
    assert "Discrete(2)" in result.stdout
    help_text = run_ding("-h").stdout
    assert "spec" in help_text and "--seed" in help_text


def test_an_env_that_needs_a_missing_package_is_one_error_line(tmp_path: pathlib.Path) -> None:
    (tmp_path / "cfg.py").write_text(
        "main_config = dict(env=dict(env_id='GymV26Environment-v0', env_kwargs={'env_id': 'CartPole-v1'}))\n"
        "create_config = dict(env=dict(type='ding_env_wrapper'), policy=dict(type='dqn'))\n"
    )
    try:
        import shimmy  # noqa: F401
    except ImportError:
        result = run_ding("-m", "spec", "-c", "cfg.py", cwd=tmp_path)
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert result.stderr.startswith("ding: error: ") and result.stderr.count("\n") == 1
        assert 'pip install "shimmy[gym-v26]"' in result.stderr
    else:
        assert run_ding("-m", "spec", "-c", "cfg.py", cwd=tmp_path).returncode == 0
