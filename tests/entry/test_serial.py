"""``ding -m serial`` / ``-m eval`` and ``serial_pipeline``: experiment files, reproducibility, CartPole convergence,
Ctrl-C and every error path."""

from __future__ import annotations

import copy
import csv
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
from typing import Any

import pytest
import torch

from ding.config import compile_config, read_config
from ding.entry import eval_checkpoint, serial_pipeline
from ding.entry.cli import INTERRUPTED, MODES, main
from ding.errors import ConfigError, UnknownNameError
from ding.model import DQN
from ding.worker import EVAL_CSV_COLUMNS, CheckpointError, load_checkpoint
from tests.ding_cli import run_ding
from tests.entry.test_cli import CARTPOLE, ROOT
from tests.entry.test_run_dirs import files_of


def cartpole(**policy: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    main_config, create_config = read_config(CARTPOLE)
    main_config = copy.deepcopy(dict(main_config))
    for key, value in policy.items():
        main_config["policy"][key] = value
    return main_config, dict(create_config)


def eval_rows(exp_dir: pathlib.Path) -> list[dict[str, str]]:
    with (exp_dir / "log" / "eval.csv").open() as file:
        return list(csv.DictReader(file))


# ----- the command line ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[pathlib.Path, str]:
    """``ding -m serial -c cartpole_dqn_config.py --env-step 200`` in a fresh directory."""
    cwd = tmp_path_factory.mktemp("smoke")
    result = run_ding("-m", "serial", "-c", CARTPOLE, "--env-step", "200", cwd=cwd)
    assert result.returncode == 0, result.stderr
    return cwd / "cartpole_dqn_seed0", result.stdout + result.stderr


def test_serial_smoke_writes_the_experiment_directory(smoke_run: tuple[pathlib.Path, str]) -> None:
    exp_dir, output = smoke_run
    assert "seed 0: stopped before stop_value 195" in output and str(exp_dir.name) in output
    assert "evaluation at train iter 0, env step 0" in output  # progress lines on stderr
    main_config, create_config = read_config(exp_dir / "total_config.py")
    assert main_config.exp_name == "cartpole_dqn_seed0" and main_config.seed == 0
    assert create_config.policy == {"type": "dqn", "import_names": ["ding.policy.dqn"]}
    assert compile_config(main_config, create_config) == main_config  # it stands alone
    ckpts = sorted(p.name for p in (exp_dir / "ckpt").iterdir())
    assert "ckpt_best.pth.tar" in ckpts and any(name.startswith("iteration_") for name in ckpts)
    final = load_checkpoint(exp_dir / "ckpt" / next(n for n in ckpts if n.startswith("iteration_")))
    assert final["last_step"] >= 200 and final["last_iter"] > 0
    rows = eval_rows(exp_dir)
    assert tuple(rows[0]) == EVAL_CSV_COLUMNS and rows[0]["train_iter"] == "0"
    assert rows[-1]["train_iter"] == str(final["last_iter"])  # a last evaluation at the end of the run
    assert list((exp_dir / "log" / "serial").glob("events.out.tfevents.*"))
    assert "evaluation at train iter 0" in (exp_dir / "log" / "serial_logger.txt").read_text()


def test_eval_mode_replays_the_best_evaluation(
    smoke_run: tuple[pathlib.Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    exp_dir, _ = smoke_run
    best = max(float(row["eval_episode_return_mean"]) for row in eval_rows(exp_dir))
    ckpt = str(exp_dir / "ckpt" / "ckpt_best.pth.tar")
    assert main(["-m", "eval", "-c", str(exp_dir / "total_config.py"), "--load-path", ckpt]) == 0
    *episodes, out = capsys.readouterr().out.strip().splitlines()  # a line per episode, then the summary
    reached = "reached" if best >= 195 else "not reached"
    assert out.startswith(f"eval return mean {best:.2f} (std ") and out.endswith(
        f"5 episodes; stop_value 195 {reached}"
    )
    assert [line.split(" (env")[0] for line in episodes] == [f"episode {n}" for n in range(1, 6)]
    result = eval_checkpoint(CARTPOLE, ckpt, seed=0, n_episode=2)
    assert len(result.returns) == 2
    with_load_path = exp_dir / "with_load_path.py"  # DI-engine's way: the checkpoint named in policy.load_path
    total = (exp_dir / "total_config.py").read_text()
    with_load_path.write_text(f"{total}\nmain_config['policy']['load_path'] = {ckpt!r}\n")
    assert main(["-m", "eval", "-c", str(with_load_path)]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == out


def test_serial_with_several_seeds_and_an_exp_name(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["-m", "serial", "-c", CARTPOLE, "-s", "1", "-s", "2", "--exp-name", "smoke", "--train-iter", "3"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split(":")[0] for line in lines[:2]] == ["seed 1", "seed 2"]
    assert [line.split()[0] for line in lines[2:]] == ["seed", "1", "2", "mean", "std"]  # the table across seeds
    for seed in (1, 2):
        main_config, _ = read_config(tmp_path / f"smoke_seed{seed}" / "total_config.py")
        assert (main_config.seed, main_config.exp_name) == (seed, f"smoke_seed{seed}")
        assert load_checkpoint(tmp_path / f"smoke_seed{seed}" / "ckpt" / "iteration_3.pth.tar")["last_iter"] == 3


def test_help_documents_every_mode() -> None:
    help_text = run_ding("-h", check=True).stdout
    for mode in MODES:
        assert f"  {mode} " in help_text
    for option in ("--seed", "--exp-name", "--env-step", "--train-iter", "--load-path", "Ctrl-C"):
        assert option in help_text


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (
            ["-m", "spec", "--load-path", "x.pth.tar"],
            r"--load-path is not used by -m spec \(only by -m serial, -m serial_onpolicy, -m eval\)",
        ),
        (
            ["-m", "spec", "--env-step", "5"],
            r"--env-step is not used by -m spec \(only by -m serial, -m serial_onpolicy\)",
        ),
        (["-m", "eval", "--train-iter", "5", "--load-path", "x"], r"--train-iter is not used by -m eval"),
        (["-m", "eval"], r"-m eval needs --load-path CKPT \(or policy\.load_path in the config\)"),
        (["-m", "eval", "--load-path", "x", "-s", "1", "-s", "2"], r"-m eval takes one --seed"),
        (["-m", "serial", "--env-step", "0"], r"--env-step must be >= 1, got 0"),
        (["-m", "eval", "--load-path", "missing.pth.tar"], r"ding: error: checkpoint missing\.pth\.tar does not exist"),
    ],
)
def test_cli_errors_are_one_line(
    argv: list[str], match: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "-c", CARTPOLE])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("ding: error: ") and re.search(match, err), err


def test_cli_reports_a_checkpoint_that_does_not_fit(
    smoke_run: tuple[pathlib.Path, str], tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exp_dir, _ = smoke_run
    small = tmp_path / "small.py"
    small.write_text(
        "main_config = dict(env=dict(stop_value=195), policy=dict(model=dict(encoder_hidden_size_list=[32, 32])))\n"
        "create_config = dict(policy=dict(type='dqn'), env=dict(type='cartpole',\n"
        "    import_names=['dizoo.classic_control.cartpole.envs.cartpole_env']))\n"
    )
    with pytest.raises(SystemExit):
        main(["-m", "eval", "-c", str(small), "--load-path", str(exp_dir / "ckpt" / "ckpt_best.pth.tar")])
    err = capsys.readouterr().err.strip()
    assert "does not fit the model of this config" in err and "\n" not in err
    with pytest.raises(SystemExit):
        main(["-m", "eval", "-c", str(small), "--load-path", str(exp_dir / "total_config.py")])
    assert "is not a ding checkpoint (torch.load: UnpicklingError" in capsys.readouterr().err


# ----- the library entry ---------------------------------------------------------------------------------
def test_cartpole_dqn_reaches_its_stop_value(tmp_path: pathlib.Path) -> None:
    """The real thing: the shipped config trains CartPole to a mean return of 195 (speed: bench/)."""
    started = time.monotonic()
    result = serial_pipeline(CARTPOLE, seed=0, max_env_step=50_000, root=tmp_path)
    elapsed = time.monotonic() - started
    assert result.stop_value_reached and not result.interrupted, result.summary()
    assert result.best_eval_return is not None and result.best_eval_return >= 195
    assert result.last_eval_return == result.best_eval_return
    assert 0 < result.wall_time <= elapsed
    assert result.exp_dir == tmp_path / "cartpole_dqn_seed0" and result.ckpt_best.is_file()
    replay = eval_checkpoint(result.exp_dir / "total_config.py", result.ckpt_best)
    assert replay.mean == result.best_eval_return and replay.stop


def test_same_seed_same_run_and_managers_agree(tmp_path: pathlib.Path) -> None:
    main_config, create_config = cartpole()
    first = serial_pipeline((main_config, create_config), seed=5, max_env_step=300, root=tmp_path, exp_name="a")
    again = serial_pipeline((main_config, create_config), seed=5, max_env_step=300, root=tmp_path, exp_name="b")
    other = serial_pipeline((main_config, create_config), seed=6, max_env_step=300, root=tmp_path, exp_name="c")
    subprocess_create = {**create_config, "env_manager": {"type": "subprocess"}}
    in_workers = serial_pipeline(
        (main_config, subprocess_create), seed=5, max_env_step=300, root=tmp_path, exp_name="d"
    )

    def returns(name: str) -> list[str]:
        return [row["eval_episode_return_mean"] for row in eval_rows(tmp_path / name)]

    def weights(result: Any) -> dict[str, torch.Tensor]:
        return load_checkpoint(result.exp_dir / "ckpt" / f"iteration_{result.train_iter}.pth.tar")["model"]

    assert (first.env_step, first.train_iter) == (again.env_step, again.train_iter) == (304, 155)
    assert returns("a") == returns("b") == returns("d")
    assert returns("a") != returns("c")
    for key, value in weights(first).items():
        assert torch.equal(value, weights(again)[key]) and torch.equal(value, weights(in_workers)[key])
    assert other.train_iter == first.train_iter  # same schedule, different episodes


def test_limits_end_the_run_and_a_rerun_writes_a_directory_of_its_own(tmp_path: pathlib.Path) -> None:
    result = serial_pipeline(cartpole(), seed=0, max_train_iter=7, root=tmp_path, exp_name="limits")
    assert result.train_iter == 7 and not result.stop_value_reached
    assert (tmp_path / "limits" / "ckpt" / "iteration_7.pth.tar").is_file()
    assert "train iter 7" in result.summary()
    before = files_of(tmp_path / "limits")
    again = serial_pipeline(cartpole(), seed=0, max_train_iter=3, root=tmp_path, exp_name="limits")
    assert files_of(tmp_path / "limits") == before  # the earlier run's files, byte for byte
    assert re.fullmatch(r"limits_\d{6}_\d{6}", again.exp_dir.name) and again.exp_dir.parent == tmp_path
    assert again.summary().endswith(f"; {again.exp_dir}")
    assert sorted(p.name for p in (again.exp_dir / "ckpt").iterdir()) == ["ckpt_best.pth.tar", "iteration_3.pth.tar"]
    assert len(list((again.exp_dir / "log" / "serial").iterdir())) == 1
    assert [row["train_iter"] for row in eval_rows(again.exp_dir)] == ["0", "3"]
    assert read_config(again.exp_dir / "total_config.py")[0].exp_name == again.exp_dir.name
    log = (again.exp_dir / "log" / "serial_logger.txt").read_text()
    assert f"experiment directory {tmp_path / 'limits'} holds an earlier run; this run writes {again.exp_dir}" in log


def test_a_pair_without_a_policy_module_uses_the_built_in_dqn(tmp_path: pathlib.Path) -> None:
    main_config, create_config = cartpole()
    create_config["policy"] = {"type": "dqn"}
    main_config["exp_name"] = "pair_seed9"
    result = serial_pipeline((main_config, create_config), seed=3, max_train_iter=1, root=tmp_path)
    assert result.exp_dir == tmp_path / "pair_seed3"  # the config's _seed suffix is replaced
    del create_config["policy"]
    main_config["policy"]["type"] = "dqn"  # the type may come from main_config instead
    result = serial_pipeline((main_config, create_config), seed=4, max_train_iter=1, root=tmp_path)
    assert read_config(result.exp_dir / "total_config.py")[1].policy.import_names == ["ding.policy.dqn"]


def test_a_given_model_is_trained(tmp_path: pathlib.Path) -> None:
    model = DQN(4, 2, encoder_hidden_size_list=[16], dueling=False)
    result = serial_pipeline(cartpole(), max_train_iter=2, root=tmp_path, exp_name="custom", model=model)
    state = load_checkpoint(result.exp_dir / "ckpt" / "iteration_2.pth.tar")["model"]
    assert set(state) == set(model.state_dict()) and all(
        torch.equal(state[k], v) for k, v in model.state_dict().items()
    )


def test_library_errors(tmp_path: pathlib.Path) -> None:
    with pytest.raises(TypeError, match=r"input_cfg must be a config file path or a \(main_config, create_config\)"):
        serial_pipeline(42, root=tmp_path)
    with pytest.raises(ConfigError, match=r"main_config must be a dict, got list"):
        serial_pipeline(([], {}), root=tmp_path)
    with pytest.raises(ConfigError, match=r"max_env_step must be an int >= 1 or None, got 0"):
        serial_pipeline(CARTPOLE, max_env_step=0, root=tmp_path)
    with pytest.raises(ConfigError, match=r"max_train_iter must be an int >= 1 or None, got 1\.5"):
        serial_pipeline(CARTPOLE, max_train_iter=1.5, root=tmp_path)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"seed must be an int, got str"):
        serial_pipeline(CARTPOLE, seed="0", root=tmp_path)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"torch_threads must be an int >= 1 or None, got 0"):
        serial_pipeline(CARTPOLE, root=tmp_path, torch_threads=0)
    main_config, create_config = cartpole(other={"replay_buffer": {"replay_buffer_size": 10}})
    with pytest.raises(ConfigError, match=r"batch_size 64 exceeds policy\.other\.replay_buffer\.replay_buffer_size 10"):
        serial_pipeline((main_config, create_config), root=tmp_path)
    main_config, create_config = cartpole()
    create_config["policy"] = {"type": "dqm"}
    with pytest.raises(UnknownNameError, match=r"unknown policy 'dqm'.*Did you mean 'dqn'"):
        serial_pipeline((main_config, create_config), root=tmp_path)
    with pytest.raises(CheckpointError, match=r"does not exist"):
        eval_checkpoint(CARTPOLE, tmp_path / "none.pth.tar")
    assert not list(tmp_path.iterdir())  # nothing is written before the config is accepted


def test_ctrl_c_saves_a_checkpoint_and_exits_cleanly(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "endless.py"
    config.write_text(pathlib.Path(CARTPOLE).read_text().replace("stop_value=195", "stop_value=10**6"))
    process = subprocess.Popen(
        [sys.executable, "-m", "ding.entry.cli", "-m", "serial", "-c", str(config), "--exp-name", "endless"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a background shell may ignore SIGINT
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    csv_path = tmp_path / "endless" / "log" / "eval.csv"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (csv_path.exists() and len(csv_path.read_text().splitlines()) >= 3):
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == INTERRUPTED, err
    assert out.startswith("seed 0: interrupted")
    ckpts = sorted(p.name for p in (tmp_path / "endless" / "ckpt").iterdir())
    iteration = [name for name in ckpts if name.startswith("iteration_")]
    assert len(iteration) == 1 and not any(name.endswith(".tmp") for name in ckpts)
    state = load_checkpoint(tmp_path / "endless" / "ckpt" / iteration[0])
    assert iteration[0] == f"iteration_{state['last_iter']}.pth.tar" and state["last_iter"] >= 40
    log = (tmp_path / "endless" / "log" / "serial_logger.txt").read_text()
    assert "interrupted (Ctrl-C)" in log and "Traceback" not in err
