"""Runs never destroy data: re-runs, resumes in place, branches and a run killed while saving, through the ``ding``
console script from a folder outside the checkout and through ``serial_pipeline``; hostile checkpoints refused."""

from __future__ import annotations

import csv
import os
import pathlib
import re
import subprocess
import sys
from typing import Any

import pytest
import torch

from ding.entry import serial_pipeline, serial_pipeline_onpolicy
from ding.entry.run_dir import DirectoryLock, Resumed, earlier_best_return, open_run_dir
from ding.worker import load_checkpoint
from ding.worker.checkpoint import save_checkpoint
from tests.entry.test_cli import ROOT

DING = pathlib.Path(sys.executable).parent / "ding"

CONFIG = """
main_config = dict(
    exp_name="tiny",
    env=dict(collector_env_num=2, evaluator_env_num=2, n_evaluator_episode=2, stop_value=10**6),
    policy=dict(
        model=dict(encoder_hidden_size_list=[16]),
        learn=dict(update_per_collect=1, batch_size=16, learner=dict(hook=dict(save_ckpt_after_iter=10))),
        collect=dict(n_sample=8),
        eval=dict(evaluator=dict(eval_freq=10)),
    ),
)
create_config = dict(
    env=dict(type="cartpole", import_names=["dizoo.classic_control.cartpole.envs.cartpole_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="dqn"),
)
"""

KILLED_WHILE_SAVING = """
import io, os, signal, sys

import torch

from ding.entry import serial_pipeline

real_save = torch.save


def save_then_die(obj, file, *args, **kwargs):
    # half of iteration_30's bytes reach its temporary file, then the process is killed (SIGKILL: no handler runs)
    if getattr(file, "name", "").endswith("iteration_30.pth.tar.tmp"):
        data = io.BytesIO()
        real_save(obj, data, *args, **kwargs)
        file.write(data.getvalue()[: len(data.getvalue()) // 2])
        file.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    return real_save(obj, file, *args, **kwargs)


torch.save = save_then_die
serial_pipeline(sys.argv[1], seed=0, max_train_iter=40, progress=False)
"""


