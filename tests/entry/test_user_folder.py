"""A user's own env, in their own folder outside the repo, with a wrapper chain from their own config.

The folder holds ``my_env.py`` (an env written DI-engine's way: a ``BaseEnv`` registered with ``ENV_REGISTRY``,
spaces as properties, no ``raw_spaces``), ``my_raw_env.py`` (one that declares ``raw_spaces``) and configs in
DI-engine's layout naming them in ``env.import_names``, with a time limit and a frame stack in ``env.env_wrapper``.
Every command runs as the user runs it: the ``ding`` console script (or ``python -m ding``), in the config's folder
or elsewhere, with only ding itself on ``PYTHONPATH``; the user's modules are found beside the config.
"""

from __future__ import annotations

import csv
import os
import pathlib
import socket
import subprocess
import sys
import textwrap

import pytest

from ding.config import read_config
from ding.entry.env_worker import run_keygen

ROOT = pathlib.Path(__file__).resolve().parents[2]
DING = pathlib.Path(sys.executable).parent / "ding"
LIMIT = 50

MY_ENV = '''
import numpy as np
import gymnasium as gym

from ding.envs import BaseEnv, BaseEnvTimestep
from ding.utils import ENV_REGISTRY


@ENV_REGISTRY.register("my_walk")
class MyWalkEnv(BaseEnv):
    """A walk on a line: the position and the time, one reward per step, 200 steps."""

    def __init__(self, cfg):
        self._cfg = cfg
        self._observation_space = gym.spaces.Box(-200.0, 200.0, (2,), np.float32)
        self._action_space = gym.spaces.Discrete(2)
        self._reward_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)

    @property
    def observation_space(self):
        return self._observation_space

    @property
    def action_space(self):
        return self._action_space

    @property
    def reward_space(self):
        return self._reward_space

    def seed(self, seed, dynamic_seed=True):
        self._seed = seed

    def reset(self):
        self._x = np.zeros(2, np.float32)
        return self._x.copy()

    def step(self, action):
        assert isinstance(action, np.ndarray) and action.shape == (1,), action  # DI-engine's form
        self._x[0] += 1.0 if action.item() == 1 else -1.0
        self._x[1] += 1.0
        return BaseEnvTimestep(self._x.copy(), np.ones(1, np.float32), bool(self._x[1] >= 200), {})

    def close(self):
        pass
'''

MY_RAW_ENV = '''
import numpy as np
import gymnasium as gym

from ding.envs import BaseEnv, BaseEnvTimestep, EnvSpaces
from ding.utils import ENV_REGISTRY


@ENV_REGISTRY.register("my_declared_walk")
class MyDeclaredWalkEnv(BaseEnv):
    """The same walk, its spaces declared from the config."""

    config = dict(length=200)

    @classmethod
    def raw_spaces(cls, cfg):
        return EnvSpaces(
            gym.spaces.Box(-200.0, 200.0, (2,), np.float32), gym.spaces.Discrete(2), gym.spaces.Box(0.0, 1.0, (1,))
        )

    def reset(self):
        self._x = np.zeros(2, np.float32)
        return self._x.copy()

    def step(self, action):
        self._x[0] += 1.0 if int(action[0]) == 1 else -1.0
        self._x[1] += 1.0
        return BaseEnvTimestep(self._x.copy(), np.ones(1, np.float32), bool(self._x[1] >= self._cfg.length), {})

    def close(self):
        pass
'''

MY_CONFIG = """
from easydict import EasyDict

my_config = dict(
    exp_name="my_walk_dqn",
    env=dict(
        collector_env_num=2,
        evaluator_env_num=1,
        n_evaluator_episode=1,
        stop_value=10000,
        env_wrapper=[("time_limit", dict(max_episode_steps={limit})), ("frame_stack", dict(n_frames=2))],
        manager={manager},
    ),
    policy=dict(
        cuda=False,
        model=dict(encoder_hidden_size_list=[16, 16]),
        learn=dict(batch_size=16, update_per_collect=1),
        collect=dict(n_sample=32),
        other=dict(replay_buffer=dict(replay_buffer_size=1000)),
    ),
)
main_config = EasyDict(my_config)
create_config = EasyDict(
    dict(
        env=dict(type="{env_type}", import_names=["{module}"]),
        env_manager=dict(type="{manager_type}"),
        policy=dict(type="dqn"),
    )
)

if __name__ == "__main__":
    from ding.entry import serial_pipeline

    serial_pipeline((main_config, create_config), seed=0, max_env_step=300)
"""


