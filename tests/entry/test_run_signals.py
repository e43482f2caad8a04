"""Preemption: SIGTERM / SIGINT sent to real training processes save a checkpoint, close the envs (no shared
memory left behind, no worker left running) and exit 143 / 130; wall-time checkpoints; resuming with the replay
buffer."""

from __future__ import annotations

import csv
import os
import pathlib
import signal
import subprocess
import sys
import time
from typing import Any

import pytest

from ding.config import compile_config
from ding.entry import serial_pipeline
from ding.errors import ConfigError
from ding.worker import load_checkpoint
from ding.worker.buffer_state import decode_samples
from tests.entry.test_cli import ROOT

CONFIG = """
from easydict import EasyDict

main_config = EasyDict(dict(
    exp_name="endless",
    env=dict(collector_env_num=4, evaluator_env_num=2, n_evaluator_episode=2, stop_value=10**6,
             manager=dict(shared_memory=True)),
    policy=dict(
        model=dict(encoder_hidden_size_list=[32, 32]),
        learn=dict(update_per_collect=2, batch_size=32{learn}),
        collect=dict(n_sample=16),
        eval=dict(evaluator=dict(eval_freq=30)),
        other=dict(replay_buffer=dict(replay_buffer_size=3000{buffer})),
    ),
))
create_config = EasyDict(dict(
    env=dict(type="cartpole", import_names=["dizoo.classic_control.cartpole.envs.cartpole_env"]),
    env_manager=dict(type="{manager}"),
    policy=dict(type="{policy}"),
))
"""


def write_config(tmp_path: pathlib.Path, name: str = "cfg.py", *, policy: str = "dqn", **keys: Any) -> pathlib.Path:
    learn = "".join(f", {key}={value!r}" for key, value in keys.get("learn", {}).items())
    buffer = "".join(f", {key}={value!r}" for key, value in keys.get("buffer", {}).items())
    text = CONFIG.format(learn=learn, buffer=buffer, manager=keys.get("manager", "subprocess"), policy=policy)
    if policy == "ppo":
        text = text.replace("update_per_collect=2, ", "").replace("n_sample=16", "n_sample=64")
        text = text.replace(", other=dict(replay_buffer=dict(replay_buffer_size=3000))", "")
        text = text.replace("        other=dict(replay_buffer=dict(replay_buffer_size=3000)),\n", "")
    path = tmp_path / name
    path.write_text(text)
    return path


def eval_rows(exp_dir: pathlib.Path) -> list[dict[str, str]]:
    with (exp_dir / "log" / "eval.csv").open() as file:
        return list(csv.DictReader(file))


