"""Run stable-baselines3's own VecEnv tests with ding's ``SB3VecEnv`` in place of SB3's vec envs.

SB3's ``tests/test_vec_envs.py`` (from a checkout of github.com/DLR-RM/stable-baselines3; SB3's wheel has no tests)
is copied into a temporary folder with ``DummyVecEnv`` bound to ding's in-process ``base`` manager and
``SubprocVecEnv`` to its ``subprocess`` manager, each under ``SB3VecEnv``; every gymnasium env the tests make runs as
a ding env (``gymnasium_env_fn``). pytest then runs it and prints its summary (README, "stable-baselines3", records
the counts).

Usage: python scripts/sb3_vec_env_tests.py PATH/TO/stable-baselines3/tests/test_vec_envs.py [pytest args]
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys
import tempfile

SWAP = """
# ----- ding's SB3VecEnv in place of SB3's vec envs (scripts/sb3_vec_env_tests.py) -----
from ding.envs.env_manager import create_env_manager as _create_env_manager
from ding.envs.env_manager.vector import gymnasium_env_fn as _gymnasium_env_fn
from ding.envs.bridges.to_sb3 import SB3VecEnv as _SB3VecEnv


def _ding_vec_env(manager_type, env_fns, start_method=None):
    cfg = {"type": manager_type}
    if start_method is not None:
        cfg["context"] = start_method
    manager = _create_env_manager(cfg, [_gymnasium_env_fn(fn) for fn in env_fns])
    return _SB3VecEnv(manager)


def DummyVecEnv(env_fns):
    return _ding_vec_env("base", env_fns)


def SubprocVecEnv(env_fns, start_method=None):
    return _ding_vec_env("subprocess", env_fns, start_method)


VEC_ENV_CLASSES = [DummyVecEnv, SubprocVecEnv]
"""


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    source = pathlib.Path(argv[0])
    text = source.read_text(encoding="utf-8")
    anchor = "\nN_ENVS = "
    if anchor not in text:
        print(f"{source}: no 'N_ENVS = ' line to put ding's vec envs after", file=sys.stderr)
        return 2
    before, after = text.split(anchor, 1)
    line, rest = after.split("\n", 1)
    rest = rest.replace("VEC_ENV_CLASSES = [DummyVecEnv, SubprocVecEnv]\n", "", 1)
    with tempfile.TemporaryDirectory() as folder:
        target = pathlib.Path(folder) / "test_vec_envs_ding.py"
        target.write_text(f"{before}{anchor}{line}\n{SWAP}\n{rest}", encoding="utf-8")
        shutil.copy(source, pathlib.Path(folder) / "test_vec_envs_sb3.py.orig")
        command = [sys.executable, "-m", "pytest", str(target), "-p", "no:cacheprovider", "-o", "addopts=", *argv[1:]]
        return subprocess.call(command, cwd=folder)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