def ding(cwd: pathlib.Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The ``ding`` console script, as a user runs it in their own folder."""
    return subprocess.run(
        [str(DING), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def files_of(folder: pathlib.Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def eval_rows(exp_dir: pathlib.Path) -> list[dict[str, str]]:
    with (exp_dir / "log" / "eval.csv").open() as file:
        return list(csv.DictReader(file))


def written_dir(result: subprocess.CompletedProcess[str]) -> pathlib.Path:
    """The experiment directory a run's summary line names."""
    assert result.returncode == 0, result.stderr
    return pathlib.Path(result.stdout.strip().splitlines()[-1].rsplit("; ", 1)[1])


def assert_kept(before: dict[str, bytes], after: dict[str, bytes], best_may_change: bool = False) -> None:
    """Every file of ``before`` is in ``after``: the same bytes, or for the text logs the same bytes and more."""
    for name, content in before.items():
        assert name in after, f"{name} was removed"
        if name in ("log/eval.csv", "log/serial_logger.txt"):
            assert after[name].startswith(content), f"{name} was rewritten"
        elif not (best_may_change and name == "ckpt/ckpt_best.pth.tar"):
            assert after[name] == content, f"{name} was overwritten"


@pytest.fixture
def user_dir(tmp_path: pathlib.Path) -> pathlib.Path:
    """A user's folder outside the checkout, with their config file."""
    (tmp_path / "cfg.py").write_text(CONFIG)
    return tmp_path


def test_re_runs_into_one_directory_keep_every_earlier_file(user_dir: pathlib.Path) -> None:
    first = written_dir(ding(user_dir, "-m", "serial", "-c", "cfg.py", "--train-iter", "20"))
    assert first == user_dir / "tiny_seed0"
    earlier = files_of(first)
    second = ding(user_dir, "-m", "serial", "-c", "cfg.py", "--train-iter", "20")
    renewed = written_dir(second)
    assert re.fullmatch(r"tiny_seed0_\d{6}_\d{6}", renewed.name) and renewed.parent == user_dir
    assert f"experiment directory {first} holds an earlier run; this run writes {renewed}" in second.stderr
    third = serial_pipeline(str(user_dir / "cfg.py"), max_train_iter=20, root=user_dir, progress=False)
    assert third.exp_dir not in (first, renewed) and third.exp_dir.name.startswith("tiny_seed0_")
    assert files_of(first) == earlier  # byte for byte
    layout = {re.sub(r"tfevents\..*", "tfevents", name) for name in earlier}
    for folder in (renewed, third.exp_dir):
        assert {re.sub(r"tfevents\..*", "tfevents", name) for name in files_of(folder)} == layout
    for folder in (renewed, third.exp_dir):  # each a whole run of its own, named in its own config
        assert (folder / "total_config.py").read_text().count(f"exp_name='{folder.name}'") == 1
        assert [row["train_iter"] for row in eval_rows(folder)] == ["0", "10", "20"]


def test_resume_in_place_keeps_the_checkpoint_it_resumed_from_and_the_best(user_dir: pathlib.Path) -> None:
    exp_dir = written_dir(ding(user_dir, "-m", "serial", "-c", "cfg.py", "--train-iter", "20"))
    with (exp_dir / "log" / "eval.csv").open("a") as file:  # an earlier evaluation no policy of 20 updates can beat
        file.write("15,80,1.0,999999.0,0.0,999999.0,999999.0,2,1,0\n")
    earlier, rows = files_of(exp_dir), eval_rows(exp_dir)
    resumed = ding(
        user_dir,
        "-m",
        "serial",
        "-c",
        "cfg.py",
        "--train-iter",
        "40",
        "--load-path",
        "tiny_seed0/ckpt/iteration_20.pth.tar",
    )
    assert written_dir(resumed) == exp_dir
    assert "this run continues experiment directory" in resumed.stderr and "best eval return so far 999999.00" in (
        resumed.stderr
    )
    after = files_of(exp_dir)
    assert_kept(earlier, after)  # ckpt_best included: nothing beat the earlier best
    assert {"ckpt/iteration_20.pth.tar", "ckpt/iteration_30.pth.tar", "ckpt/iteration_40.pth.tar"} <= after.keys()
    new_rows = eval_rows(exp_dir)
    assert new_rows[: len(rows)] == rows and [r["train_iter"] for r in new_rows[len(rows) :]] == ["20", "30", "40"]
    assert all(r["is_best"] == "0" for r in new_rows[len(rows) :])
    assert len(list((exp_dir / "log" / "serial").iterdir())) == 2  # a new tensorboard event file beside the first
    assert load_checkpoint(exp_dir / "ckpt" / "iteration_40.pth.tar")["best_eval_return"] == 999999.0
    assert float(new_rows[len(rows)]["wall_time"]) >= float(rows[-1]["wall_time"])  # wall_time goes on


def test_resuming_from_an_older_checkpoint_or_with_another_config_branches_off(user_dir: pathlib.Path) -> None:
    cfg = str(user_dir / "cfg.py")
    first = serial_pipeline(cfg, max_train_iter=20, root=user_dir, progress=False)
    earlier = files_of(first.exp_dir)
    branch = serial_pipeline(
        cfg, max_train_iter=30, root=user_dir, load_path=first.exp_dir / "ckpt" / "iteration_10.pth.tar", progress=False
    )
    assert branch.exp_dir != first.exp_dir and files_of(first.exp_dir) == earlier
    log = (branch.exp_dir / "log" / "serial_logger.txt").read_text()
    assert (
        f"experiment directory {first.exp_dir} holds an earlier run (the checkpoint resumed from, "
        f"iteration_10.pth.tar, is not its newest, iteration_20.pth.tar); this run writes {branch.exp_dir}"
    ) in log
    (user_dir / "other.py").write_text(CONFIG.replace("stop_value=10**6", "stop_value=10**5"))
    changed = serial_pipeline(
        str(user_dir / "other.py"),
        max_train_iter=30,
        root=user_dir,
        load_path=first.exp_dir / "ckpt" / "iteration_20.pth.tar",
        progress=False,
    )
    assert changed.exp_dir not in (first.exp_dir, branch.exp_dir) and files_of(first.exp_dir) == earlier
    assert (
        "its total_config.py differs from this run's config" in (changed.exp_dir / "log/serial_logger.txt").read_text()
    )


def test_a_run_killed_while_saving_loses_no_complete_file(user_dir: pathlib.Path) -> None:
    script = user_dir / "killed_run.py"
    script.write_text(KILLED_WHILE_SAVING)
    killed = subprocess.run(
        [sys.executable, str(script), "cfg.py"],
        cwd=user_dir,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert killed.returncode == -9, killed.stderr
    exp_dir = user_dir / "tiny_seed0"
    ckpts = sorted(p.name for p in (exp_dir / "ckpt").iterdir())
    assert ckpts == ["ckpt_best.pth.tar", "iteration_10.pth.tar", "iteration_20.pth.tar", "iteration_30.pth.tar.tmp"]
    earlier = files_of(exp_dir)
    rerun = written_dir(ding(user_dir, "-m", "serial", "-c", "cfg.py", "--train-iter", "20"))  # a fresh run: elsewhere
    assert rerun != exp_dir and files_of(exp_dir) == earlier
    resumed = ding(
        user_dir,
        "-m",
        "serial",
        "-c",
        "cfg.py",
        "--train-iter",
        "40",
        "--load-path",
        "tiny_seed0/ckpt/iteration_20.pth.tar",
    )
    assert written_dir(resumed) == exp_dir
    assert "removed incomplete saves: iteration_30.pth.tar.tmp" in resumed.stderr
    after = files_of(exp_dir)
    assert_kept({k: v for k, v in earlier.items() if not k.endswith(".tmp")}, after, best_may_change=True)
    assert not any(name.endswith(".tmp") for name in after)
    assert load_checkpoint(exp_dir / "ckpt" / "iteration_30.pth.tar")["last_iter"] == 30  # complete, from the resume


def test_serial_onpolicy_keeps_earlier_runs_too(tmp_path: pathlib.Path) -> None:
    ppo = str(ROOT / "dizoo/classic_control/cartpole/config/cartpole_ppo_config.py")
    first = serial_pipeline_onpolicy(ppo, max_env_step=128, root=tmp_path, exp_name="ppo", progress=False)
    earlier = files_of(first.exp_dir)
    again = serial_pipeline_onpolicy(ppo, max_env_step=128, root=tmp_path, exp_name="ppo", progress=False)
    assert again.exp_dir.name.startswith("ppo_") and files_of(first.exp_dir) == earlier
    ckpt = first.exp_dir / "ckpt" / f"iteration_{first.train_iter}.pth.tar"
    resumed = serial_pipeline_onpolicy(
        ppo, max_env_step=first.env_step + 1, root=tmp_path, exp_name="ppo", load_path=ckpt, progress=False
    )
    assert resumed.exp_dir == first.exp_dir
    assert_kept(earlier, files_of(first.exp_dir), best_may_change=True)


def test_a_directory_in_use_is_not_continued(tmp_path: pathlib.Path) -> None:
    exp_dir = tmp_path / "busy"
    save_checkpoint({"model": {}, "last_iter": 5}, exp_dir / "ckpt" / "iteration_5.pth.tar")
    held = DirectoryLock.acquire(exp_dir)
    assert held is not None
    try:
        resumed = Resumed(exp_dir / "ckpt" / "iteration_5.pth.tar", 5, None)
        run_dir = open_run_dir(tmp_path, "busy", "config", resumed)
        assert run_dir.path != exp_dir and not run_dir.continued
        assert (
            run_dir.note
            == f"experiment directory {exp_dir} is in use by a running process; this run writes {run_dir.path}"
        )
        run_dir.close()
    finally:
        held.release()
    run_dir = open_run_dir(tmp_path, "busy", "config", resumed)  # released: continued
    assert run_dir.path == exp_dir and run_dir.continued
    run_dir.close()


def test_the_best_return_so_far_is_the_highest_the_run_recorded(tmp_path: pathlib.Path) -> None:
    assert earlier_best_return(tmp_path, None) is None
    assert earlier_best_return(tmp_path, 3.0) == 3.0  # the resumed checkpoint's
    save_checkpoint({"model": {}, "best_eval_return": 7.5}, tmp_path / "ckpt" / "ckpt_best.pth.tar")
    assert earlier_best_return(tmp_path, 3.0) == 7.5  # ckpt_best's own
    (tmp_path / "log").mkdir()
    (tmp_path / "log" / "eval.csv").write_text("train_iter,eval_episode_return_mean\n0,9.25\n10,nan\n20,x\n")
    assert earlier_best_return(tmp_path, 3.0) == 9.25  # eval.csv's rows


# ----- checkpoints that are not ------------------------------------------------------------------------------
class RunsCode:
    """Unpickling this would call ``os.system``: what a hostile checkpoint does."""

    def __init__(self, marker: pathlib.Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


def test_a_hostile_checkpoint_is_refused_everywhere(user_dir: pathlib.Path) -> None:
    marker = user_dir / "code_ran"
    hostile = user_dir / "hostile.pth.tar"
    torch.save({"model": RunsCode(marker)}, hostile)
    ppo = user_dir / "ppo.py"
    ppo.write_text(
        "from dizoo.classic_control.cartpole.config.cartpole_ppo_config import create_config, main_config\n"
        f"main_config.policy.learn.pretrained_model_path = {str(hostile)!r}\n"
    )
    for args in (
        ("-m", "eval", "-c", "cfg.py", "--load-path", "hostile.pth.tar"),
        ("-m", "serial", "-c", "cfg.py", "--load-path", "hostile.pth.tar"),
        ("-m", "serial_onpolicy", "-c", "ppo.py"),
    ):
        result = ding(user_dir, *args)
        assert result.returncode == 2, result.stderr
        error = result.stderr.strip().splitlines()
        assert len(error) == 1 and error[0].startswith("ding: error: "), result.stderr
        assert "hostile.pth.tar is refused: its pickle would call posix.system" in error[0]
        assert not marker.exists()
    assert "pretrained_model_path" in result.stderr
    assert sorted(p.name for p in user_dir.iterdir()) == ["cfg.py", "hostile.pth.tar", "ppo.py"]  # nothing written


def test_a_directory_is_no_checkpoint(user_dir: pathlib.Path) -> None:
    exp_dir = written_dir(ding(user_dir, "-m", "serial", "-c", "cfg.py", "--train-iter", "10"))
    for mode, given in (("serial", "tiny_seed0"), ("eval", "tiny_seed0/ckpt"), ("eval", ".")):
        result = ding(user_dir, "-m", mode, "-c", "cfg.py", "--load-path", given)
        assert result.returncode == 2
        assert result.stderr.startswith(
            f"ding: error: {given} is a directory, not a checkpoint file; checkpoints are ckpt/iteration_<N>.pth.tar "
            "or ckpt/ckpt_best.pth.tar; "
        ), result.stderr
        listed = result.stderr.strip().split("; ")[-1]
        if given == ".":
            assert listed == "it holds none"
        else:
            names = [pathlib.Path(p).name for p in listed.removeprefix("found: ").split(", ")]
            assert names == ["iteration_10.pth.tar", "ckpt_best.pth.tar"]
        assert "does not exist" not in result.stderr
    assert (exp_dir / "ckpt").is_dir()
