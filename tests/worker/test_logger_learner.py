"""ExperimentLogger files (text, CSV, tensorboard) and BaseLearner checkpoints."""

from __future__ import annotations

import csv
import logging
import pathlib

import numpy as np
import pytest
import torch

from ding.errors import ConfigError
from ding.policy.dqn import DQNPolicy
from ding.worker import EVAL_CSV_COLUMNS, BaseLearner, CheckpointError, EvalResult, ExperimentLogger, load_checkpoint
from ding.worker.learner import save_checkpoint


def result(train_iter: int, returns: tuple[float, ...], is_best: bool) -> EvalResult:
    return EvalResult(train_iter, train_iter * 10, returns, 195, is_best, 0.01)


def test_logger_writes_text_csv_and_tensorboard(tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="ding.serial"), ExperimentLogger(tmp_path) as logger:
        logger.info("starting")
        logger.info("quiet", echo=False)
        logger.scalars("learner_iter", {"total_loss": 0.25, "q_value": 3.0}, step=100)
        logger.eval_result(result(0, (10.0, 20.0), True))
        logger.eval_result(result(40, (200.0, 200.0), True))
    text = (tmp_path / "log" / "serial_logger.txt").read_text()
    assert "starting" in text and "quiet" in text and "learner_iter 100: total_loss=0.25, q_value=3.0" in text
    assert "return 200.00 ± 0.00" in text and "stop_value 195 reached" in text
    assert "quiet" not in caplog.text and "starting" in caplog.text
    rows = list(csv.DictReader((tmp_path / "log" / "eval.csv").open()))
    assert tuple(rows[0]) == EVAL_CSV_COLUMNS
    assert [(r["train_iter"], r["env_step"], float(r["eval_episode_return_mean"])) for r in rows] == [
        ("0", "0", 15.0),
        ("40", "400", 200.0),
    ]
    assert [(r["is_best"], r["stop_value_reached"]) for r in rows] == [("1", "0"), ("1", "1")]

    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    assert logger.tb_dir is not None
    events = EventAccumulator(str(logger.tb_dir))
    events.Reload()
    assert [(e.step, e.value) for e in events.Scalars("evaluator_step/eval_episode_return_mean")] == [
        (0, 15.0),
        (400, 200.0),
    ]
    assert [e.value for e in events.Scalars("learner_iter/total_loss")] == [0.25]


def test_logger_without_tensorboard(tmp_path: pathlib.Path) -> None:
    with ExperimentLogger(tmp_path, tensorboard=False) as logger:
        logger.eval_result(result(0, (1.0,), True))
    assert logger.tb_dir is None and sorted(p.name for p in (tmp_path / "log").iterdir()) == [
        "eval.csv",
        "serial_logger.txt",
    ]


def small_policy() -> DQNPolicy:
    return DQNPolicy({"model": {"obs_shape": 2, "action_shape": 2, "encoder_hidden_size_list": [8]}})


def batch() -> list[dict[str, object]]:
    obs = np.zeros(2, np.float32)
    return [{"obs": obs, "action": 0, "reward": 1.0, "next_obs": obs, "done": False, "discount": 0.9}] * 4


def test_learner_counts_iterations_and_saves_periodic_checkpoints(tmp_path: pathlib.Path) -> None:
    policy = small_policy()
    with ExperimentLogger(tmp_path, tensorboard=False) as logger:
        learner = BaseLearner(
            policy.learn_mode, tmp_path / "ckpt", logger, {"log_show_after_iter": 2, "save_ckpt_after_iter": 3}
        )
        for _ in range(7):
            learner.train(batch(), env_step=50)
    assert learner.train_iter == 7 and set(learner.last_stats) >= {"total_loss"}
    assert sorted(p.name for p in (tmp_path / "ckpt").iterdir()) == ["iteration_3.pth.tar", "iteration_6.pth.tar"]
    state = load_checkpoint(tmp_path / "ckpt" / "iteration_6.pth.tar")
    assert (state["last_iter"], state["last_step"], state["learn_iter"]) == (6, 50, 6)
    assert set(state) >= {"model", "target_model", "optimizer"}
    text = (tmp_path / "log" / "serial_logger.txt").read_text()
    assert text.count("learner_iter") == 3 and "saved checkpoint" in text
    fresh = small_policy()
    fresh.learn_mode.load_state_dict(state)
    saved_model = state["model"]
    assert all(torch.equal(value, fresh.state_dict()["model"][key]) for key, value in saved_model.items())
    assert fresh.learn_iter == 6


def test_checkpoint_errors(tmp_path: pathlib.Path) -> None:
    with pytest.raises(CheckpointError, match=r"checkpoint .*missing\.pth\.tar does not exist"):
        load_checkpoint(tmp_path / "missing.pth.tar")
    junk = tmp_path / "junk.pth.tar"
    junk.write_text("not a checkpoint")
    with pytest.raises(CheckpointError, match=r"junk\.pth\.tar is not a ding checkpoint \(torch\.load: "):
        load_checkpoint(junk)
    save_checkpoint({"weights": torch.zeros(1)}, tmp_path / "other.pth.tar")
    with pytest.raises(CheckpointError, match=r"other\.pth\.tar is not a ding checkpoint: it holds no 'model' state"):
        load_checkpoint(tmp_path / "other.pth.tar")


def test_bad_hook_settings(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ConfigError, match=r"hook\.save_ckpt_after_iter must be an int >= 1, got 0"):
        BaseLearner(small_policy().learn_mode, tmp_path, None, {"save_ckpt_after_iter": 0})
    with pytest.raises(ConfigError, match=r"hook\.log_show_after_iter must be an int >= 1, got 'x'"):
        BaseLearner(small_policy().learn_mode, tmp_path, None, {"log_show_after_iter": "x"})
