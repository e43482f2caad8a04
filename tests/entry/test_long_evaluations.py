"""An evaluation on a user's env whose episodes never end: bounded by policy.eval.evaluator.fail_after_episode_steps,
stopped with one line naming the env and the bound, and the training so far kept in a checkpoint."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from ding.config import compile_config, read_config
from ding.errors import ConfigError
from ding.worker import load_checkpoint
from tests.entry.test_cli import ROOT

ENV_MODULE = '''
import numpy as np
from gymnasium import spaces

from ding.envs import BaseEnv, BaseEnvTimestep, EnvSpaces
from ding.utils import ENV_REGISTRY


@ENV_REGISTRY.register("endless_walk")
class EndlessWalk(BaseEnv):
    """Every step is like the last: no episode ever ends."""

    config = dict()

    @classmethod
    def raw_spaces(cls, cfg):
        return EnvSpaces(spaces.Box(-1.0, 1.0, (2,), np.float32), spaces.Discrete(2))

    def reset(self):
        return np.zeros(2, np.float32)

    def step(self, action):
        return BaseEnvTimestep(np.zeros(2, np.float32), np.ones(1, np.float32), False, {})

    def close(self):
        pass
'''

CONFIG = """
main_config = dict(
    exp_name="endless",
    env=dict(collector_env_num=1, evaluator_env_num=2, n_evaluator_episode=2, stop_value=10),
    policy=dict(
        model=dict(encoder_hidden_size_list=[8]),
        learn=dict(update_per_collect=1, batch_size=4),
        collect=dict(n_sample=8),
        eval=dict(evaluator=dict(eval_freq=5, fail_after_episode_steps={bound!r})),
    ),
)
create_config = dict(
    env=dict(type="endless_walk", import_names=["endless_walk_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="dqn"),
)
"""


def write_user_files(folder: pathlib.Path, bound: object) -> None:
    (folder / "endless_walk_env.py").write_text(ENV_MODULE)
    (folder / "cfg.py").write_text(CONFIG.format(bound=bound))


def ding(cwd: pathlib.Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The ``ding`` console script in the user's folder, their env module importable (``PYTHONPATH=.``)."""
    return subprocess.run(
        [str(pathlib.Path(sys.executable).parent / "ding"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(cwd)])},
    )


def test_an_evaluation_that_never_ends_stops_at_the_bound(tmp_path: pathlib.Path) -> None:
    write_user_files(tmp_path, 300)
    result = ding(tmp_path, "-m", "serial", "-c", "cfg.py", "--train-iter", "12")
    assert result.returncode == 2
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith(
        "ding: error: evaluator env 0 played 300 steps without an episode end, the bound "
        "policy.eval.evaluator.fail_after_episode_steps=300: the evaluation stops"
    ), result.stderr
    log = (tmp_path / "endless_seed0" / "log" / "serial_logger.txt").read_text()
    assert "the run failed at train iter 0: EpisodeBoundError" in log
    assert load_checkpoint(tmp_path / "endless_seed0" / "ckpt" / "iteration_0.pth.tar")["last_iter"] == 0
    result = ding(tmp_path, "-m", "eval", "-c", "cfg.py", "--load-path", "endless_seed0/ckpt/iteration_0.pth.tar")
    assert result.returncode == 2 and "evaluator env 0 played 300 steps without an episode end" in result.stderr


@pytest.mark.parametrize("bound", [0, "300", 2.5])
def test_the_bound_is_validated(tmp_path: pathlib.Path, bound: object) -> None:
    write_user_files(tmp_path, bound)
    result = ding(tmp_path, "-m", "serial", "-c", "cfg.py", "--train-iter", "2")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "ding: error: policy.eval.evaluator.fail_after_episode_steps must be a positive int or None (None: unbounded), "
        f"got {bound!r}"
    )
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "__pycache__") == ["cfg.py", "endless_walk_env.py"]


def test_the_bound_is_a_declared_key() -> None:
    main_config, create_config = read_config(ROOT / "dizoo/classic_control/cartpole/config/cartpole_dqn_config.py")
    assert compile_config(main_config, create_config).policy.eval.evaluator.fail_after_episode_steps is None
    main_config.policy.eval = {"evaluator": {"fail_after_episode_step": 100}}
    with pytest.raises(ConfigError, match=r"Did you mean 'fail_after_episode_steps'"):
        compile_config(main_config, create_config)
