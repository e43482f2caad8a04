"""ExperimentLogger files (text, CSV, tensorboard) and BaseLearner checkpoints."""

from __future__ import annotations

import csv
import logging
import os
import pathlib
import stat
import time
from typing import Any

import numpy as np
import pytest
import torch

from ding.errors import ConfigError
from ding.policy.dqn import DQNPolicy
from ding.worker import (
    EVAL_CSV_COLUMNS,
    BaseLearner,
    CheckpointError,
    EvalResult,
    ExperimentLogger,
    load_checkpoint,
    read_checkpoint,
)
from ding.worker.checkpoint import save_checkpoint


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
    with pytest.raises(ConfigError, match=r"hook\.save_ckpt_after_iter must be a positive int, got 0"):
        BaseLearner(small_policy().learn_mode, tmp_path, None, {"save_ckpt_after_iter": 0})
    with pytest.raises(ConfigError, match=r"hook\.log_show_after_iter must be a positive int, got 'x'"):
        BaseLearner(small_policy().learn_mode, tmp_path, None, {"log_show_after_iter": "x"})


def test_collector_scalars_add_the_wall_time_rate(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    with ExperimentLogger(tmp_path) as logger:
        logger.mark_collector(env_step=1000, episode_count=40)  # a resumed run's counters
        time.sleep(0.05)
        logger.collector_scalars(1200, 44, {"episode_return_mean": 21.5, "episode_length_mean": 14.75})
        time.sleep(0.05)
        logger.collector_scalars(1300, 44, {"buffer_size": 1300})
    assert logger.tb_dir is not None
    events = EventAccumulator(str(logger.tb_dir))
    events.Reload()
    fps = [(e.step, e.value) for e in events.Scalars("collector_step/envstep_per_wall_sec")]
    assert [step for step, _ in fps] == [1200, 1300]
    assert 200 / 10 < fps[0][1] < 200 / 0.05 and 100 / 10 < fps[1][1] < 100 / 0.05
    assert [e.value for e in events.Scalars("collector_step/episode_return_mean")] == [21.5]
    assert [e.value for e in events.Scalars("collector_step/episode_length_mean")] == [14.75]  # as given
    assert "collector_step/avg_envstep_per_episode" not in events.Tags()["scalars"]
    text = (tmp_path / "log" / "serial_logger.txt").read_text()
    assert "collector_step 1200: episode_return_mean=21.5, episode_length_mean=14.75, envstep_per_wall_sec=" in text


def test_checkpoints_after_minutes_of_wall_time_hold_the_resume_state(tmp_path: pathlib.Path) -> None:
    now = [0.0]
    hook = {"save_ckpt_after_iter": 100, "save_ckpt_after_minutes": 0.5}
    with ExperimentLogger(tmp_path, tensorboard=False) as logger:
        learner = BaseLearner(small_policy().learn_mode, tmp_path / "ckpt", logger, hook, clock=lambda: now[0])
        learner.add_resume_state("replay_buffer", lambda: {"size": learner.train_iter})
        for step in range(1, 8):
            now[0] = step * 10.0  # 10 s per update: a checkpoint every third update (30 s)
            learner.train(batch(), env_step=step)
        learner.save_checkpoint("ckpt_best.pth.tar", env_step=7)
    names = sorted(p.name for p in (tmp_path / "ckpt").iterdir())
    assert names == ["ckpt_best.pth.tar", "iteration_3.pth.tar", "iteration_6.pth.tar"]
    assert load_checkpoint(tmp_path / "ckpt" / "iteration_6.pth.tar")["replay_buffer"] == {"size": 6}
    assert "replay_buffer" not in load_checkpoint(tmp_path / "ckpt" / "ckpt_best.pth.tar")
    text = (tmp_path / "log" / "serial_logger.txt").read_text()
    assert "iteration_3.pth.tar (save_ckpt_after_minutes) (train iter 3, env step 3, with replay_buffer)" in text
    with pytest.raises(ValueError, match=r"checkpoint key 'last_iter' is the learner's own"):
        learner.add_resume_state("last_iter", dict)


@pytest.mark.parametrize("minutes", [0, -1.0, "5", True, float("nan")])
def test_bad_wall_time_settings(tmp_path: pathlib.Path, minutes: object) -> None:
    with pytest.raises(ConfigError, match=r"hook\.save_ckpt_after_minutes must be a finite number > 0 or None, got "):
        BaseLearner(small_policy().learn_mode, tmp_path, None, {"save_ckpt_after_minutes": minutes})


def test_a_learner_never_replaces_a_checkpoint_it_did_not_write(tmp_path: pathlib.Path) -> None:
    earlier = save_checkpoint({"model": {}, "last_iter": 3}, tmp_path / "ckpt" / "iteration_3.pth.tar").read_bytes()
    save_checkpoint({"model": {}, "best_eval_return": 9.0}, tmp_path / "ckpt" / "ckpt_best.pth.tar")
    with ExperimentLogger(tmp_path, tensorboard=False) as logger:
        learner = BaseLearner(small_policy().learn_mode, tmp_path / "ckpt", logger, {"save_ckpt_after_iter": 100})
        learner.train_iter = 3  # a resumed run that stops before its first update
        assert learner.save_resume_checkpoint(env_step=10) is None
        assert (tmp_path / "ckpt" / "iteration_3.pth.tar").read_bytes() == earlier
        learner.train(batch(), env_step=12)
        assert learner.save_resume_checkpoint(env_step=12) == tmp_path / "ckpt" / "iteration_4.pth.tar"
        assert learner.save_resume_checkpoint(env_step=14) is not None  # its own file: saved again
        learner.best_eval_return = 11.0
        learner.save_checkpoint("ckpt_best.pth.tar", env_step=14, replace=True)  # a better evaluation
    assert load_checkpoint(tmp_path / "ckpt" / "iteration_4.pth.tar")["last_step"] == 14
    assert load_checkpoint(tmp_path / "ckpt" / "ckpt_best.pth.tar")["best_eval_return"] == 11.0
    text = (tmp_path / "log" / "serial_logger.txt").read_text()
    assert f"kept checkpoint {tmp_path / 'ckpt' / 'iteration_3.pth.tar'}: an earlier run wrote it" in text


def test_a_checkpoint_is_flushed_before_its_rename_and_its_directory_after(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(descriptor: int) -> None:
        calls.append("fsync dir" if stat.S_ISDIR(os.fstat(descriptor).st_mode) else "fsync file")
        real_fsync(descriptor)

    def replace(source: Any, target: Any) -> None:
        calls.append(f"rename {pathlib.Path(source).name} -> {pathlib.Path(target).name}")
        real_replace(source, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    save_checkpoint({"model": {"w": torch.ones(3)}}, tmp_path / "a.pth.tar")
    assert calls == ["fsync file", "rename a.pth.tar.tmp -> a.pth.tar", "fsync dir"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.pth.tar"]


class RunsCode:
    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, ("exit 3",))


def test_a_checkpoint_that_would_run_code_is_refused(tmp_path: pathlib.Path) -> None:
    torch.save({"model": {"w": RunsCode()}}, tmp_path / "hostile.pth.tar")
    with pytest.raises(CheckpointError, match=r"hostile\.pth\.tar is refused: its pickle would call posix\.system"):
        read_checkpoint(tmp_path / "hostile.pth.tar")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match=r"empty is a directory, not a checkpoint file; .*; it holds none$"):
        load_checkpoint(tmp_path / "empty")


def test_a_logger_appends_to_the_files_it_finds(tmp_path: pathlib.Path) -> None:
    with ExperimentLogger(tmp_path, tensorboard=False) as logger:
        logger.info("first run")
        logger.eval_result(result(0, (10.0,), True))
    csv_path, text_path = tmp_path / "log" / "eval.csv", tmp_path / "log" / "serial_logger.txt"
    earlier_csv, earlier_text = csv_path.read_text(), text_path.read_text()
    with ExperimentLogger(tmp_path, tensorboard=False) as logger:
        assert logger.elapsed >= float(earlier_csv.splitlines()[-1].split(",")[2])  # wall_time goes on
        logger.info("continued")
        logger.eval_result(result(10, (12.0,), True))
    assert csv_path.read_text().startswith(earlier_csv) and text_path.read_text().startswith(earlier_text)
    rows = list(csv.DictReader(csv_path.open()))
    assert [r["train_iter"] for r in rows] == ["0", "10"] and csv_path.read_text().count("train_iter") == 1
    assert float(rows[1]["wall_time"]) >= float(rows[0]["wall_time"])
    assert "continued" in text_path.read_text()
