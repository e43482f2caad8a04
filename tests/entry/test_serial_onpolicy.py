"""``ding -m serial_onpolicy`` and ``serial_pipeline_onpolicy``: experiment files, on-policy loop, CartPole PPO."""

from __future__ import annotations

import csv
import pathlib

from ding.config import compile_config, read_config
from ding.entry import serial_pipeline_onpolicy
from ding.entry.cli import MODES
from ding.worker import load_checkpoint
from tests.ding_cli import run_ding
from tests.entry.test_cli import ROOT

CARTPOLE_PPO = str(ROOT / "dizoo/classic_control/cartpole/config/cartpole_ppo_config.py")


def test_cli_smoke_writes_the_experiment_directory(tmp_path: pathlib.Path) -> None:
    result = run_ding("-m", "serial_onpolicy", "-c", CARTPOLE_PPO, "--env-step", "20", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    exp_dir = tmp_path / "cartpole_ppo_seed0"
    assert "seed 0: " in result.stdout and exp_dir.name in result.stdout
    assert "evaluation at train iter 0, env step 0" in result.stderr
    main_config, create_config = read_config(exp_dir / "total_config.py")
    assert create_config.policy == {"type": "ppo", "import_names": ["ding.policy.ppo"]}
    assert compile_config(main_config, create_config) == main_config
    ckpts = sorted(p.name for p in (exp_dir / "ckpt").iterdir())
    assert "ckpt_best.pth.tar" in ckpts
    final = load_checkpoint(exp_dir / "ckpt" / next(n for n in ckpts if n.startswith("iteration_")))
    # --env-step 20 still collects one full n_sample batch (256 steps) and learns from it
    assert final["last_step"] == 256 and final["last_iter"] == 10 * 256 // 64
    assert (exp_dir / "log" / "serial_logger.txt").is_file()
    with (exp_dir / "log" / "eval.csv").open() as file:
        assert len(list(csv.DictReader(file))) >= 2
    assert list((exp_dir / "log" / "serial").glob("events.out.tfevents.*"))


def test_help_documents_serial_onpolicy() -> None:
    help_text = run_ding("-h", check=True).stdout
    assert "serial_onpolicy" in MODES and "  serial_onpolicy " in help_text


def test_each_collection_is_learned_for_the_configured_epochs(tmp_path: pathlib.Path) -> None:
    main_config, create_config = read_config(CARTPOLE_PPO)
    main_config.policy.collect.n_sample = 40
    main_config.policy.learn.update(epoch_per_collect=3, batch_size=16)
    result = serial_pipeline_onpolicy((main_config, create_config), seed=0, max_env_step=40, root=tmp_path)
    # 40 steps from 8 envs, then 3 epochs of ceil(40 / 16) = 3 minibatches
    assert (result.env_step, result.train_iter) == (40, 9)
    assert not result.stop_value_reached and result.exp_dir == tmp_path / "cartpole_ppo_seed0"


def test_same_seed_same_run(tmp_path: pathlib.Path) -> None:
    runs = [
        serial_pipeline_onpolicy(CARTPOLE_PPO, seed=1, max_train_iter=80, exp_name=f"r{i}", root=tmp_path)
        for i in range(2)
    ]
    assert runs[0].last_eval_return == runs[1].last_eval_return and runs[0].env_step == runs[1].env_step
    a = load_checkpoint(tmp_path / "r0" / "ckpt" / "iteration_80.pth.tar")["model"]
    b = load_checkpoint(tmp_path / "r1" / "ckpt" / "iteration_80.pth.tar")["model"]
    assert all((a[key] == b[key]).all() for key in a)


def test_cartpole_ppo_reaches_the_stop_value(tmp_path: pathlib.Path) -> None:
    result = serial_pipeline_onpolicy(CARTPOLE_PPO, seed=0, max_env_step=30000, root=tmp_path)
    assert result.stop_value_reached, result.summary()
    assert result.best_eval_return is not None and result.best_eval_return >= 195
    assert result.ckpt_best.is_file()
