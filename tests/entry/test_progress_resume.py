"""The training status line on stderr and resuming ``serial`` / ``serial_onpolicy`` runs with ``--load-path``."""

from __future__ import annotations

import copy
import csv
import functools
import io
import logging
import pathlib
import re
from typing import Any

import pytest
import torch

from ding.entry import serial_entry, serial_pipeline, serial_pipeline_onpolicy
from ding.entry.cli import main
from ding.entry.run_output import LineHandler
from ding.errors import ConfigError
from ding.worker import CheckpointError, load_checkpoint
from ding.worker.logger import ProgressLine
from tests.entry.test_cli import CARTPOLE, ROOT
from tests.entry.test_run_dirs import files_of

CARTPOLE_PPO = str(ROOT / "dizoo/classic_control/cartpole/config/cartpole_ppo_config.py")


def eval_rows(exp_dir: pathlib.Path) -> list[dict[str, str]]:
    with (exp_dir / "log" / "eval.csv").open() as file:
        return list(csv.DictReader(file))


def final_ckpt(result: Any) -> pathlib.Path:
    return result.exp_dir / "ckpt" / f"iteration_{result.train_iter}.pth.tar"


def assert_same_tensors(left: Any, right: Any) -> None:
    if isinstance(left, torch.Tensor):
        assert torch.equal(left, right)
    elif isinstance(left, dict):
        assert set(left) == set(right)
        for key in left:
            assert_same_tensors(left[key], right[key])
    elif isinstance(left, (list, tuple)):
        assert len(left) == len(right)
        for a, b in zip(left, right, strict=True):
            assert_same_tensors(a, b)
    else:
        assert left == right


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


# ----- the status line -------------------------------------------------------------------------------
def test_progress_line_on_a_terminal_is_redrawn_in_place() -> None:
    now = [0.0]
    out = FakeTerminal()
    progress = ProgressLine(out, interval=5, tty_interval=0.5, clock=lambda: now[0])
    progress.update(env_step=1, episodes=0, train_iter=0)  # too soon
    assert out.getvalue() == "" and not progress.drawn
    now[0] = 1.0
    progress.update(env_step=100, episodes=3, train_iter=40)
    now[0] = 1.2
    progress.update(env_step=120, episodes=3, train_iter=50)  # within tty_interval: skipped
    progress.update(env_step=130, episodes=4, train_iter=55, eval_return=9.5, force=True)
    assert progress.drawn
    progress.close()
    progress.close()  # ends the line once
    assert out.getvalue() == (
        "\renv step 100 | 99 steps/s | episodes 3 | train iter 40 | last eval return - | 1 s\x1b[K"
        "\renv step 130 | 108 steps/s | episodes 4 | train iter 55 | last eval return 9.50 | 1 s\x1b[K\n"
    )


def test_progress_line_elsewhere_prints_whole_lines_every_few_seconds() -> None:
    now = [0.0]
    out = io.StringIO()
    progress = ProgressLine(out, interval=5, clock=lambda: now[0])
    for step in range(1, 13):
        now[0] = float(step)
        progress.update(env_step=step * 10, episodes=step, train_iter=step * 5)
    progress.close()
    assert out.getvalue().splitlines() == [
        "env step 50 | 8 steps/s | episodes 5 | train iter 25 | last eval return - | 5 s",
        "env step 100 | 9 steps/s | episodes 10 | train iter 50 | last eval return - | 10 s",
    ]
    assert "\r" not in out.getvalue()


def test_progress_line_defaults_to_stderr_and_survives_a_closed_stream(capsys: pytest.CaptureFixture[str]) -> None:
    progress = ProgressLine(interval=0)
    progress.update(env_step=7, episodes=1, train_iter=2, eval_return=3.0)
    err = capsys.readouterr().err
    assert re.fullmatch(
        r"env step 7 \| (0|-) steps/s \| episodes 1 \| train iter 2 \| last eval return 3\.00 \| 0 s\n", err
    )
    closed = io.StringIO()
    closed.close()
    ProgressLine(closed, interval=0).update(env_step=1, episodes=0, train_iter=0)  # no exception


def test_log_lines_clear_a_status_line_on_a_terminal() -> None:
    out = FakeTerminal()
    handler = LineHandler(out)
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.emit(logging.LogRecord("ding.serial", logging.INFO, __file__, 1, "hello", None, None))
    assert out.getvalue() == "\r\x1b[Khello\n"
    plain = io.StringIO()
    LineHandler(plain).emit(logging.LogRecord("ding.serial", logging.INFO, __file__, 1, "hello", None, None))
    assert plain.getvalue() == "hello\n"