def write_project(
    folder: pathlib.Path,
    *,
    name: str = "my_config.py",
    env_type: str = "my_walk",
    module: str = "my_env",
    manager_type: str = "subprocess",
    manager: str = "dict(shared_memory=False)",
) -> pathlib.Path:
    """The user's folder: both env modules and a config; returns the config's path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "my_env.py").write_text(MY_ENV)
    (folder / "my_raw_env.py").write_text(MY_RAW_ENV)
    text = MY_CONFIG.format(limit=LIMIT, env_type=env_type, module=module, manager_type=manager_type, manager=manager)
    config = folder / name
    config.write_text(textwrap.dedent(text))
    return config


def user_env() -> dict[str, str]:
    """The environment of the user's shell: ding importable (this checkout), their folder not on any path."""
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def run(command: list[str], cwd: pathlib.Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, env=user_env(), capture_output=True, text=True, timeout=timeout)


def ding(*args: str, cwd: pathlib.Path) -> subprocess.CompletedProcess[str]:
    return run([str(DING), *args], cwd)


@pytest.fixture
def project(tmp_path: pathlib.Path) -> pathlib.Path:
    return tmp_path / "project"


@pytest.fixture
def elsewhere(tmp_path: pathlib.Path) -> pathlib.Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    return folder


def config_argument(config: pathlib.Path, cwd: pathlib.Path) -> str:
    """The config as the user names it: by its name in its folder, else by a relative path."""
    return os.path.relpath(config, cwd)


@pytest.mark.parametrize("where", ["project", "elsewhere"])
@pytest.mark.parametrize("env_type", ["my_walk", "my_declared_walk"])
def test_spec_shows_the_chain_and_its_spaces(
    where: str, env_type: str, project: pathlib.Path, elsewhere: pathlib.Path
) -> None:
    module = "my_env" if env_type == "my_walk" else "my_raw_env"
    config = write_project(project, env_type=env_type, module=module)
    cwd = project if where == "project" else elsewhere
    done = ding("-m", "spec", "-c", config_argument(config, cwd), cwd=cwd)
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and not line.startswith("| #")]
    probed = " (probed by building the env)" if env_type == "my_walk" else ""
    assert [row.split("|")[2].strip() for row in rows] == [
        f"env{probed}",
        f"time_limit(max_episode_steps={LIMIT})",
        "frame_stack(n_frames=2, fields=None)",
        "eval_episode_return()",
    ]
    assert [row.split("|")[3].strip() for row in rows] == [
        "(2,) float32",
        "(2,) float32",
        "(2, 2) float32",
        "(2, 2) float32",
    ]
    assert "bytes per env step: 28 (obs 16 + action 8 + reward 4)" in done.stdout


def test_python_m_ding_and_the_version(project: pathlib.Path, elsewhere: pathlib.Path) -> None:
    config = write_project(project)
    done = run([sys.executable, "-m", "ding", "-m", "spec", "-c", str(config)], elsewhere)
    assert done.returncode == 0, done.stderr
    assert "frame_stack(n_frames=2, fields=None)" in done.stdout
    import ding as ding_package

    for command in ([str(DING), "--version"], [sys.executable, "-m", "ding", "--version"]):
        done = run(command, elsewhere)
        assert (done.returncode, done.stdout.strip()) == (0, f"ding {ding_package.__version__}")


@pytest.mark.parametrize("context", ["fork", "spawn", "forkserver"])
def test_check_passes_in_the_configured_manager(context: str, project: pathlib.Path, elsewhere: pathlib.Path) -> None:
    config = write_project(project, manager=f"dict(shared_memory=False, context={context!r})")
    done = ding("-m", "spec", "-c", str(config), "--check", "300", cwd=elsewhere)
    assert done.returncode == 0, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("check passed: 300 env steps (") and "in 2 envs of the subprocess manager" in last
    assert "the env and each of the 3 steps of its chain" in last


@pytest.mark.parametrize("where", ["project", "elsewhere"])
def test_serial_trains_on_the_chained_env(where: str, project: pathlib.Path, elsewhere: pathlib.Path) -> None:
    config = write_project(project)
    cwd = project if where == "project" else elsewhere
    done = ding("-m", "serial", "-c", config_argument(config, cwd), "--env-step", "300", cwd=cwd)
    assert done.returncode == 0, done.stderr
    check_run(cwd / "my_walk_dqn_seed0")