def children(pid: int) -> list[int]:
    found = []
    for task in pathlib.Path(f"/proc/{pid}/task").iterdir():
        with open(task / "children") as file:
            found += [int(child) for child in file.read().split()]
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class Training:
    """A training process (the ``ding`` command or a script) with its output in files."""

    def __init__(self, args: list[str], cwd: pathlib.Path, exp_dir: pathlib.Path, new_session: bool = False) -> None:
        self.cwd, self.exp_dir = cwd, exp_dir
        self.out_path, self.err_path = cwd / "stdout.txt", cwd / "stderr.txt"
        with self.out_path.open("w") as out, self.err_path.open("w") as err:
            self.process = subprocess.Popen(
                [sys.executable, *args],
                cwd=cwd,
                stdout=out,
                stderr=err,
                text=True,
                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a background shell ignores it
                start_new_session=new_session,  # its own process group, to signal as a whole
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )

    def wait_for_evaluations(self, count: int, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        csv_path = self.exp_dir / "log" / "eval.csv"
        while not (csv_path.exists() and len(csv_path.read_text().splitlines()) > count):
            assert self.process.poll() is None, self.err_path.read_text()
            assert time.monotonic() < deadline, "the run did not evaluate in time"
            time.sleep(0.05)

    def stop(self, signum: int, group: bool = False) -> tuple[int, str, str]:
        if group:  # as Slurm does: every process of the job, workers included
            os.killpg(self.process.pid, signum)
        else:
            self.process.send_signal(signum)
        status = self.process.wait(timeout=90)
        return status, self.out_path.read_text(), self.err_path.read_text()


def iteration_ckpts(exp_dir: pathlib.Path) -> list[pathlib.Path]:
    names = [p.name for p in (exp_dir / "ckpt").iterdir()]
    assert not any(name.endswith(".tmp") for name in names), names
    return sorted((exp_dir / "ckpt").glob("iteration_*.pth.tar"), key=lambda p: int(p.name.split("_")[1][:-8]))


def check_clean_stop(run: Training, status: int, out: str, err: str, signum: int, workers: list[int]) -> dict:
    name = signal.Signals(signum).name
    assert status == 128 + signum, err
    assert out.startswith(f"seed 0: interrupted by {name}"), out
    assert "leaked" not in err and "resource_tracker" not in err and "Traceback" not in err, err
    assert not [p for p in pathlib.Path("/dev/shm").glob(f"ding_{run.process.pid}_*")]
    deadline = time.monotonic() + 10
    while any(alive(worker) for worker in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [worker for worker in workers if alive(worker)]
    log = (run.exp_dir / "log" / "serial_logger.txt").read_text()
    label = "Ctrl-C" if signum == signal.SIGINT else name
    assert f"interrupted ({label}): saving a checkpoint and closing the envs" in log
    ckpts = iteration_ckpts(run.exp_dir)
    assert len(ckpts) == 1
    state = load_checkpoint(ckpts[-1])
    assert ckpts[-1].name == f"iteration_{state['last_iter']}.pth.tar" and state["last_iter"] >= 60
    return state


def test_sigterm_during_serial_saves_closes_shared_memory_and_exits_143(tmp_path: pathlib.Path) -> None:
    config = write_config(tmp_path)
    run = Training(["-m", "ding.entry.cli", "-m", "serial", "-c", str(config)], tmp_path, tmp_path / "endless_seed0")
    run.wait_for_evaluations(3)
    workers = children(run.process.pid)
    assert len(workers) >= 2  # the collector's and the evaluator's worker processes
    assert list(pathlib.Path("/dev/shm").glob(f"ding_{run.process.pid}_*"))  # the run uses shared memory
    status, out, err = run.stop(signal.SIGTERM)
    state = check_clean_stop(run, status, out, err, signal.SIGTERM, workers)
    assert "replay_buffer" not in state  # not asked for
    # --load-path resumes: the counters go on from the checkpoint's
    limit = state["last_step"] + 200
    resume = ("--load-path", str(iteration_ckpts(run.exp_dir)[-1]), "--env-step", str(limit))
    resumed = subprocess.run(
        [sys.executable, "-m", "ding.entry.cli", "-m", "serial", "-c", str(config), "--exp-name", "resumed", *resume],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert resumed.returncode == 0, resumed.stderr
    rows = eval_rows(tmp_path / "resumed")
    assert (rows[0]["train_iter"], rows[0]["env_step"]) == (str(state["last_iter"]), str(state["last_step"]))
    final = load_checkpoint(iteration_ckpts(tmp_path / "resumed")[-1])
    assert final["last_step"] >= limit and final["last_iter"] > state["last_iter"]
    assert final["last_episode"] > state["last_episode"]
    assert "replay buffer refilled" in (tmp_path / "resumed" / "log" / "serial_logger.txt").read_text()


def test_sigint_to_a_script_calling_the_library_pipeline(tmp_path: pathlib.Path) -> None:
    config = write_config(tmp_path)
    script = tmp_path / "train.py"
    script.write_text(
        f"import sys\nfrom ding.config import read_config\nfrom ding.entry import serial_pipeline\n"
        f"result = serial_pipeline(read_config({str(config)!r}), seed=0)\nsys.exit(result.exit_status)\n"
    )
    run = Training([str(script)], tmp_path, tmp_path / "endless_seed0")
    run.wait_for_evaluations(3)
    workers = children(run.process.pid)
    status, out, err = run.stop(signal.SIGINT)
    check_clean_stop(run, status, out, err, signal.SIGINT, workers)
    assert "evaluation at train iter 0, env step 0" in err  # the library shows its log lines as the command does


def test_sigterm_to_the_process_group_of_a_config_run_as_a_script(tmp_path: pathlib.Path) -> None:
    """``python cfg.py`` (a dizoo config's ``__main__``) stopped as Slurm stops a job: SIGTERM to every process."""
    config = write_config(tmp_path)
    main = "    raise SystemExit(serial_pipeline((main_config, create_config), seed=0).exit_status)"
    script = f'\nif __name__ == "__main__":\n    from ding.entry import serial_pipeline\n\n{main}\n'
    config.write_text(config.read_text() + script)
    run = Training([str(config)], tmp_path, tmp_path / "endless_seed0", new_session=True)
    run.wait_for_evaluations(3)
    workers = children(run.process.pid)
    status, out, err = run.stop(signal.SIGTERM, group=True)
    check_clean_stop(run, status, out, err, signal.SIGTERM, workers)


def test_the_pipeline_restores_the_signal_handlers_it_found(tmp_path: pathlib.Path) -> None:
    def mine(signum: int, frame: Any) -> None:
        raise AssertionError("not expected")

    previous = signal.signal(signal.SIGTERM, mine)
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)  # a background job starts with SIG_IGN
    try:
        result = serial_pipeline(
            str(write_config(tmp_path, manager="base")), max_train_iter=2, root=tmp_path, progress=False
        )
        assert signal.getsignal(signal.SIGTERM) is mine
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert not result.interrupted and result.exit_status == 0
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)


@pytest.mark.slow
def test_sigterm_during_serial_onpolicy(tmp_path: pathlib.Path) -> None:
    config = write_config(tmp_path, policy="ppo")
    run = Training(
        ["-m", "ding.entry.cli", "-m", "serial_onpolicy", "-c", str(config)], tmp_path, tmp_path / "endless_seed0"
    )
    run.wait_for_evaluations(3)
    workers = children(run.process.pid)
    status, out, err = run.stop(signal.SIGTERM)
    check_clean_stop(run, status, out, err, signal.SIGTERM, workers)


# ----- the config keys (policy.learn.learner.hook.save_ckpt_after_minutes, replay_buffer.save_in_checkpoint) --
def test_the_new_keys_are_declared_for_strict_configs(tmp_path: pathlib.Path) -> None:
    from ding.config import read_config

    main, create = read_config(write_config(tmp_path, learn={}, buffer={"save_in_checkpoint": True}))
    main.policy.learn.learner = {"hook": {"save_ckpt_after_minutes": 30}}
    cfg = compile_config(main, create)
    assert cfg.policy.learn.learner.hook.save_ckpt_after_minutes == 30
    assert cfg.policy.other.replay_buffer.save_in_checkpoint is True
    main.policy.other.replay_buffer["save_in_checkpont"] = True
    with pytest.raises(ConfigError, match=r"save_in_checkpont.*Did you mean 'save_in_checkpoint'"):
        compile_config(main, create)


def test_wall_time_checkpoints_and_resuming_with_the_replay_buffer(tmp_path: pathlib.Path) -> None:
    from ding.config import read_config

    main, create = read_config(write_config(tmp_path, manager="base", buffer={"save_in_checkpoint": True}))
    main.policy.learn.learner = {"hook": {"save_ckpt_after_minutes": 0.0002}}  # every 12 ms
    first = serial_pipeline((main, create), max_env_step=600, root=tmp_path, exp_name="first", progress=False)
    ckpts = iteration_ckpts(first.exp_dir)
    assert len(ckpts) >= 3  # the wall-time ones and the final one
    log = (first.exp_dir / "log" / "serial_logger.txt").read_text()
    assert "(save_ckpt_after_minutes)" in log and "with replay_buffer" in log
    final = load_checkpoint(ckpts[-1])
    stored = decode_samples(final["replay_buffer"]["samples"])
    assert len(stored) == final["replay_buffer"]["pushed"] == final["last_step"]  # n_sample 16, 1-step samples
    resumed = serial_pipeline(
        (main, create), max_env_step=900, root=tmp_path, exp_name="resumed", load_path=ckpts[-1], progress=False
    )
    log = (resumed.exp_dir / "log" / "serial_logger.txt").read_text()
    assert f"replay buffer of {len(stored)} transitions restored" in log
    again = load_checkpoint(iteration_ckpts(resumed.exp_dir)[-1])["replay_buffer"]
    assert again["pushed"] == resumed.env_step and resumed.env_step >= 900
