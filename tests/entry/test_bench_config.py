"""``ding -m bench -c cfg.py`` as a user runs it: their own env module and config in a folder outside the repo.

A cheap env (a step of a few microseconds) must be recommended the in-process ``base`` manager: any hand-over to a
worker costs more than the step. An expensive env (each step sleeps 8 ms, as an env waiting on a simulator does)
must be recommended a manager whose workers step the envs in parallel. The env costs are chosen so that the answer
is clear on a loaded two-core machine: 4 sleeping envs in parallel run about 4× as fast as one after another, whatever
else the cores do, and the rule prefers the simpler configuration unless another is clearly faster.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from ding.config import compile_config, read_config
from ding.entry.bench_candidates import candidates
from ding.entry.bench_write import write_choice
from ding.errors import ConfigError

ROOT = pathlib.Path(__file__).resolve().parents[2]
DING = pathlib.Path(sys.executable).parent / "ding"
BUDGET = "4"

MY_ENVS = '''
import time

import numpy as np
import gymnasium as gym

from ding.envs import BaseEnv, BaseEnvTimestep, EnvSpaces
from ding.utils import ENV_REGISTRY


class Counter(BaseEnv):
    """Counts its steps; an episode is 50 steps. ``step_sleep`` seconds of waiting per step."""

    config = dict(step_sleep=0.0)

    @classmethod
    def raw_spaces(cls, cfg):
        return EnvSpaces(gym.spaces.Box(0.0, 50.0, (1,), np.float32), gym.spaces.Discrete(2))

    def reset(self):
        self._t = 0
        return np.zeros(1, np.float32)

    def step(self, action):
        if self._cfg.step_sleep:
            time.sleep(self._cfg.step_sleep)
        self._t += 1
        return BaseEnvTimestep(np.full(1, self._t, np.float32), np.ones(1, np.float32), self._t >= 50, {})

    def close(self):
        pass


@ENV_REGISTRY.register("cheap_counter")
class CheapCounter(Counter):
    pass


@ENV_REGISTRY.register("slow_counter")
class SlowCounter(Counter):
    config = dict(step_sleep=0.008)
'''

MY_CONFIG = """
main_config = dict(
    exp_name="counter",
    env=dict(collector_env_num=4, evaluator_env_num=1, manager={manager}),
    policy=dict(cuda=False),
)
create_config = dict(
    env=dict(type="{env_type}", import_names=["my_envs"]),
    env_manager=dict(type="{manager_type}"),
    policy=dict(type="dqn"),
)
"""


def write_project(
    folder: pathlib.Path, env_type: str, manager_type: str = "base", manager: str = "dict()"
) -> pathlib.Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "my_envs.py").write_text(MY_ENVS)
    config = folder / "my_config.py"
    config.write_text(textwrap.dedent(MY_CONFIG.format(env_type=env_type, manager_type=manager_type, manager=manager)))
    return config


def run(command: list[str], cwd: pathlib.Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # ding importable; the user's folder on no path
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def recommended_type(stdout: str) -> str:
    line = next(line for line in stdout.splitlines() if line.startswith("in the config: "))
    return line.split("create_config.env_manager.type = ")[1].split(",")[0].strip("'")


def test_a_cheap_env_is_recommended_the_in_process_manager(tmp_path: pathlib.Path) -> None:
    config = write_project(tmp_path / "project", "cheap_counter", "subprocess", "dict(step_in_caller=True)")
    before = config.read_bytes()
    done = run(
        [str(DING), "-m", "bench", "-c", "my_config.py", "--seconds", BUDGET, "--write", "tuned.py"], config.parent
    )
    assert done.returncode == 0, done.stderr
    assert recommended_type(done.stdout) == "base", done.stdout
    assert "recommended: base" in done.stdout
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and "steps/s" not in line]
    measured = [row.split("|")[1].strip() for row in rows if "not measured" not in row]
    assert "base ← chosen" in measured and "subprocess envs_per_worker=2 step_in_caller=True" in measured, rows
    assert any(row.startswith("| zmq | not measured") for row in rows), rows
    # the user's config is untouched; the new one reads it and sets the chosen manager
    assert config.read_bytes() == before
    main_config, create_config = read_config(tmp_path / "project" / "tuned.py")
    assert create_config.env_manager.type == "base" and "step_in_caller" not in main_config.env.manager
    assert "without main_config.env.manager.step_in_caller" in done.stdout
    assert main_config.env.collector_env_num == 4


def test_an_expensive_env_is_recommended_workers(tmp_path: pathlib.Path) -> None:
    config = write_project(tmp_path / "project", "slow_counter")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = run([sys.executable, "-m", "ding", "-m", "bench", "-c", str(config), "--seconds", BUDGET], elsewhere)
    assert done.returncode == 0, done.stderr
    assert recommended_type(done.stdout) in ("thread", "subprocess", "async_subprocess"), done.stdout
    assert "base ← chosen" not in done.stdout
    assert not list(elsewhere.iterdir())  # nothing written without --write


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--seconds", "0"], "ding: error: --seconds must be a number of seconds > 0 and <= 3600, got 0.0"),
        (["--seconds", "nan"], "ding: error: --seconds must be a number of seconds > 0 and <= 3600, got nan"),
        (["--seconds", "soon"], "ding: error: argument --seconds: invalid float value: 'soon'"),
        (["--write", "my_config.py"], "ding: error: --write my_config.py: the file exists"),
        (["--write", "tuned.txt"], "ding: error: --write tuned.txt: a config file is a Python file"),
        (["--write", "no/such/folder.py"], "ding: error: --write no/such/folder.py: the folder"),
        (["-s", "1"], "ding: error: -s is not used by -m bench"),
    ],
)
def test_bad_options_are_one_line_errors(tmp_path: pathlib.Path, args: list[str], error: str) -> None:
    config = write_project(tmp_path, "cheap_counter")
    before = config.read_bytes()
    done = run([str(DING), "-m", "bench", "-c", "my_config.py", *args], tmp_path)
    assert done.returncode == 2, done.stdout
    assert error in done.stderr and done.stderr.count("ding: error:") == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert config.read_bytes() == before


def test_a_config_without_an_env_is_a_one_line_error(tmp_path: pathlib.Path) -> None:
    (tmp_path / "empty.py").write_text("main_config = dict()\ncreate_config = dict()\n")
    done = run([str(DING), "-m", "bench", "-c", "empty.py", "--seconds", "1"], tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("ding: error: ") and len(done.stderr.splitlines()) == 1, done.stderr
    assert "env" in done.stderr


def test_the_written_config_keeps_the_other_manager_keys(tmp_path: pathlib.Path) -> None:
    config = write_project(
        tmp_path / "project", "cheap_counter", "subprocess", "dict(step_in_caller=True, max_retry=3)"
    )
    target = tmp_path / "tuned" / "fast.py"  # another folder: the new file finds the config by a relative path
    target.parent.mkdir()
    written, removed = write_choice(config, {"type": "thread", "envs_per_worker": 2}, target)
    assert written == target and "../project/my_config.py" in target.read_text()
    assert removed == ["step_in_caller"]  # a key of subprocess that thread does not take
    cfg = compile_config(*read_config(target), require_policy=False)
    assert cfg.env.manager.type == "thread" and cfg.env.manager.envs_per_worker == 2 and cfg.env.manager.max_retry == 3
    with pytest.raises(ConfigError, match="the file exists"):
        write_choice(config, {"type": "base"}, target)


def test_one_env_leaves_out_what_one_env_cannot_use() -> None:
    found, skipped = candidates(1, 2, {"type": "base"})
    assert [c.label for c in found] == ["base", "subprocess envs_per_worker=1", "async_subprocess"]
    assert {s.kind for s in skipped} >= {"thread", "subprocess step_in_caller", "zmq", "ray", "envpool"}
    found, _ = candidates(4, 2, {"type": "subprocess", "envs_per_worker": 4})
    assert found[-1].label == "subprocess envs_per_worker=4 (the config's)"


ENVPOOL_CONFIG = """
main_config = dict(
    exp_name="cartpole_envpool",
    env=dict(collector_env_num=4, evaluator_env_num=1, manager=dict(env_id="CartPole-v1")),
    policy=dict(cuda=False),
)
create_config = dict(
    env=dict(type="cartpole", import_names=["dizoo.classic_control.cartpole.envs.cartpole_env"]),
    env_manager=dict(type="envpool"),
    policy=dict(type="dqn"),
)
"""


def test_an_envpool_config_is_measured_with_each_thread_count(tmp_path: pathlib.Path) -> None:
    """envpool's default is one C++ thread per core; on a machine with few cores, a cheap env's pool can run faster
    with fewer, which leave the caller a core: each count from 1 to the cores is measured beside the config's."""
    pytest.importorskip("envpool")
    (tmp_path / "cfg.py").write_text(ENVPOOL_CONFIG)
    done = run([str(DING), "-m", "bench", "-c", "cfg.py", "--seconds", BUDGET], tmp_path)
    assert done.returncode == 0, done.stderr
    rows = {line.split(" | ")[0].lstrip("| ").removesuffix(" ← chosen"): line for line in done.stdout.splitlines()}
    cores = len(os.sched_getaffinity(0))
    for label in [f"envpool num_threads={threads}" for threads in range(1, cores + 1)] + ["envpool (the config's)"]:
        assert label in rows, done.stdout
        assert rows[label].split(" | ")[1].replace(",", "").isdigit(), rows[label]  # measured, not an error
    found, _ = candidates(4, cores, {"type": "envpool", "env_id": "CartPole-v1", "num_threads": 1})
    assert [c.label for c in found if c.type == "envpool"] == [f"envpool num_threads={t}" for t in range(1, cores + 1)]


def test_a_written_choice_of_another_manager_drops_the_pools_role_batch(tmp_path: pathlib.Path) -> None:
    """``env.collector_batch_size`` is an envpool pool's batch: a new file that chooses another manager drops it, so
    it compiles; one that keeps envpool keeps it."""
    config = tmp_path / "cfg.py"
    config.write_text(ENVPOOL_CONFIG.replace("collector_env_num=4,", "collector_env_num=4, collector_batch_size=2,"))
    assert compile_config(*read_config(config), require_policy=False).env.collector_batch_size == 2
    write_choice(config, {"type": "base"}, tmp_path / "base.py")
    cfg = compile_config(*read_config(tmp_path / "base.py"), require_policy=False)
    assert cfg.env.manager.type == "base" and cfg.env.collector_batch_size is None
    write_choice(config, {"type": "envpool", "num_threads": 1}, tmp_path / "pool.py")
    cfg = compile_config(*read_config(tmp_path / "pool.py"), require_policy=False)
    assert cfg.env.collector_batch_size == 2 and cfg.env.manager.num_threads == 1