def check_run(exp_dir: pathlib.Path) -> None:
    """The run's compiled config sizes the model for the chain's stacked frames; its episodes end at the limit."""
    main_config, _ = read_config(exp_dir / "total_config.py")
    assert tuple(main_config.policy.model.obs_shape) == (2, 2)
    assert main_config.env.env_wrapper[0] == ("time_limit", {"max_episode_steps": LIMIT})
    with open(exp_dir / "log" / "eval.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    assert rows and {float(row["eval_episode_return_mean"]) for row in rows} == {float(LIMIT)}  # 1 per step


def test_python_config_trains_the_same_way(project: pathlib.Path) -> None:
    config = write_project(project)
    done = run([sys.executable, config.name], project)
    assert done.returncode == 0, done.stderr
    check_run(project / "my_walk_dqn_seed0")


def test_serial_with_a_zmq_manager(project: pathlib.Path, elsewhere: pathlib.Path) -> None:
    config = write_project(project, manager_type="zmq", manager="dict(context='spawn')")
    done = ding("-m", "serial", "-c", str(config), "--env-step", "300", cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    check_run(elsewhere / "my_walk_dqn_seed0")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_zmq_worker_elsewhere_runs_the_users_env_sent_by_value(
    project: pathlib.Path, elsewhere: pathlib.Path
) -> None:
    keys = project.parent / "keys"
    run_keygen(str(keys))
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    manager = f"dict(endpoint={endpoint!r}, keys_dir={str(keys)!r}, remote_workers=1, envs_per_worker=2)"
    config = write_project(project, manager_type="zmq", manager=manager)
    cannot = run([sys.executable, "-c", "import my_env"], elsewhere)
    assert cannot.returncode != 0 and "No module named 'my_env'" in cannot.stderr  # the worker's folder lacks it
    worker = subprocess.Popen(
        [str(DING), "-m", "worker", "--connect", endpoint, "--keys", str(keys)],
        cwd=elsewhere,
        env=user_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        done = ding("-m", "spec", "-c", str(config), "--check", "200", cwd=project)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "check passed: 200 env steps" in done.stdout and "of the zmq manager" in done.stdout
        _, worker_err = worker.communicate(timeout=60)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.communicate()
    assert worker.returncode == 0, worker_err


MY_POLICY = """
from ding.policy.dqn import DQNPolicy
from ding.utils import POLICY_REGISTRY


@POLICY_REGISTRY.register("my_dqn")
class MyDQNPolicy(DQNPolicy):
    pass
"""


def test_the_users_policy_module_is_found_beside_the_config(project: pathlib.Path, elsewhere: pathlib.Path) -> None:
    config = write_project(project)
    (project / "my_policy.py").write_text(MY_POLICY)
    text = config.read_text().replace(
        'policy=dict(type="dqn")', 'policy=dict(type="my_dqn", import_names=["my_policy"])'
    )
    config.write_text(text)
    done = ding("-m", "spec", "-c", str(config), cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    assert "bytes per stored transition: 82, frame_stack replay buffer" in done.stdout  # planned for my_dqn


def test_a_module_nowhere_says_where_it_was_looked_for(project: pathlib.Path, elsewhere: pathlib.Path) -> None:
    config = write_project(project, module="not_my_env")
    done = ding("-m", "spec", "-c", str(config), cwd=elsewhere)
    assert done.returncode == 2
    error = done.stderr.strip()
    assert (
        error.startswith("ding: error: env.import_names ['not_my_env']: cannot import 'not_my_env'")
        and "\n" not in error
    )
    assert f"the current directory ({project.resolve()}, {elsewhere.resolve()})" in error
    assert "Put not_my_env.py (or the package not_my_env/) beside the config file" in error


@pytest.mark.slow
def test_ray_actors_run_the_users_env(project: pathlib.Path, elsewhere: pathlib.Path) -> None:
    pytest.importorskip("ray")
    config = write_project(project, manager_type="ray", manager="dict()")
    done = ding("-m", "spec", "-c", str(config), "--check", "100", cwd=elsewhere)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "check passed: 100 env steps" in done.stdout and "of the ray manager" in done.stdout
