"""The shell examples and quoted outputs of README and the docs pages are what ``ding`` does: every ``ding`` command
line parses with the CLI's own parser, and the error lines and outputs they quote are produced, verbatim, by the
commands they describe."""

from __future__ import annotations

import pathlib
import re
import shlex
from collections.abc import Iterator

import numpy as np
import pytest

from ding.entry.cli import build_parser, check_arguments, main
from ding.envs.bridges.from_gymnasium import DingEnvWrapper
from ding.envs.env_manager import BaseEnvManager
from ding.errors import ActionError

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
README = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
"""README and every docs page (the generated pages are not written in the repository), one after the other."""
CARTPOLE = ROOT / "dizoo/classic_control/cartpole/config"


def fenced_blocks(text: str, languages: tuple[str, ...]) -> Iterator[str]:
    """The bodies of the fenced code blocks of ``text`` in ``languages`` (MyST directives, ```` ```{name} ````, are
    blocks of other languages)."""
    for language, body in re.findall(r"^```(\S*)[^\n]*\n(.*?)^```", text, flags=re.S | re.M):
        if language in languages:
            yield body


def readme_ding_commands() -> list[str]:
    """Every ``ding ...`` command of README's shell blocks (after a ``timeout`` prefix), without its comment."""
    commands = []
    for body in fenced_blocks(README, ("bash", "sh", "shell")):
        for line in body.splitlines():
            line = line.split("  #")[0].split("; ")[0].strip()
            line = re.sub(r"^timeout( --\S+)* \S+ ", "", line)
            if line.startswith("ding "):
                commands.append(line)
    return commands


def readme_lines(prefix: str) -> list[str]:
    """README's lines of text blocks that start with ``prefix``."""
    return [line for body in fenced_blocks(README, ("text",)) for line in body.splitlines() if line.startswith(prefix)]


def test_readme_shows_ding_commands() -> None:
    assert len(readme_ding_commands()) >= 10


@pytest.mark.parametrize("command", readme_ding_commands())
def test_every_readme_ding_command_parses(command: str) -> None:
    """Optional parts README writes in brackets are left out; placeholders (cfg.py, DIR) are fine for the parser."""
    argv = shlex.split(re.sub(r"\s\[[^\]]*\]", "", command))[1:]
    parser = build_parser()
    if argv == ["--version"]:
        with pytest.raises(SystemExit) as stopped:
            parser.parse_args(argv)
        assert stopped.value.code == 0
        return
    args = parser.parse_args(argv)
    check_arguments(parser, args)


def ding_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line ``ding ARGV`` prints on stderr as it exits with status 2."""
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_the_pipeline_mode_refusals_readme_quotes(capsys: pytest.CaptureFixture[str]) -> None:
    quoted = readme_lines("ding: error: policy '")
    printed = [
        ding_error(["-m", "serial", "-c", str(CARTPOLE / "cartpole_ppo_config.py")], capsys),
        ding_error(["-m", "serial_onpolicy", "-c", str(CARTPOLE / "cartpole_dqn_config.py")], capsys),
    ]
    assert printed == quoted


def test_the_unknown_policy_refusal_readme_quotes(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "cfg.py"
    source = (CARTPOLE / "cartpole_dqn_config.py").read_text()
    config.write_text(source.replace('policy=dict(type="dqn")', 'policy=dict(type="dqnn")'))
    (quoted,) = readme_lines("ding: error: policy.type: unknown policy")
    assert ding_error(["-m", "serial", "-c", str(config)], capsys) == quoted


def test_the_action_refusals_readme_quotes() -> None:
    quoted = readme_lines("env 0: action ") + readme_lines("DingEnvWrapper(Pendulum-v1): action ")
    messages = []
    with BaseEnvManager([lambda: DingEnvWrapper(cfg={"env_id": "Pendulum-v1"})]) as manager:
        manager.launch()
        with pytest.raises(ActionError) as refused:
            manager.step({0: np.array([3.0])})
        messages.append(str(refused.value))
    env = DingEnvWrapper(cfg={"env_id": "Pendulum-v1"})
    env.reset()
    with pytest.raises(ActionError) as refused:
        env.step(np.array([np.nan], dtype=np.float32))
    messages.append(str(refused.value))
    env.close()
    assert messages == quoted


def test_the_spec_byte_counts_readme_quotes(capsys: pytest.CaptureFixture[str]) -> None:
    """README's three byte-count lines are those of ``ding -m spec`` on the Pong DQN config."""
    pytest.importorskip("ale_py")
    assert main(["-m", "spec", "-c", str(ROOT / "dizoo/atari/config/pong_dqn_config.py")]) == 0
    printed = capsys.readouterr().out.splitlines()
    quoted = readme_lines("bytes per ")
    assert len(quoted) == 3 and all(line in printed for line in quoted), (quoted, printed[-3:])