def test_a_run_shows_its_counters(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr(serial_entry, "ProgressLine", functools.partial(ProgressLine, out, interval=0.0))
    result = serial_pipeline(CARTPOLE, max_env_step=100, root=tmp_path, exp_name="shown")
    lines = out.getvalue().splitlines()
    assert lines and all(line.startswith("env step ") for line in lines)
    last_eval = float(eval_rows(result.exp_dir)[-1]["eval_episode_return_mean"])
    episodes = load_checkpoint(final_ckpt(result))["last_episode"]
    assert re.match(
        rf"env step {result.env_step}/100 \(100%\) \| \d+ steps/s \| episodes {episodes} \| "
        rf"train iter {result.train_iter} \| last eval return {last_eval:.2f} \| \d+ s, ETA 0 s$",
        lines[-1],
    ), lines[-1]
    quiet = io.StringIO()
    monkeypatch.setattr(serial_entry, "ProgressLine", functools.partial(ProgressLine, quiet, interval=0.0))
    serial_pipeline(CARTPOLE, max_train_iter=2, root=tmp_path, exp_name="quiet", progress=False)
    assert quiet.getvalue() == ""


def test_progress_line_shows_the_share_done_and_an_eta() -> None:
    now = [0.0]
    out = io.StringIO()
    progress = ProgressLine(out, interval=0, clock=lambda: now[0], max_env_step=10_000, max_train_iter=3_000)
    now[0] = 2.0
    progress.update(env_step=4_000, episodes=30, train_iter=1_000)  # a resumed run: rates count from here
    now[0] = 62.0
    progress.update(env_step=5_000, episodes=40, train_iter=2_000, eval_return=-3.0)
    # env steps: 1,000 in 62 s -> 5,000 more take 310 s; train iters: 1,000 in 62 s -> 1,000 more take 62 s
    assert out.getvalue().splitlines()[-1] == (
        "env step 5000/10000 (50%) | 16 steps/s | episodes 40 | train iter 2000/3000 (67%) | "
        "last eval return -3.00 | 1 min 02 s, ETA 1 min 02 s"
    )
    now[0] = 70.0
    progress.update(env_step=10_500, episodes=90, train_iter=2_500)  # past a limit: 100 %, nothing left
    assert out.getvalue().splitlines()[-1].startswith("env step 10500/10000 (100%) | 93 steps/s")
    assert out.getvalue().splitlines()[-1].endswith("| 1 min 10 s, ETA 0 s")


# ----- resuming ---------------------------------------------------------------------------------------
@pytest.fixture
def starts(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What each run's loop starts from: the policy's state and the counters, recorded before training."""
    recorded: list[dict[str, Any]] = []
    execute = serial_entry.SerialRun.execute

    def recording(self: Any, *args: Any) -> Any:
        recorded.append(
            {
                "state": copy.deepcopy(self.policy.learn_mode.state_dict()),
                "train_iter": self.learner.train_iter,
                "env_step": self.collector.env_step,
                "episodes": self.collector.episode_count,
            }
        )
        return execute(self, *args)

    monkeypatch.setattr(serial_entry.SerialRun, "execute", recording)
    return recorded


def check_resumed(first: Any, resumed: Any, start: dict[str, Any]) -> None:
    """``resumed`` started from ``first``'s final checkpoint: counters go on and the weights were loaded."""
    loaded = load_checkpoint(final_ckpt(first))
    assert resumed.train_iter > first.train_iter and resumed.env_step > first.env_step
    rows = eval_rows(resumed.exp_dir)
    # the resumed run evaluates the loaded policy first: same iteration, same env step, same return
    assert (rows[0]["train_iter"], rows[0]["env_step"]) == (str(first.train_iter), str(first.env_step))
    assert float(rows[0]["eval_episode_return_mean"]) == first.last_eval_return
    # the resumed loop started from exactly the saved model, optimizer and counters
    saved_state = {k: v for k, v in loaded.items() if not k.startswith("last_") and k != "best_eval_return"}
    assert_same_tensors(start["state"], saved_state)
    assert loaded["best_eval_return"] == first.best_eval_return  # the run's best so far is stored
    assert (start["train_iter"], start["env_step"], start["episodes"]) == (
        loaded["last_iter"],
        loaded["last_step"],
        loaded["last_episode"],
    )
    assert any(not torch.equal(loaded["model"][k], v) for k, v in load_checkpoint(final_ckpt(resumed))["model"].items())
    final = load_checkpoint(final_ckpt(resumed))
    assert final["last_iter"] == resumed.train_iter and final["last_step"] == resumed.env_step
    assert final["last_episode"] >= loaded["last_episode"] > 0
    log = (resumed.exp_dir / "log" / "serial_logger.txt").read_text()
    assert f"resumed from {final_ckpt(first)}: train iter {first.train_iter}, env step {first.env_step}" in log


def test_serial_resumes_from_a_checkpoint(tmp_path: pathlib.Path, starts: list[dict[str, Any]]) -> None:
    first = serial_pipeline(CARTPOLE, max_env_step=300, root=tmp_path, exp_name="first", progress=False)
    resumed = serial_pipeline(
        CARTPOLE, max_env_step=600, root=tmp_path, exp_name="resumed", load_path=final_ckpt(first), progress=False
    )
    check_resumed(first, resumed, starts[1])
    assert resumed.env_step >= 600
    loaded = load_checkpoint(final_ckpt(first))
    assert loaded["learn_iter"] == first.train_iter  # the policy's own update count is saved and restored
    assert load_checkpoint(final_ckpt(resumed))["learn_iter"] == resumed.train_iter


def test_serial_onpolicy_resumes_from_a_checkpoint(tmp_path: pathlib.Path, starts: list[dict[str, Any]]) -> None:
    first = serial_pipeline_onpolicy(CARTPOLE_PPO, max_env_step=256, root=tmp_path, exp_name="first", progress=False)
    resumed = serial_pipeline_onpolicy(
        CARTPOLE_PPO, max_env_step=512, root=tmp_path, exp_name="resumed", load_path=final_ckpt(first), progress=False
    )
    check_resumed(first, resumed, starts[1])
    assert (first.env_step, resumed.env_step) == (256, 512)
    assert resumed.train_iter == 2 * first.train_iter


def test_resume_in_place_keeps_every_file_and_continues_the_logs(
    tmp_path: pathlib.Path, starts: list[dict[str, Any]]
) -> None:
    first = serial_pipeline(CARTPOLE, max_train_iter=20, root=tmp_path, exp_name="same", progress=False)
    ckpt = final_ckpt(first)
    loaded = load_checkpoint(ckpt)
    with pytest.raises(ConfigError, match=r"max_train_iter 20 is not beyond the train iter 20 of checkpoint"):
        serial_pipeline(CARTPOLE, max_train_iter=20, root=tmp_path, exp_name="same", load_path=ckpt)
    with pytest.raises(ConfigError, match=r"max_env_step 10 is not beyond the env step \d+ of checkpoint"):
        serial_pipeline(CARTPOLE, max_env_step=10, root=tmp_path, exp_name="same", load_path=ckpt)
    before = files_of(first.exp_dir)
    earlier_rows = eval_rows(first.exp_dir)
    resumed = serial_pipeline(CARTPOLE, max_train_iter=30, root=tmp_path, exp_name="same", load_path=ckpt)
    assert resumed.exp_dir == first.exp_dir and resumed.train_iter == 30
    after = files_of(first.exp_dir)
    for name, content in before.items():  # nothing removed; logs appended to; ckpt_best replaced only if better
        if name.startswith("log/") and not name.startswith("log/serial/"):
            assert after[name].startswith(content), name
        elif name != "ckpt/ckpt_best.pth.tar":
            assert after[name] == content, name
    assert "ckpt/iteration_30.pth.tar" in after and len(list((first.exp_dir / "log" / "serial").iterdir())) == 2
    rows = eval_rows(first.exp_dir)
    assert rows[: len(earlier_rows)] == earlier_rows and rows[len(earlier_rows)]["train_iter"] == "20"
    assert (first.exp_dir / "log" / "eval.csv").read_text().count("train_iter,") == 1  # one header
    best = load_checkpoint(first.exp_dir / "ckpt" / "ckpt_best.pth.tar")
    assert best["best_eval_return"] == max(float(row["eval_episode_return_mean"]) for row in rows)
    assert resumed.best_eval_return == best["best_eval_return"] >= first.best_eval_return
    log = (first.exp_dir / "log" / "serial_logger.txt").read_text()
    assert f"this run continues experiment directory {first.exp_dir} from iteration_20.pth.tar" in log
    assert starts[-1]["train_iter"] == 20
    assert_same_tensors(starts[-1]["state"]["model"], loaded["model"])


def test_resume_errors(tmp_path: pathlib.Path) -> None:
    with pytest.raises(CheckpointError, match=r"does not exist"):
        serial_pipeline(CARTPOLE, root=tmp_path, load_path=tmp_path / "missing.pth.tar")
    first = serial_pipeline(CARTPOLE, max_train_iter=2, root=tmp_path, exp_name="dqn", progress=False)
    with pytest.raises(CheckpointError, match=r"does not fit the policy of this config"):
        serial_pipeline_onpolicy(CARTPOLE_PPO, root=tmp_path, exp_name="ppo", load_path=final_ckpt(first))
    assert not (tmp_path / "ppo").exists()


def test_cli_load_path_resumes_a_training_run(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["-m", "serial", "-c", CARTPOLE, "--exp-name", "a", "--train-iter", "5"]) == 0
    capsys.readouterr()
    ckpt = "a/ckpt/iteration_5.pth.tar"
    assert main(["-m", "serial", "-c", CARTPOLE, "--exp-name", "b", "--train-iter", "9", "--load-path", ckpt]) == 0
    assert "train iter 9" in capsys.readouterr().out
    assert load_checkpoint(tmp_path / "b" / "ckpt" / "iteration_9.pth.tar")["last_iter"] == 9
    assert eval_rows(tmp_path / "b")[0]["train_iter"] == "5"
    with pytest.raises(SystemExit) as exit_info:
        main(["-m", "serial", "-c", CARTPOLE, "--exp-name", "c", "--train-iter", "5", "--load-path", ckpt])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("ding: error: max_train_iter 5 is not beyond the train iter 5 of checkpoint")
    with pytest.raises(SystemExit):
        main(["-m", "serial_onpolicy", "-c", CARTPOLE_PPO, "--load-path", ckpt])
    assert "does not fit the policy of this config" in capsys.readouterr().err
