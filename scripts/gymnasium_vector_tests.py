"""Run gymnasium's own vector env tests with ding's ``ManagerVectorEnv`` in place of ``SyncVectorEnv``.

gymnasium's ``tests/`` folder (from a checkout of github.com/Farama-Foundation/Gymnasium at the release installed;
the PyPI sdist ships no ``tests/vector``) is copied into a temporary folder whose ``conftest.py`` binds
``gymnasium.vector.SyncVectorEnv`` to ``ManagerVectorEnv`` over a manager of the kind given (``subprocess`` by
default: shared-memory rows, one env per worker). pytest then runs ``tests/vector/test_*.py`` without gymnasium's own
``AsyncVectorEnv`` cases and prints its summary (README, "Managers as gymnasium vector envs", records the counts).

Usage: python scripts/gymnasium_vector_tests.py PATH/TO/Gymnasium/tests [manager type] [pytest args]
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys
import tempfile

CONFTEST = """
import gymnasium.vector
import gymnasium.vector.sync_vector_env

from ding.envs.env_manager.vector import ManagerVectorEnv


class DingSyncVectorEnv(ManagerVectorEnv):
    def __init__(self, env_fns, *args, **kwargs):
        super().__init__(env_fns, *args, manager_cfg={{"type": {kind!r}}}, **kwargs)


gymnasium.vector.SyncVectorEnv = DingSyncVectorEnv
gymnasium.vector.sync_vector_env.SyncVectorEnv = DingSyncVectorEnv
"""


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    source = pathlib.Path(argv[0])
    kind = argv[1] if len(argv) > 1 and not argv[1].startswith("-") else "subprocess"
    extra = argv[2:] if len(argv) > 1 and not argv[1].startswith("-") else argv[1:]
    if not (source / "vector").is_dir():
        print(f"{source}: not gymnasium's tests folder (no vector/ in it)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        shutil.copytree(source, pathlib.Path(folder) / "tests")
        (pathlib.Path(folder) / "conftest.py").write_text(CONFTEST.format(kind=kind), encoding="utf-8")
        tests = sorted(str(path) for path in (pathlib.Path(folder) / "tests" / "vector").glob("test_*.py"))
        command = [sys.executable, "-m", "pytest", *tests, "-p", "no:cacheprovider", "-o", "addopts=",
                   "-k", "not Async and not async", *extra]  # fmt: skip
        return subprocess.call(command, cwd=folder)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
