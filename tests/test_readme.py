"""README and the docs pages stay true: README's commands are the ones CI runs, and the wrappers guide's table lists
every wrapper."""

from __future__ import annotations

import pathlib
import re

from ding.envs.env_wrappers import WRAPPER_REGISTRY

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
WRAPPERS_GUIDE = (ROOT / "docs" / "guides" / "wrappers.md").read_text()


def test_wrapper_table_lists_every_registered_wrapper() -> None:
    """The table before the guide's first section (``Writing a wrapper``) names each registered wrapper once."""
    table = WRAPPERS_GUIDE.split("\n## ", 1)[0]
    listed = re.findall(r"^\| `(\w+)` \|", table, flags=re.MULTILINE)
    assert sorted(listed) == sorted(WRAPPER_REGISTRY)


def test_ci_runs_the_readme_test_command() -> None:
    commands = re.findall(r"^(\./scripts/setup\.sh && .+)$", README, flags=re.MULTILINE)
    assert len(commands) == 2, commands
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1] in ci
    assert "ding -m" in commands[0]
