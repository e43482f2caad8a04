"""``ding -m spec`` on a config whose env does not declare its spaces: they are probed in a child process.

The env lives in a module written to ``tmp_path`` in DI-engine's style (imports from ``ding.envs`` and
``ding.utils``, spaces first known after ``reset``); every build appends the building process's pid to a
file, so the tests see that the env is built once, and never in the process that runs the command.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap
import uuid

import pytest

from ding.entry.cli import main
from ding.entry.spec import format_spec_table, spec_trace_from_config
from ding.envs.probe import PROBED_LABEL

ENV_MODULE = """
import numpy as np
import gymnasium as gym

from ding.envs import BaseEnv, BaseEnvTimestep
from ding.utils import ENV_REGISTRY


@ENV_REGISTRY.register("{env_type}")
class ProbedGridEnv(BaseEnv):
    config = dict(size=3, pid_file=None)

    def __init__(self, cfg):
        self._cfg = cfg
        with open(cfg["pid_file"], "a") as file:
            file.write(f"{{__import__('os').getpid()}}\\n")

    @property
    def observation_space(self):
        return self._observation_space

    @property
    def action_space(self):
        return self._action_space

    def reset(self):
        self._observation_space = gym.spaces.Box(0.0, 1.0, (self._cfg["size"],), np.float32)
        self._action_space = gym.spaces.Discrete(4)
        return np.zeros(self._cfg["size"], np.float32)

    def step(self, action):
        return BaseEnvTimestep(np.zeros(self._cfg["size"], np.float32), np.zeros(1, np.float32), True, {{}})

    def seed(self, seed, dynamic_seed=True):
        self._seed = seed

    def close(self):
        pass

    def __repr__(self):
        return "ProbedGridEnv"
"""

CONFIG = """
main_config = dict(env=dict(size=6, pid_file={pid_file!r}, collector_env_num=1), policy=dict(cuda=False))
create_config = dict(
    env=dict(type={env_type!r}, import_names=[{module!r}]),
    env_manager=dict(type="base"),
    policy=dict(type="dqn"),
)
"""


def write_config(tmp_path: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """Write the env module and a config naming it; return the config path and the pid file."""
    suffix = uuid.uuid4().hex[:8]
    module, env_type = f"probed_grid_env_{suffix}", f"probed_grid_{suffix}"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(ENV_MODULE.format(env_type=env_type)))
    pid_file = tmp_path / "builds.txt"
    config = tmp_path / "probed_grid_config.py"
    config.write_text(CONFIG.format(pid_file=str(pid_file), env_type=env_type, module=module))
    return config, pid_file


def builds(pid_file: pathlib.Path) -> list[int]:
    return [int(pid) for pid in pid_file.read_text().split()] if pid_file.exists() else []


def test_spec_mode_prints_probed_spaces_built_once_in_a_child(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    config, pid_file = write_config(tmp_path)
    assert main(["-m", "spec", "-c", str(config)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 7 and f"env ({PROBED_LABEL})" in lines[2] and lines[3] == ""  # the table, then the bytes
    assert lines[4] == "bytes per env step: 36 (obs 24 + action 8 + reward 4)"
    assert "(6,) float32" in lines[2] and "Discrete(4)" in lines[2] and "(1,) float32" in lines[2]
    built = builds(pid_file)
    assert len(built) == 1 and built[0] != os.getpid()  # compile_config and the table share one probe


def test_declared_spaces_are_not_labelled_probed() -> None:
    root = pathlib.Path(__file__).resolve().parents[2]
    from ding.config import read_config

    main_config, create_config = read_config(str(root / "dizoo/classic_control/cartpole/config/cartpole_dqn_config.py"))
    table = format_spec_table(spec_trace_from_config(main_config, create_config))
    assert PROBED_LABEL not in table and "eval_episode_return" in table


def test_ding_command_in_a_subprocess(tmp_path: pathlib.Path) -> None:
    config, pid_file = write_config(tmp_path)
    ding_script = pathlib.Path(sys.executable).with_name("ding")
    assert ding_script.exists(), "the ding console script is installed with the package"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen(
        [str(ding_script), "-m", "spec", "-c", str(config)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert f"env ({PROBED_LABEL})" in out and "(6,) float32" in out and "Discrete(4)" in out
    built = builds(pid_file)
    assert len(built) == 1 and built[0] != process.pid
